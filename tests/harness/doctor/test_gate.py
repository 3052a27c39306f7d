"""Doctor's checks of the citation gate (harness.doctor.gate): where it is wired, its matcher, and
the refusal probe in a scratch project."""

import json

import pytest

from harness.install import gate as gi
from harness.install import hookcommand
from support.settings_project import cli, settings_file


def doctor_checks(capsys, project):
    code, out, _ = cli(capsys, "doctor", "--project", project, "--json")
    data = json.loads(out)
    checks = data["checks"] if isinstance(data, dict) else data
    return {c["name"]: c for c in checks if c["name"].startswith("citation gate")}


def test_doctor_reports_an_installed_working_gate(capsys, project):
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    checks = doctor_checks(capsys, project)
    assert checks["citation gate"]["status"] == "pass"
    assert "Write|Edit|MultiEdit" in checks["citation gate"]["message"]
    assert checks["citation gate refuses"]["status"] == "pass"


def test_doctor_says_the_gate_is_optional_when_absent(capsys, project):
    checks = doctor_checks(capsys, project)
    assert checks == {"citation gate": {"name": "citation gate", "status": "info",
                                        "message": "not installed (optional): memory-router install --gate"}}


@pytest.mark.parametrize("command, phrase", [
    ("true " + gi.GATE_MARK, "was not denied"),
    ("exit 3 " + gi.GATE_MARK, "exited 3"),
    ("echo '{}' " + gi.GATE_MARK, "citing the probe ledger's own D-001 printed"),
])
def test_doctor_catches_a_gate_that_does_not_refuse(capsys, project, command, phrase):
    settings = {"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [hookcommand.handler(command, 10)]}]}}
    settings_file(project).write_text(json.dumps(settings), encoding="utf-8")
    checks = doctor_checks(capsys, project)
    assert checks["citation gate refuses"]["status"] == "fail"
    assert phrase in checks["citation gate refuses"]["message"]
    assert checks["citation gate matcher"]["status"] == "warn"


def test_doctor_skips_the_refusal_probe_for_a_custom_pattern(capsys, project):
    (project / "memory-router.toml").write_text('citation_id_pattern = "ADR-\\\\d+"\n', encoding="utf-8")
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    checks = doctor_checks(capsys, project)
    assert checks["citation gate refuses"]["status"] == "info"
