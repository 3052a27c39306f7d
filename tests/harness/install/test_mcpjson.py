"""install --mcp / uninstall --mcp on the project's .mcp.json."""

import json
import os
import shutil
import sys

import pytest

from harness.install import hookcommand
from harness.install import mcpjson as mcp_install
from support.settings_project import cli, mcp_file
from router.config import bundled_cluster_file
from harness import project as proj

FOREIGN = (
    b'{\n'
    b'    "mcpServers": {\n'
    b'        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],\n'
    b'                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},\n'
    b'        "docs": {\n'
    b'            "type": "http",\n'
    b'            "url": "https://example.invalid/mcp"\n'
    b'        }\n'
    b'    }\n'
    b'}\n'
)

ORIGINALS = {
    "foreign-servers-hand-formatted": FOREIGN,
    "foreign-servers-crlf": FOREIGN.replace(b"\n", b"\r\n"),
    "foreign-servers-bom-tabs": b"\xef\xbb\xbf" + json.dumps(json.loads(FOREIGN), indent="\t").encode(),
    "one-line": b'{"mcpServers": {"db": {"command": "db-mcp"}}, "x": [1, 2]}',
    "empty-servers": b'{\n  "mcpServers": {}\n}\n',
    "empty-object": b"{}\n",
    "empty-file": b"",
}


@pytest.fixture(autouse=True)
def on_path(router_on_path):
    """Every test here: memory-router on PATH (support.settings_project.router_on_path)."""


@pytest.fixture
def project(bare_project):
    """The shared ``project`` has a .claude/ folder; these tests start before there is one."""
    return bare_project


def backups(project):
    folder = project / ".claude" / "memory-router" / "backups"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def servers(data):
    return mcp_install.parse_mcp_json(data, "x").get("mcpServers", {})


@pytest.mark.parametrize("name", sorted(ORIGINALS))
def test_install_then_uninstall_restores_exact_bytes(capsys, project, name):
    original = ORIGINALS[name]
    mcp_file(project).write_bytes(original)
    code, out, _ = cli(capsys, "install", "--mcp", "--project", project)
    assert code == 0 and "installed the memory-router MCP server" in out
    installed = mcp_file(project).read_bytes()
    entry = servers(installed)["memory-router"]
    assert entry["command"] == "memory-router" and entry["args"] == ["mcp"] and entry["type"] == "stdio"
    before = servers(original)
    assert {k: v for k, v in servers(installed).items() if k != "memory-router"} == before
    assert [b.read_bytes() for b in backups(project)] == ([original] if original else [b""])

    code, out, _ = cli(capsys, "uninstall", "--mcp", "--project", project)
    assert code == 0 and "restored, byte for byte" in out
    assert mcp_file(project).read_bytes() == original


def test_foreign_servers_keep_their_bytes_in_the_installed_file(capsys, project):
    mcp_file(project).write_bytes(FOREIGN)
    assert cli(capsys, "install", "--mcp", "--project", project)[0] == 0
    installed = mcp_file(project).read_text(encoding="utf-8")
    for line in FOREIGN.decode().splitlines()[:-3]:  # all but the closing braces, where ours is appended
        assert line in installed.splitlines()


def test_install_into_a_missing_file_and_uninstall_deletes_it(capsys, project):
    assert cli(capsys, "install", "--mcp", "--project", project)[0] == 0
    assert mcp_file(project).is_file() and backups(project) == []
    assert list(servers(mcp_file(project).read_bytes())) == ["memory-router"]
    code, out, _ = cli(capsys, "uninstall", "--mcp", "--project", project)
    assert code == 0 and "deleted" in out
    assert not mcp_file(project).exists()
    assert len(backups(project)) == 1


def test_install_mcp_leaves_settings_json_alone(capsys, project):
    assert cli(capsys, "install", "--mcp", "--project", project)[0] == 0
    assert not (project / ".claude" / "settings.json").exists()


def test_second_install_changes_nothing(capsys, project):
    mcp_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--mcp", "--project", project)
    first = mcp_file(project).read_bytes()
    mtime = mcp_file(project).stat().st_mtime_ns
    code, out, _ = cli(capsys, "install", "--mcp", "--project", project)
    assert code == 0 and "already in" in out and "nothing changed" in out
    assert mcp_file(project).read_bytes() == first and mcp_file(project).stat().st_mtime_ns == mtime
    assert len(backups(project)) == 1


def test_an_updated_entry_still_uninstalls_to_the_original_bytes(capsys, project, tmp_path):
    clusters = project / "clusters.md"
    shutil.copy(bundled_cluster_file(), clusters)
    mcp_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--mcp", "--project", project)
    code, out, _ = cli(capsys, "install", "--mcp", "--project", project, "--clusters", clusters)
    assert code == 0 and "updated" in out
    assert servers(mcp_file(project).read_bytes())["memory-router"]["args"] == [
        "mcp", "--clusters", "${CLAUDE_PROJECT_DIR:-.}/clusters.md"]
    assert cli(capsys, "uninstall", "--mcp", "--project", project)[0] == 0
    assert mcp_file(project).read_bytes() == FOREIGN


def test_uninstall_after_a_hand_edit_removes_only_ours_and_keeps_the_edit(capsys, project):
    mcp_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--mcp", "--project", project)
    doc = json.loads(mcp_file(project).read_bytes())
    doc["mcpServers"]["added-later"] = {"command": "later-mcp"}
    mcp_file(project).write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")
    code, out, _ = cli(capsys, "uninstall", "--mcp", "--project", project)
    assert code == 0 and "every other server kept" in out
    after = servers(mcp_file(project).read_bytes())
    assert list(after) == ["github", "docs", "added-later"]


@pytest.mark.parametrize("broken, where", [
    (b'{\n  "mcpServers": {\n    "x": {"command": "y",}\n  }\n}\n', ":3:26: invalid JSON"),
    (b'{"mcpServers": []}', ':1: "mcpServers" must be an object'),
    (b'{"mcpServers": {"x": "npx y"}}', ':1: "mcpServers.x" must be an object'),
    (b'["mcpServers"]', ":1:1: .mcp.json must be a JSON object"),
    (b'{"a": "\xff"}', ":1: .mcp.json is not valid UTF-8"),
])
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_broken_file_is_left_untouched_with_exit_2(capsys, project, broken, where, command):
    mcp_file(project).write_bytes(broken)
    code, _, err = cli(capsys, command, "--mcp", "--project", project)
    assert code == 2
    assert f"{mcp_file(project)}{where}" in err
    assert "nothing was changed" in err and "Traceback" not in err
    assert mcp_file(project).read_bytes() == broken
    assert backups(project) == []


@pytest.mark.parametrize("existing, message", [
    ({"memory-router": {"command": "node", "args": ["my-own-memory-router.js"]}},
     "mcpServers.memory-router is an entry memory-router did not write"),
    ({"memory": {"command": "/opt/venv/bin/memory-router", "args": ["mcp"]}},
     "mcpServers.memory already runs memory-router mcp"),
    ({"mem": {"command": "python3", "args": ["-P", "-m", "router", "mcp"]}},
     "mcpServers.mem already runs memory-router mcp"),
])
def test_install_refuses_next_to_an_entry_it_did_not_write(capsys, project, existing, message):
    data = json.dumps({"mcpServers": existing}).encode()
    mcp_file(project).write_bytes(data)
    code, _, err = cli(capsys, "install", "--mcp", "--project", project)
    assert code == 1 and message in err and "Nothing was written" in err
    assert mcp_file(project).read_bytes() == data


def test_uninstall_leaves_a_foreign_entry_of_our_name(capsys, project):
    data = b'{"mcpServers": {"memory-router": {"command": "node", "args": ["x.js"]}}}'
    mcp_file(project).write_bytes(data)
    code, out, _ = cli(capsys, "uninstall", "--mcp", "--project", project)
    assert code == 0 and "not in" in out and "not ours; left as is" in out
    assert mcp_file(project).read_bytes() == data


def test_dry_run_prints_the_diff_and_writes_nothing(capsys, project):
    mcp_file(project).write_bytes(FOREIGN)
    code, out, err = cli(capsys, "install", "--mcp", "--project", project, "--dry-run")
    assert code == 0 and '+        "memory-router": {' in out and "dry run" in err
    assert mcp_file(project).read_bytes() == FOREIGN and backups(project) == []


def test_a_symlinked_mcp_json_stays_a_link(capsys, project, tmp_path):
    target = tmp_path / "dotfiles" / "mcp.json"
    target.parent.mkdir()
    target.write_bytes(FOREIGN)
    mcp_file(project).symlink_to(target)
    assert cli(capsys, "install", "--mcp", "--project", project)[0] == 0
    assert mcp_file(project).is_symlink() and "memory-router" in servers(target.read_bytes())
    assert cli(capsys, "uninstall", "--mcp", "--project", project)[0] == 0
    assert mcp_file(project).is_symlink() and target.read_bytes() == FOREIGN


@pytest.mark.parametrize("args, message", [
    (["install", "--mcp", "--user"], "--mcp writes the project's .mcp.json"),
    (["uninstall", "--mcp", "--user"], "--mcp writes the project's .mcp.json"),
    (["install", "--mcp", "--project", "/no/such/dir"], "project directory does not exist"),
    (["install", "--mcp", "--clusters", "/no/such/clusters.md"], "--clusters file does not exist"),
])
def test_bad_options_exit_2(capsys, args, message):
    code, _, err = cli(capsys, *args)
    assert code == 2 and message in err


@pytest.mark.parametrize("entry, ours", [
    ({"command": "/v/bin/memory-router", "args": ["mcp"]}, True),
    ({"command": "C:\\v\\Scripts\\memory-router.exe", "args": ["mcp", "--clusters", "c.md"]}, True),
    ({"command": "/usr/bin/python3", "args": ["-P", "-m", "router", "mcp"]}, True),
    # the bare-interpreter form install --mcp writes when no console script is found
    ({"command": "/v/bin/python", "args": ["-P", "-m", "harness", "mcp"]}, True),
    ({"command": "/v/bin/python3.11", "args": ["-I", "-m", "harness", "mcp", "--clusters", "c.md"]}, True),
    ({"command": "/v/bin/python", "args": ["-P", "-m", "harness", "hook"]}, False),
    ({"command": "/v/bin/python", "args": ["-P", "-m", "harness.sentinel", "mcp"]}, False),
    ({"command": "/v/bin/memory-router", "args": ["hook"]}, False),
    ({"command": "/v/bin/memory-router"}, False),
    ({"command": "npx", "args": ["memory-router", "mcp"]}, False),
    ({"command": "/usr/bin/python3", "args": ["-m", "router", "route"]}, False),
    ({"url": "https://x"}, False),
    ("memory-router mcp", False),
])
def test_runs_our_server(entry, ours):
    assert mcp_install.runs_our_server(entry) is ours


def test_install_record_is_kept_beside_the_settings_installers(capsys, project):
    cli(capsys, "install", "--mcp", "--project", project)
    record = json.loads((project / ".claude" / "memory-router" / "mcp.json").read_text(encoding="utf-8"))
    assert record["role"] == "mcp" and record["settings"] == str(mcp_file(project))
    assert record["original_existed"] is False
    assert proj.state_dir_for(proj.project_settings_path(project)) == str(project / ".claude" / "memory-router")


def test_the_bare_interpreter_form_installs_reinstalls_uninstalls_and_is_seen_by_doctor(capsys, project, monkeypatch):
    """No console script found: install --mcp writes ``python -P -m harness mcp``. Its own entry
    must then be recognised: a second install changes nothing (it once refused, "an entry
    memory-router did not write"), a changed install updates it, uninstall gives back the exact
    original bytes, and doctor finds and starts the server."""
    from harness.doctor import mcp as mcp_doctor

    monkeypatch.setattr(hookcommand, "router_executable", lambda: [sys.executable, "-P", "-m", "harness"])
    mcp_file(project).write_bytes(FOREIGN)
    (project / "brain").mkdir()
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")

    # install --mcp refuses this personal path for the shared file; the entry is one an earlier
    # release wrote (or a hand copy of it), so it is written here with the installer's own transform
    bare = [sys.executable, "-P", "-m", "harness"]
    assert mcp_install.install(str(project), mcp_install.server_entry(bare))[0] == "added"
    entry = servers(mcp_file(project).read_bytes())["memory-router"]
    assert entry["command"] == sys.executable and entry["args"] == ["-P", "-m", "harness", "mcp"]
    assert mcp_install.install(str(project), mcp_install.server_entry(bare))[0] == "unchanged"
    clusters = project / "brain" / "memory-layer1-clusters.md"
    assert mcp_install.install(str(project), mcp_install.server_entry(bare, clusters=clusters))[0] == "updated"

    (check,) = mcp_doctor.doctor_checks(str(project))
    assert check["status"] == "pass", check
    assert check["tools"] == list(mcp_install_tool_names())

    code, out, _ = cli(capsys, "uninstall", "--mcp", "--project", project)
    assert code == 0 and "restored, byte for byte" in out
    assert mcp_file(project).read_bytes() == FOREIGN


def mcp_install_tool_names():
    from harness.mcp.store import TOOL_NAMES

    return TOOL_NAMES


def test_the_shared_file_names_the_portable_command_and_project_paths(capsys, project):
    # issue 36 item 5: .mcp.json is committed; it named this machine's venv
    (project / "brain").mkdir()
    shutil.copy(bundled_cluster_file(), project / "brain" / "memory-layer1-clusters.md")
    code, out, _ = cli(capsys, "install", "--mcp", "--project", project, "--clusters",
                       project / "brain" / "memory-layer1-clusters.md")
    assert code == 0 and "each teammate needs memory-router on PATH" in out
    entry = servers(mcp_file(project).read_bytes())["memory-router"]
    assert entry["command"] == "memory-router"
    assert entry["args"] == ["mcp", "--clusters", "${CLAUDE_PROJECT_DIR:-.}/brain/memory-layer1-clusters.md"]
    assert str(project) not in mcp_file(project).read_text() and os.environ["HOME"] not in mcp_file(project).read_text()


def test_without_memory_router_on_path_the_shared_file_is_refused(capsys, project, monkeypatch):
    import shlex

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, _out, err = cli(capsys, "install", "--mcp", "--project", project)
    assert code == 1 and "is a path on this machine only" in err and "Nothing was written" in err
    assert not mcp_file(project).exists()
    personal = err[err.index("claude mcp add"):].rstrip(")\n")
    assert shlex.split(personal)[:6] == ["claude", "mcp", "add", "--scope", "local", "memory-router"]
    assert shlex.split(personal)[-1] == "mcp"


def test_a_clusters_file_outside_the_project_is_refused_for_the_shared_file(capsys, project, tmp_path):
    outside = tmp_path / "elsewhere.md"
    shutil.copy(bundled_cluster_file(), outside)
    code, _out, err = cli(capsys, "install", "--mcp", "--project", project, "--clusters", outside)
    assert code == 1 and "is outside the project" in err and not mcp_file(project).exists()
