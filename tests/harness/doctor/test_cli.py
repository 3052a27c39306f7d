"""doctor, driven through the memory-router CLI."""

import json
import os
import shutil

import pytest

from harness.install import hookcommand
from support.settings_project import cli, doctor, write_settings


# --------------------------------------------------------------------------- doctor


def test_doctor_reports_a_working_hook(capsys, project, example_cluster_file, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory Index\n" + "- a_slug \u2014 hook\n" * 50)
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    code, checks, report = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert code == 0 and report["ok"] is True
    assert checks["hook installed"]["status"] == "pass"
    assert checks["hook installed"]["hooks"][0]["location"] == "project local"  # a venv's command: local scope
    assert checks["hook installed"]["hooks"][0]["scope"] == "local"
    assert checks["hook runs"]["status"] == "pass"
    assert checks["hook routes"]["status"] == "pass"
    assert checks["cluster file"]["cluster_file"] == str(example_cluster_file)
    assert checks["hooks enabled"]["status"] == "pass"
    assert checks["MEMORY.md size"]["status"] == "pass" and checks["MEMORY.md size"]["lines"] == 51


@pytest.mark.parametrize("command, phrase", [
    ("/nonexistent/bin/memory-router hook # memory-router install", "command not found"),
    ("memory-router hook >/dev/null; exit 2", "erase the user's prompt"),
    ("echo some text; memory-router hook >/dev/null", "plain text"),
    ("echo '{\"additionalContext\": \"x\"}' && memory-router hook >/dev/null", "ignores it"),
])
def test_doctor_reports_a_broken_hook(capsys, project, example_cluster_file, command, phrase, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", str(example_cluster_file))
    monkeypatch.setenv("PATH", os.path.dirname(hookcommand.router_executable()[0]) + os.pathsep + os.environ["PATH"])
    write_settings(project, command)
    code, checks, report = doctor(capsys, "--project", project)
    assert code == 1 and report["ok"] is False
    assert checks["hook runs"]["status"] == "fail"
    assert phrase in checks["hook runs"]["message"]


def test_doctor_catches_a_hook_failing_open(capsys, project, tmp_path, example_cluster_file):
    gone = tmp_path / "clusters.md"
    shutil.copy(example_cluster_file, gone)
    cli(capsys, "install", "--project", project, "--clusters", gone)
    gone.unlink()
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hook runs"]["status"] == "fail" and "failed open" in checks["hook runs"]["message"]
    assert checks["cluster file"]["status"] == "fail"


def test_doctor_catches_a_hook_reading_another_cluster_file(capsys, project, tmp_path, example_cluster_file):
    other = tmp_path / "other.md"
    other.write_text("## Layer 0 - Cluster Router\n\n- solo \u00b7 1 \u00b7 tags: zebra \u00b7 label: z\n\n"
                     "## Layer 1 - Member Lines\n\n### solo\n- zebra_fact - project; zebras\n")
    (project / "memory-router.toml").write_text(f'clusters = "{example_cluster_file}"\n')
    exe = hookcommand.router_executable()[0]
    write_settings(project, f"MEMORY_ROUTER_CLUSTERS='{other}' '{exe}' hook")
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["cluster file"]["cluster_file"] == str(example_cluster_file)
    assert checks["hook runs"]["status"] == "pass"
    assert checks["hook routes"]["status"] == "fail"
    assert "reads another cluster file" in checks["hook routes"]["message"]


def test_doctor_without_a_hook(capsys, project):
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hook installed"]["status"] == "fail"
    assert "memory-router install" in checks["hook installed"]["fix"]
    assert "hook runs" not in checks


def test_doctor_reports_disable_all_hooks_and_two_hooks(capsys, project, example_cluster_file, isolated_env):
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    user = isolated_env / ".claude"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"disableAllHooks": True, "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "memory-router hook"}]}]}}))
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hooks enabled"]["status"] == "fail" and "user" in checks["hooks enabled"]["message"]
    assert checks["one hook"]["status"] == "fail"
    assert {h["location"] for h in checks["hook installed"]["hooks"]} == {"project local", "user"}


def test_doctor_names_claude_config_dir(capsys, project, tmp_path, monkeypatch, isolated_env, example_cluster_file):
    home_settings = isolated_env / ".claude"
    home_settings.mkdir()
    (home_settings / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": hookcommand.router_hook_command(hookcommand.router_executable(),
                                                                            clusters=str(example_cluster_file))}]}]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["CLAUDE_CONFIG_DIR"]["status"] == "warn"
    assert "is ignored" in checks["CLAUDE_CONFIG_DIR"]["message"]
    assert checks["hook installed"]["status"] == "fail"  # the hook is only where such a session never looks


@pytest.mark.parametrize("lines, size, status", [(200, 1, "pass"), (201, 1, "fail"), (10, 3000, "fail")])
def test_doctor_memory_md_against_the_load_limit(capsys, project, tmp_path, lines, size, status):
    memory = tmp_path / "mem"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(("x" * size + "\n") * lines)
    _code, checks, _ = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert checks["MEMORY.md size"]["status"] == status


def test_doctor_default_memory_dir_is_claude_codes(capsys, project, isolated_env):
    expected = isolated_env / ".claude" / "projects" / inst_key(project) / "memory"
    expected.mkdir(parents=True)
    (expected / "MEMORY.md").write_text("# Memory Index\n")
    _code, checks, _ = doctor(capsys, "--project", project)
    assert checks["MEMORY.md size"]["memory_md"] == str(expected / "MEMORY.md")


def inst_key(path):
    from router.store.memorystore import project_key

    return project_key(path)


def test_doctor_table_for_people(capsys, project):
    code, out, _ = cli(capsys, "doctor", "--project", project)
    assert code == 1 and "hook installed" in out and "FAIL" in out


# --------------------------------------------------------------------------- the session reset hook (issue 13)


def test_doctor_checks_that_session_start_makes_the_router_forget(capsys, project, example_cluster_file):
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["session reset hook"]["status"] == "pass"
    assert checks["session reset"]["status"] == "pass", checks["session reset"]["message"]
    from router.hooks.sessionrecord import sessions_dir

    # the probe's throwaway session leaves no record behind
    assert not os.path.isdir(sessions_dir()) or not [n for n in os.listdir(sessions_dir()) if "doctor" in n]


def test_doctor_fails_a_session_start_hook_that_forgets_nothing(capsys, project, example_cluster_file):
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    data = json.loads((project / ".claude" / "settings.local.json").read_text())
    data["hooks"]["SessionStart"][0]["hooks"][0]["command"] = "true # memory-router install"
    (project / ".claude" / "settings.local.json").write_text(json.dumps(data))
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["session reset"]["status"] == "fail"
    assert "compact: sent nothing" in checks["session reset"]["message"]


def test_doctor_warns_when_only_the_prompt_hook_is_wired(capsys, project, example_cluster_file):
    write_settings(project, hookcommand.router_hook_command(hookcommand.router_executable(),
                                                            clusters=example_cluster_file))
    _code, checks, _ = doctor(capsys, "--project", project)
    assert checks["session reset hook"]["status"] == "warn"
    assert "session reset" not in checks


# --------------------------------------------------------------------------- the routing provider (issue 14)


@pytest.mark.parametrize("config_text, status, phrase", [
    ("", "pass", "weighted (built-in)"),
    ('provider = "spec"\n', "pass", "spec (built-in)"),
    ('provider = "no_such_module_here:make"\n', "fail", "no_such_module_here:make (custom)"),
])
def test_doctor_says_which_provider_routes_and_whether_it_loads(capsys, project, example_cluster_file, monkeypatch,
                                                                config_text, status, phrase):
    monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", str(example_cluster_file))
    (project / "memory-router.toml").write_text(config_text, encoding="utf-8")
    code, checks, _report = doctor(capsys, "--project", project)
    assert checks["provider"]["status"] == status
    assert checks["provider"]["message"].startswith(phrase)
    if status == "fail":
        assert code == 1


@pytest.mark.parametrize("learned_text, status, phrase", [
    (None, "pass", "no learned terms yet"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-11-30T10:00:00Z\tlayer1_01\tenv_defender_excludes_dev_dir\tglacial\tlearn\n",
     "pass", "1 learned terms in"),
    ("added\tcluster_id\tslug\tterm\tsource\nnot a time\tlayer1_01\tenv_defender_excludes_dev_dir\tglacial\tlearn\n",
     "fail", "is not a UTC time"),
])
def test_doctor_checks_the_learned_file_while_learning_is_on(capsys, project, example_cluster_file, tmp_path,
                                                              learned_text, status, phrase):
    from router.config import learned_path

    store = tmp_path / "c.md"
    shutil.copy(example_cluster_file, store)
    if learned_text is not None:
        with open(learned_path(store), "w", encoding="utf-8") as handle:
            handle.write(learned_text)
    (project / "memory-router.toml").write_text(f'clusters = "{store.as_posix()}"\nlearning = true\n', encoding="utf-8")
    code, checks, _report = doctor(capsys, "--project", project)
    assert checks["learned terms"]["status"] == status
    assert phrase in checks["learned terms"]["message"]
    if status == "fail":
        assert code == 1
    # learning off: no such check, whatever the file holds
    (project / "memory-router.toml").write_text(f'clusters = "{store.as_posix()}"\n', encoding="utf-8")
    _code, checks, _report = doctor(capsys, "--project", project)
    assert "learned terms" not in checks


def test_doctor_fails_a_budget_the_installed_hook_cannot_hold(capsys, project, example_cluster_file):
    write_settings(project, hookcommand.router_hook_command(hookcommand.router_executable(),
                                                            clusters=example_cluster_file), timeout=3)
    (project / "memory-router.toml").write_text("provider_timeout_ms = 2500\n")
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1 and checks["provider"]["status"] == "fail"
    assert "does not fit the hook's 3 s timeout" in checks["provider"]["message"]


def test_doctor_says_which_store_it_read_and_how(capsys, project, example_cluster_file, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory Index\n")
    (project / "memory-router.toml").write_text(f'clusters = "{example_cluster_file}"\nmemory_dir = "{memory}"\n')
    code, checks, report = doctor(capsys, "--project", project)
    store = checks["store"]["store"]
    assert store == {"cluster_file": str(example_cluster_file),
                     "cluster_file_from": f"clusters in {project / 'memory-router.toml'}",
                     "memory_dir": str(memory), "memory_dir_from": f"memory_dir in {project / 'memory-router.toml'}",
                     "config_file": str(project / "memory-router.toml")}
    assert checks["MEMORY.md size"]["memory_md"] == str(memory / "MEMORY.md")  # from the config, no warning
    code, out, _ = cli(capsys, "doctor", "--project", project, "-v")
    assert f"cluster file: {example_cluster_file}" in out.replace("\n", " ") or "cluster file:" in out


# --------------------------------------------------------------------------- issue 29: verdict first, slim index


def _working(capsys, project, example_cluster_file, tmp_path, index_text):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(index_text)
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    return memory


def test_an_all_pass_doctor_is_its_verdict_in_a_few_lines_and_v_shows_every_check(capsys, project,
                                                                                    example_cluster_file, tmp_path):
    memory = _working(capsys, project, example_cluster_file, tmp_path, "# Memory Index\n- a_slug \u2014 hook\n")
    code, out, _ = cli(capsys, "doctor", "--project", project, "--memory-dir", memory)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("memory-router doctor: all ") and "checks passed" in lines[0]
    assert lines[-1] == "-v shows every check" and len(lines) <= 4 and "hook routes" not in out
    code, verbose, _ = cli(capsys, "doctor", "--project", project, "--memory-dir", memory, "-v")
    assert code == 0 and verbose.splitlines()[0] == lines[0]
    assert "hook routes" in verbose and "MEMORY.md size" in verbose and len(verbose.splitlines()) > 20


def test_a_failing_doctor_says_how_many_first_and_shows_only_what_needs_the_reader(capsys, project):
    code, out, _ = cli(capsys, "doctor", "--project", project)
    first, rest = out.split("\n", 1)
    assert code == 1 and " checks failed" in first and "hook installed" in rest and "FAIL" in rest
    assert "hooks enabled" not in rest  # a passing check: only with -v


SLIM = ("# Memory Index\n\n_Format: slim._\n\n## Always-loaded (confabulation catchers)\n\n"
        "- a_slug \u2014 hook\n\n## Cluster router (routed on demand)\n\n- c01 (3) \u2014 a, b \u2014 label\n")


def test_a_slim_index_with_no_router_fails(capsys, project, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(SLIM)
    code, checks, _report = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert checks["MEMORY.md size"]["slim"] is True
    assert code == 1 and checks["slim index"]["status"] == "fail"
    assert checks["slim index"]["message"].startswith("slim index live, no router")
    assert "slim rollback" in checks["slim index"]["fix"]


def test_a_slim_index_with_a_router_passes(capsys, project, example_cluster_file, tmp_path):
    memory = _working(capsys, project, example_cluster_file, tmp_path, SLIM)
    code, checks, _report = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert checks["slim index"]["status"] == "pass" and code == 0
