"""Doctor's MCP check (harness.doctor.mcp): optional when absent, the installed server started and
its tools listed, a broken server or file failed."""

import json
import shutil

import pytest

from harness.doctor import mcp as mcp_doctor
from support.settings_project import cli, mcp_file
from router.config import bundled_cluster_file


@pytest.fixture
def project(bare_project):
    """The shared ``project`` has a .claude/ folder; these tests start before there is one."""
    return bare_project


def doctor_mcp(project, capsys):
    code, out, _ = cli(capsys, "doctor", "--project", project, "--json")
    return [c for c in json.loads(out)["checks"] if c["name"] == "mcp server"]


def test_doctor_says_the_server_is_optional_when_not_installed(capsys, project):
    (check,) = doctor_mcp(project, capsys)
    assert check["status"] == "info" and "memory-router install --mcp" in check["message"]


def test_doctor_starts_the_installed_server_and_lists_its_tools(capsys, project, router_on_path):
    (project / "brain").mkdir()
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")
    assert cli(capsys, "install", "--mcp", "--project", project)[0] == 0
    (check,) = doctor_mcp(project, capsys)
    assert check["status"] == "pass", check
    assert check["tools"] == ["route", "search_memory", "get_memory", "record_feedback"]
    assert check["cluster_file"] == str(project / "brain" / "memory-layer1-clusters.md")


@pytest.mark.parametrize("entry, message", [
    ({"command": "/no/such/memory-router", "args": ["mcp"]}, "did not start or answer"),
    ({"command": "MEMORY_ROUTER_EXE", "args": ["mcp", "--clusters", "/no/such/clusters.md"]},
     "route failed: Error executing tool route: /no/such/clusters.md: cannot read the cluster file"),
])
def test_doctor_fails_a_server_that_does_not_work(capsys, project, entry, message):
    from harness.install.hookcommand import router_executable

    if entry["command"] == "MEMORY_ROUTER_EXE":
        entry = dict(entry, command=router_executable()[0])
    mcp_file(project).write_text(json.dumps({"mcpServers": {"memory-router": entry}}), encoding="utf-8")
    checks = mcp_doctor.doctor_checks(str(project))
    assert [c["status"] for c in checks] == ["fail"]
    assert message in checks[0]["message"]


def test_doctor_fails_a_broken_mcp_json(project):
    mcp_file(project).write_bytes(b"{nope")
    (check,) = mcp_doctor.doctor_checks(str(project))
    assert check["status"] == "fail" and "invalid JSON" in check["message"]


def test_doctor_fails_two_servers_running_memory_router(project):
    entry = {"command": "/v/bin/memory-router", "args": ["mcp"]}
    mcp_file(project).write_text(json.dumps({"mcpServers": {"a": entry, "b": entry}}), encoding="utf-8")
    checks = mcp_doctor.doctor_checks(str(project), run=False)
    assert checks[0]["status"] == "fail" and "2 entries" in checks[0]["message"]


def test_doctor_expands_claude_codes_variables_in_the_entry():
    environ = {"CLAUDE_PROJECT_DIR": "/p"}
    assert mcp_doctor._expand("${CLAUDE_PROJECT_DIR}/c.md", environ) == "/p/c.md"
    assert mcp_doctor._expand("${MISSING:-/d}/c.md", environ) == "/d/c.md"
    assert mcp_doctor._expand("$PLAIN", environ) == "$PLAIN"
