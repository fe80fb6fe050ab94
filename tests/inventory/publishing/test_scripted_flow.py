"""The README's scripted publish (export, edit, check, import, publish), run verbatim.

An import is a draft: the live config it never touched must not look like a
hand edit afterwards. Run against a live config in both ``vnpus`` shapes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from apps.inventory.choices import DeviceConfigSource
from apps.inventory.liveconfig import deviceconfig_drift
from apps.inventory.models import DeviceConfigVersion
from tests.inventory.publishing.manage_subprocess import ROOT, run_shell

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FIXTURES = ROOT / "tests" / "fixtures"
MARKER = "<!-- scripted-publish:"


def readme_block() -> str:
    """The bash block that follows the scripted-publish marker in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text[text.index(MARKER) :]
    match = re.search(r"```bash\n(.*?)```", after, re.DOTALL)
    assert match, "README.md: no bash block after the scripted-publish marker"
    return match.group(1)


def editor(tmp_path: Path) -> Path:
    """An $EDITOR that changes the memory of template vir05_1c_8g to 9216 MB."""
    script = tmp_path / "edit.sh"
    script.write_text(
        "#!/bin/sh\n"
        "sed -i '/name: vir05_1c_8g/{n;s/memory: 8192/memory: 9216/}' \"$1\"\n",
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
def test_readme_scripted_flow_publishes(
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

    # when the README's block runs verbatim
    done = run_shell(
        readme_block(),
        cwd=work,
        CLUSTER=cluster.name,
        EDITOR=str(editor(tmp_path)),
        REASON="vir05 gets 9 GB",
    )

    # then every step succeeded and the cluster has the edit, in its own shape
    assert done.returncode == 0, done.stdout + done.stderr
    live = live_text()
    assert live == original.replace(
        "name: vir05_1c_8g\n    memory: 8192", "name: vir05_1c_8g\n    memory: 9216"
    ).replace(
        "name: vir05_1c_8g\n      memory: 8192", "name: vir05_1c_8g\n      memory: 9216"
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
