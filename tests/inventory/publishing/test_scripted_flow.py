"""The documented scripted publish (export, edit, check, import, publish), run verbatim.

The block is read from docs/templates.md, after its scripted-publish marker.

An import is a draft: the live config it never touched must not look like a
hand edit afterwards. Run against a live config in both ``vnpus`` shapes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apps.inventory.choices import DeviceConfigSource
from apps.inventory.deviceconfig.liveconfig import deviceconfig_drift
from apps.inventory.models import DeviceConfigVersion
from tests.inventory.publishing.manage_subprocess import ROOT, run_shell

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FIXTURES = ROOT / "tests" / "fixtures"
MARKER = "<!-- scripted-publish:"


def documented_block() -> str:
    """The bash block that follows the scripted-publish marker in docs/templates.md."""
    text = (ROOT / "docs" / "templates.md").read_text(encoding="utf-8")
    after = text[text.index(MARKER) :]
    match = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert match, "docs/templates.md: no bash block after the scripted-publish marker"
    return match.group(1)


def editor(tmp_path: Path) -> Path:
    """An $EDITOR that changes the memory of template vir10_3c_16g to 15360 MB.

    No running pod holds vir10_3c_16g, so the publish breaks none (one that
    did would need ``--confirm-breaking``, see ``test_cli.py``).
    """
    script = tmp_path / "edit.sh"
    script.write_text(
        "#!/bin/sh\n"
        "sed -i '/name: vir10_3c_16g/{n;s/memory: 16384/memory: 15360/}' \"$1\"\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("fixture", "shape_line"),
    [
        ("device-config-list.yaml", "vnpus:\n# Ascend 910B4\n- chipName: 910B4"),
        ("device-config-wrapper.yaml", "vnpus:\n  hamiVnpuCore: false\n  configs:"),
    ],
)
def test_documented_scripted_flow_publishes(
    fixture, shape_line, connect, hand_edit, set_images, live_text, tmp_path
):
    # given a live config of this shape, which the first sync adopts, and
    # components that read it
    original = (FIXTURES / fixture).read_text(encoding="utf-8")
    hand_edit(original)
    if "wrapper" in fixture:
        set_images()
    cluster = connect()
    assert live_text() == original
    work = tmp_path / "work"
    work.mkdir()

    # when the documented block runs verbatim
    done = run_shell(
        documented_block(),
        cwd=work,
        CLUSTER=cluster.name,
        EDITOR=str(editor(tmp_path)),
        REASON="vir10 gets 15 GB",
    )

    # then every step succeeded and the cluster has the edit, in its own shape
    assert done.returncode == 0, done.stdout + done.stderr
    live = live_text()
    assert live == original.replace(
        "name: vir10_3c_16g\n    memory: 16384", "name: vir10_3c_16g\n    memory: 15360"
    ).replace(
        "name: vir10_3c_16g\n      memory: 16384",
        "name: vir10_3c_16g\n      memory: 15360",
    )
    assert live != original
    assert shape_line in live
    sources = list(
        DeviceConfigVersion.objects.filter(cluster=cluster)
        .order_by("number")
        .values_list("source", flat=True)
    )
    assert sources == [
        DeviceConfigSource.ADOPTED,
        DeviceConfigSource.IMPORTED,
        DeviceConfigSource.PUBLISHED,
    ]
    assert deviceconfig_drift(cluster)["in_sync"]
