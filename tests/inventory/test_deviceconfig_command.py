"""The ``manage.py deviceconfig`` contract that scripts rely on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.inventory.models import ChipType, Cluster, DeviceConfigVersion, Template

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def _manage(
    *args: str, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.test"}
    if database_url:
        env["DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.processes
def test_check_exit_codes(fixtures_dir, tmp_path):
    # given a valid file, when checked, then exit 0 and the slot-count warnings are printed
    ok = _manage(
        "deviceconfig", "check", str(fixtures_dir / "device-config-wrapper.yaml")
    )
    assert ok.returncode == 0, ok.stderr
    assert "warning:" in ok.stdout
    assert "7" in ok.stdout
    # given a file with two errors, then exit 1 with one line per error
    bad = tmp_path / "bad.yaml"
    text = (fixtures_dir / "device-config-list.yaml").read_text()
    bad.write_text(
        text.replace("memory: 3072", "memory: 0").replace(
            "memoryCapacity: 24576", "memoryCapacity: 20000"
        )
    )
    result = _manage("deviceconfig", "check", str(bad))
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) >= 2
    assert any("memory" in e and "vir01" in e for e in errors)
    assert any("memoryCapacity" in e or "memoryAllocatable" in e for e in errors)


@pytest.mark.processes
def test_check_unreadable_and_garbage(tmp_path):
    assert (
        _manage("deviceconfig", "check", str(tmp_path / "missing.yaml")).returncode == 1
    )
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("vnpus: [\n  - {chipName: 310P3\n")
    result = _manage("deviceconfig", "check", str(garbage))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr


@pytest.mark.processes
@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"vnpus: " + b"[" * 5000 + b"]" * 5000, b"nested deeper than 64 levels"),
        (b"vnpus:\n- chipName: 310P3\xff\xfe\n", b"not UTF-8 (byte 0xff at offset"),
    ],
    ids=["nested-5000", "latin-1"],
)
@pytest.mark.parametrize("verb", ["check", "import"])
def test_deep_or_non_utf8_files_fail_with_a_message_not_a_traceback(
    tmp_path, content, says, verb
):
    # given a file nested 5,000 levels deep, or not UTF-8
    path = tmp_path / "device-config.yaml"
    path.write_bytes(content)
    # when checked or imported
    extra = ["--cluster", "lab"] if verb == "import" else []
    result = _manage("deviceconfig", verb, str(path), *extra)
    # then exit 1 with one clear line, no traceback
    assert result.returncode == 1
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert says.decode() in result.stderr


@pytest.mark.parametrize(
    "name", ["device-config-list.yaml", "device-config-wrapper.yaml"]
)
def test_import_then_export_round_trips(fixtures_dir, capsys, name):
    source = (fixtures_dir / name).read_text()
    call_command("deviceconfig", "import", str(fixtures_dir / name), "--cluster", "lab")
    cluster = Cluster.objects.get(name="lab")
    assert DeviceConfigVersion.objects.get(cluster=cluster).source == "imported"
    assert set(
        ChipType.objects.filter(cluster=cluster).values_list("common_word", flat=True)
    ) == {"Ascend910B4", "Ascend310P"}
    assert Template.objects.filter(chip_type__cluster=cluster).count() == 5
    capsys.readouterr()
    call_command("deviceconfig", "export", "--cluster", "lab")
    exported = capsys.readouterr().out
    assert yaml.safe_load(exported) == yaml.safe_load(source)
    if name.endswith("wrapper.yaml"):
        assert "hamiVnpuCore" in exported
        assert "cambricon" in exported
    else:
        assert "# Ascend 310P3" in exported  # comments survive


def test_import_refuses_invalid_and_writes_nothing(fixtures_dir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        (fixtures_dir / "device-config-list.yaml")
        .read_text()
        .replace("name: vir02", "name: vir77")
    )
    with pytest.raises(CommandError, match="vir77"):
        call_command("deviceconfig", "import", str(bad), "--cluster", "lab")
    assert not Cluster.objects.filter(name="lab").exists()


def test_fit_prints_template_whole_card_or_fails(fixtures_dir, capsys):
    call_command(
        "deviceconfig",
        "import",
        str(fixtures_dir / "device-config-list.yaml"),
        "--cluster",
        "lab",
    )
    capsys.readouterr()
    for memory, first_word in [
        ("3072", "vir01"),
        ("5000", "vir02"),
        ("8193", "vir10_3c_16g"),
    ]:
        cw = "Ascend910B4" if memory == "8193" else "Ascend310P"
        call_command(
            "deviceconfig",
            "fit",
            "--cluster",
            "lab",
            "--chip-type",
            cw,
            "--memory",
            memory,
        )
        assert capsys.readouterr().out.split()[0] == first_word
    call_command(
        "deviceconfig",
        "fit",
        "--cluster",
        "lab",
        "--chip-type",
        "Ascend310P",
        "--memory",
        "12289",
    )
    assert "whole card" in capsys.readouterr().out
    with pytest.raises(CommandError, match="memoryCapacity"):
        call_command(
            "deviceconfig",
            "fit",
            "--cluster",
            "lab",
            "--chip-type",
            "Ascend310P",
            "--memory",
            "30000",
        )


@pytest.mark.processes
def test_fit_exit_code_from_the_shell(fixtures_dir, tmp_path):
    # a database of its own: the subprocess cannot see the test transaction
    db = f"sqlite:///{tmp_path / 'cli.sqlite3'}"
    assert _manage("migrate", "--noinput", database_url=db).returncode == 0
    imported = _manage(
        "deviceconfig",
        "import",
        str(fixtures_dir / "device-config-list.yaml"),
        "--cluster",
        "lab",
        database_url=db,
    )
    assert imported.returncode == 0, imported.stderr
    ok = _manage(
        "deviceconfig",
        "fit",
        "--cluster",
        "lab",
        "--chip-type",
        "Ascend310P",
        "--memory",
        "3072",
        database_url=db,
    )
    assert ok.returncode == 0
    assert ok.stdout.split()[0] == "vir01"
    result = _manage(
        "deviceconfig",
        "fit",
        "--cluster",
        "lab",
        "--chip-type",
        "Ascend310P",
        "--memory",
        "99999",
        database_url=db,
    )
    assert result.returncode == 1
    assert "invalid" in result.stderr.lower() or "memoryCapacity" in result.stderr
