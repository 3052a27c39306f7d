"""memory-router replay: the report, its 80-column output, --json, the selection options and --suite."""

import json
import os
import re
import shutil

import pytest

from harness.cli import main
from router.config import bundled_cluster_file
from support.replay_sessions import write_session

SETX = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"
SETX_SLUG = "env_bash_tool_env_var_caching"
CLOUDFLARE = "the Cloudflare Workers build says PUBLIC_API_URL is undefined but I set it as a secret"
CLOUDFLARE_SLUG = "env_cloudflare_workers_build_secret_vs_text"
QUIET = "can you explain what a closure is in JavaScript?"
THANKS = "thanks, that worked!"
HOOKS_SLUG = "feedback_hooks_fail_open"


@pytest.fixture
def store(tmp_path):
    """A copy of the bundled store with its flat MEMORY.md, so the cost is computed."""
    example = os.path.dirname(bundled_cluster_file())
    target = tmp_path / "store"
    shutil.copytree(example, target)
    return target


@pytest.fixture
def history(tmp_path):
    directory = tmp_path / "history"
    directory.mkdir()
    # Session a: sent and met; held and met; a miss (nothing routed); a quiet prompt.
    write_session(directory, "aaaa-1", [(SETX, [SETX_SLUG]), (THANKS, [SETX_SLUG]), (THANKS, [HOOKS_SLUG]),
                                        (QUIET, [])], start=1796058991.0)
    # Session b: a quiet prompt that routes (no evidence, something sent), a compaction, a miss again.
    write_session(directory, "bbbb-2", [(CLOUDFLARE, []), "compact", (THANKS, [HOOKS_SLUG])], start=1796158991.0)
    return directory


def run_json(capsys, *args):
    code = main(["replay", *map(str, args), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_the_report_figures(capsys, history, store):
    report = run_json(capsys, history, "--clusters", store / "memory-layer1-clusters.md", "--memory-dir", store)
    assert (report["sessions"], report["prompts"], report["not_routed_turns"]) == (2, 6, 1)
    assert report["span"]["first"].startswith("2026-11-30") and report["span"]["last"] > report["span"]["first"]
    evidence = report["evidence"]
    assert (evidence["prompts"], evidence["needs"], evidence["sent"], evidence["held"]) == (4, 4, 1, 1)
    assert evidence["recall"] == 0.5
    assert [(m["memory"], m["at"]) for m in evidence["misses"]] == [(HOOKS_SLUG, "aaaa-1.jsonl:23"),
                                                                    (HOOKS_SLUG, "bbbb-2.jsonl:13")]
    assert evidence["misses"][0]["misses_of_memory"] == 2 and evidence["misses"][0]["why"]
    quiet = report["quiet"]
    assert (quiet["prompts"], quiet["routed"]) == (2, 1)
    assert quiet["listed"][0]["sent"] == [CLOUDFLARE_SLUG] and "not always false priming" in quiet["note"]
    routed = report["routed"]
    assert routed["prompts"] == 2 and routed["share"] == round(2 / 6, 4)


def test_the_cost_uses_the_sessions_calls_and_compactions(capsys, history, store):
    report = run_json(capsys, history, "--clusters", store / "memory-layer1-clusters.md", "--memory-dir", store)
    cost = report["cost"]
    sizes = cost["sizes"]
    flat = (store / "MEMORY.md").read_bytes()
    assert sizes["flat_bytes"] == len(flat) and 0 < sizes["slim_bytes"] < sizes["flat_bytes"]
    a, b = cost["per_session"]
    # a: 2 + 2 + 2 + 1 calls (a Read each, then the reply); b: 1 + 2 calls, and one /compact.
    assert (a["calls"], a["compactions"], b["calls"], b["compactions"]) == (7, 0, 3, 1)
    assert a["flat_bytes"] == 7 * sizes["flat_bytes"]
    # The one injection of session a (prompt 1) is in all 7 of its calls.
    assert a["injection_bytes"] % 7 == 0 and a["slim_bytes"] == 7 * sizes["slim_bytes"] + a["injection_bytes"]
    total = cost["total"]
    assert total["flat_bytes"] == a["flat_bytes"] + b["flat_bytes"]
    assert total["ratio"] == round(total["slim_bytes"] / total["flat_bytes"], 4)


def test_without_a_memory_directory_the_cost_says_why(capsys, history, tmp_path):
    report = run_json(capsys, history, "--memory-dir", tmp_path / "nowhere")
    assert report["cost"]["total"] is None and "memory directory does not exist" in report["cost"]["problem"]


def test_session_since_and_limit_choose_sessions(capsys, history):
    assert run_json(capsys, history, "--session", "bbbb")["sessions"] == 1
    assert run_json(capsys, history, "--since", "2026-12-01")["sessions"] == 1
    os.utime(history / "aaaa-1.jsonl", (1, 1))
    report = run_json(capsys, history, "--limit", "1")
    assert report["sessions"] == 1 and report["prompts"] == 2


def test_rich_output_fits_80_columns_and_cuts_no_word(capsys, history, store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["replay", str(history), "--clusters", str(store / "memory-layer1-clusters.md"),
                 "--memory-dir", str(store)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # Paths are printed whole, as every command prints them, so they can be copied.
    assert max(len(line) for line in lines if not line.startswith(("transcripts: ", "cluster file: "))) <= 80
    assert "evidence recall: 50.0%" in out and "Misses, worst first" in out and "cost:" in out
    # Every slug stays whole on one line.
    for slug in (HOOKS_SLUG, CLOUDFLARE_SLUG):
        assert any(slug in line for line in lines), slug
    words = set(re.findall(r"[a-z_]{6,}", out))
    assert not any(w.startswith(HOOKS_SLUG[:12]) and w != HOOKS_SLUG for w in words)


def test_nothing_is_written_without_suite(capsys, history, tmp_path):
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    home = os.environ["HOME"]
    home_before = sorted(str(p) for p in __import__("pathlib").Path(home).rglob("*"))
    run_json(capsys, history)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == before
    assert sorted(str(p) for p in __import__("pathlib").Path(home).rglob("*")) == home_before


def test_no_transcripts_is_a_clear_error(capsys, tmp_path):
    assert main(["replay", "--project", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no Claude Code transcripts for this project" in err and "fix:" in err
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["replay", str(tmp_path), "--since", "yesterday"]) == 2


def test_suite_is_a_canary_suite_of_the_evidenced_prompts(capsys, history, tmp_path):
    suite = tmp_path / "mine" / "history.yaml"
    suite.parent.mkdir()
    report = run_json(capsys, history, "--suite", suite)
    assert report["suite"]["cases"] == 3 and report["suite"]["repeats_dropped"] == 1
    text = suite.read_text()
    assert "clusters: " in text and "note: session aaaa-1, line 3" in text
    assert "silent: true" not in text
    from canaries.suite import load_suite

    loaded = load_suite(str(suite))
    assert [case.injects for case in loaded.cases] == [(SETX_SLUG,), (SETX_SLUG,), (HOOKS_SLUG,)]
    assert loaded.cases[0].routes_to == ("layer1_project_memory_router",)
    # canary run accepts it: exit 1 (the misses fail) or 0, never 2 (unreadable)
    assert main(["canary", "run", str(suite)]) in (0, 1)
    assert "replay-0003" in capsys.readouterr().out


def test_quiet_as_silent_adds_the_quiet_prompts(capsys, history, tmp_path):
    suite = tmp_path / "history.yaml"
    report = run_json(capsys, history, "--suite", suite, "--quiet-as-silent")
    from canaries.suite import load_suite

    cases = load_suite(str(suite)).cases
    assert report["suite"]["cases"] == 5
    assert sorted(case.prompt for case in cases if case.silent) == sorted([QUIET, CLOUDFLARE])


def test_suite_archives_what_it_replaces_and_refuses_the_package(capsys, history, tmp_path):
    suite = tmp_path / "history.yaml"
    suite.write_text("# mine\n")
    report = run_json(capsys, history, "--suite", suite)
    archived = report["suite"]["archived"]
    assert archived and open(archived).read() == "# mine\n" and "injects" in suite.read_text()
    import canaries

    inside = os.path.join(os.path.dirname(canaries.__file__), "history.yaml")
    assert main(["replay", str(history), "--suite", inside]) == 1
    assert "never written into an installed package" in capsys.readouterr().err
    assert not os.path.exists(inside)


def test_prompts_with_odd_characters_round_trip_through_the_suite(capsys, tmp_path):
    directory = tmp_path / "h"
    directory.mkdir()
    odd = 'setx "quoted" \u2028 line: {braces} # not a comment \ud83d half an emoji, Bash tool'
    write_session(directory, "odd", [(odd, [SETX_SLUG])])
    suite = tmp_path / "odd.yaml"
    run_json(capsys, directory, "--suite", suite)
    from canaries.suite import load_suite

    [case] = load_suite(str(suite)).cases
    assert case.prompt == odd.replace("\ud83d", "\ufffd")


def test_project_elsewhere_routes_on_that_projects_own_store(capsys, history, store, tmp_path, monkeypatch):
    # issue 35 item 9: run from another directory, --project DIR replays on DIR's store, not the
    # bundled example's (silently so under --json)
    project = tmp_path / "project"
    shutil.copytree(store, project / "brain")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("MEMORY_ROUTER_CLUSTERS", raising=False)
    report = run_json(capsys, history, "--project", project)
    assert report["cluster_file"] == str(project / "brain" / "memory-layer1-clusters.md")


def test_project_with_a_config_uses_its_clusters_setting(capsys, history, store, tmp_path, monkeypatch):
    project = tmp_path / "project"
    shutil.copytree(store, project / "mystore")
    (project / "memory-router.toml").write_text('clusters = "mystore/memory-layer1-clusters.md"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("MEMORY_ROUTER_CLUSTERS", raising=False)
    report = run_json(capsys, history, "--project", project)
    assert report["cluster_file"] == str(project / "mystore" / "memory-layer1-clusters.md")


def test_the_bundled_store_is_named_even_under_json(capsys, history, tmp_path, monkeypatch):
    project = tmp_path / "bare"
    project.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("MEMORY_ROUTER_CLUSTERS", raising=False)
    assert main(["replay", str(history), "--project", str(project), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["cluster_file"] == os.path.abspath(bundled_cluster_file())
    assert "bundled example store" in captured.err


@pytest.mark.parametrize("package", ["transcripts", "router", "harness", "canaries", "yaml", "pytest"])
def test_suite_is_never_written_into_an_installed_package(package):
    # the guard alone (a failing guard must not leave a file in a real package)
    import importlib

    from harness.replay.suite import check_target
    from router.errors import RefusedError

    inside = os.path.join(os.path.dirname(importlib.import_module(package).__file__), "history.yaml")
    with pytest.raises(RefusedError, match="never written into an installed package"):
        check_target(inside)


HOSTILE_TEXT = ["\x1b[2J\x1b[31m", "\x1b]8;;https://evil.example\x07", "\u202e", "\u2066", "\x07", "\r", "\x9b31m"]


def test_terminal_output_strips_escapes_controls_and_bidi(capsys, tmp_path, monkeypatch):
    # issue 35 item 9: a prompt or a file name holding escape sequences, control or bidi characters
    # reaches the terminal without them (--json keeps the exact text, escaped by JSON)
    directory = tmp_path / "h\x1b[31mred\u202e"
    directory.mkdir()
    prompt = "".join(HOSTILE_TEXT) + " " + SETX + " \x1b]0;title\x07\u200f"
    write_session(directory, "e\x1b[1mvil\u2067", [(prompt, [HOOKS_SLUG]), (QUIET + "\x1b[5m", [])])
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["replay", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "replayed 1 sessions, 2 typed prompts" in out and "[31mred" not in out and "[5m" not in out
    for char in out:
        assert char == "\n" or (char.isprintable() and char not in "\u200e\u200f\u061c\u202a\u202b\u202c\u202d"
                                "\u202e\u2066\u2067\u2068\u2069"), repr(char)
    report = run_json(capsys, directory)
    assert any("\x1b[31mred\u202e" in p for p in report["read"])


def test_suite_with_no_evidenced_prompt_writes_nothing_and_names_quiet_as_silent(capsys, tmp_path):
    # issue 36 item 3: a 0-case suite was written, and the advised canary run refused it (exit 2)
    directory = tmp_path / "quiet"
    directory.mkdir()
    write_session(directory, "q", [(QUIET, []), (THANKS, [])])
    suite = tmp_path / "history.yaml"
    assert main(["replay", str(directory), "--suite", str(suite)]) == 1
    err = capsys.readouterr().err
    assert "no prompt had memory evidence" in err and "--quiet-as-silent" in err
    assert not suite.exists()
    # with the quiet prompts as silent cases there is a suite, and the canary run it advises runs
    assert main(["replay", str(directory), "--suite", str(suite), "--quiet-as-silent"]) == 0
    assert suite.exists()
    assert main(["canary", "run", str(suite)]) == 0
