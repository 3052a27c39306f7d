"""The hook, driven as Claude Code drives it: the installed console script, a JSON payload on
stdin, exit code and stdout checked. Fail-open cases must exit 0 with empty stdout."""

import io
import json
import os
import pathlib
import subprocess
import sys
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from router.hooks.hook import run_hook, run_session_start
from support.fixture_transcripts import task_notification_text

SETX_PHRASINGS = [
    "I set an env var with setx but the Bash tool still can't see it, why?",
    "why doesn't a variable I created with setx show up when you run bash commands?",
    "setx PATH change isn't visible in your Bash tool even after I rebooted",
    "the environment variable I added via setx is empty in the bash tool, what's going on?",
]
NEUTRAL = ["refactor this loop", "what is the capital of Australia", "what's the weather tomorrow"]


def payload(prompt, cwd="/tmp", **extra):
    # A fresh session per payload: a session that already holds a line is not sent it again
    # (tests/router/test_session.py covers that).
    session_id = str(uuid.uuid4())
    data = {"session_id": session_id,
            "transcript_path": f"/home/u/.claude/projects/-tmp/{session_id}.jsonl",
            "cwd": cwd, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    data.update(extra)
    return json.dumps(data).encode()


def assert_injection(stdout):
    out = json.loads(stdout)
    assert list(out) == ["hookSpecificOutput"]
    assert set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert isinstance(text, str) and len(text) < 10_000
    return text


@pytest.mark.parametrize("prompt", SETX_PHRASINGS)
def test_setx_phrasings_inject_the_caching_fact(run_cli, example_cluster_file, prompt):
    result = run_cli("hook", "--clusters", example_cluster_file, input=payload(prompt))
    assert result.returncode == 0
    text = assert_injection(result.stdout)
    assert text.splitlines()[0].startswith("Routed memory cluster")
    assert "layer1_project_memory_router" in text.splitlines()[0]
    assert "- env_bash_tool_env_var_caching \u2014 " in text


@pytest.mark.parametrize("prompt", NEUTRAL)
def test_neutral_prompts_print_nothing(run_cli, example_cluster_file, prompt):
    result = run_cli("hook", "--clusters", example_cluster_file, input=payload(prompt))
    assert (result.returncode, result.stdout) == (0, b"")


def test_cluster_file_found_via_env_var_and_project_dir(run_cli, example_cluster_file, tmp_path):
    prompt = payload(SETX_PHRASINGS[0], cwd=str(tmp_path / "elsewhere"))
    by_env = run_cli("hook", input=prompt, env={"MEMORY_ROUTER_CLUSTERS": str(example_cluster_file)})
    assert_injection(by_env.stdout)
    project = tmp_path / "proj"
    (project / "brain").mkdir(parents=True)
    (project / "brain" / "memory-layer1-clusters.tsv").write_text(
        example_cluster_file.with_suffix(".tsv").read_text(encoding="utf-8"), encoding="utf-8")
    by_project = run_cli("hook", input=prompt, env={"CLAUDE_PROJECT_DIR": str(project)})
    assert_injection(by_project.stdout)
    by_cwd = run_cli("hook", input=payload(SETX_PHRASINGS[0], cwd=str(project)))
    assert_injection(by_cwd.stdout)


def test_config_file_sets_cluster_path_and_constants(run_cli, example_cluster_file, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    config = project / "memory-router.toml"
    config.write_text(f'clusters = "{example_cluster_file.as_posix()}"\n', encoding="utf-8")
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    assert_injection(run_cli("hook", input=payload(SETX_PHRASINGS[0]), env=env).stdout)
    # a floor nobody can reach silences the hook: proves the config's constants are used
    config.write_text(f'clusters = "{example_cluster_file.as_posix()}"\nprovider = "weighted"\nweighted_floor = 999\nutterance_floor = 999\n',
                      encoding="utf-8")
    assert run_cli("hook", input=payload(SETX_PHRASINGS[0]), env=env).stdout == b""
    config.write_text(f'clusters = "{example_cluster_file.as_posix()}"\nprovider = "spec"\nscore_floor = 999\n',
                      encoding="utf-8")
    assert run_cli("hook", input=payload(SETX_PHRASINGS[0]), env=env).stdout == b""


def _corrupt(tmp_path):
    path = tmp_path / "corrupt.md"
    path.write_text("## Layer 0 - Cluster Router\n- c1 · 5 · tags: setx, bash\n## Layer 1 - Member Lines\n"
                    "### c1\n- m - env; setx bash\n", encoding="utf-8")
    return path


FAIL_OPEN = {
    "bad json": lambda tmp, store: (["--clusters", store], b"{not json"),
    "empty stdin": lambda tmp, store: (["--clusters", store], b""),
    "json array": lambda tmp, store: (["--clusters", store], b"[1, 2]"),
    "missing prompt": lambda tmp, store: (["--clusters", store], b'{"session_id": "x", "cwd": "/tmp"}'),
    "prompt not a string": lambda tmp, store: (["--clusters", store], b'{"prompt": 42}'),
    "missing cluster file": lambda tmp, store: (["--clusters", tmp / "nope.md"], payload(SETX_PHRASINGS[0])),
    "cluster path is a directory": lambda tmp, store: (["--clusters", tmp], payload(SETX_PHRASINGS[0])),
    "corrupt cluster file": lambda tmp, store: (["--clusters", _corrupt(tmp)], payload(SETX_PHRASINGS[0])),
    "no cluster file anywhere": lambda tmp, store: ([], payload(SETX_PHRASINGS[0], cwd=str(tmp))),
    "binary garbage": lambda tmp, store: (["--clusters", store], bytes(range(256)) * 40),
    "invalid utf-8 in json": lambda tmp, store: (["--clusters", store], b'{"prompt": "setx \xff\xfe bash"}'),
    "unknown argument": lambda tmp, store: (["--bogus"], payload(SETX_PHRASINGS[0])),
    "deeply nested json": lambda tmp, store: (["--clusters", store], b"[" * 200_000),
    "deeply nested prompt object": lambda tmp, store: (["--clusters", store], b'{"prompt": ' + b"{" * 200_000),
    "cluster file is a fifo": lambda tmp, store: (["--clusters", _fifo(tmp / "clusters.md")], payload(SETX_PHRASINGS[0])),
    "config file is a fifo": lambda tmp, store: (["--clusters", store, "--config", _fifo(tmp / "memory-router.toml")],
                                                 payload(SETX_PHRASINGS[0])),
    "cluster file is a character device": lambda tmp, store: (["--clusters", os.devnull], payload(SETX_PHRASINGS[0])),
}


def _fifo(path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("case", sorted(FAIL_OPEN))
def test_fail_open_exits_0_with_empty_stdout(run_cli, example_cluster_file, tmp_path, case):
    args, stdin = FAIL_OPEN[case](tmp_path, example_cluster_file)
    log = tmp_path / "hook.log"
    # a timeout (not a hang) is what a FIFO must produce: opening one blocks until a writer comes
    result = run_cli("hook", *args, input=stdin, env={"MEMORY_ROUTER_LOG": str(log)}, timeout=20)
    assert result.returncode == 0
    assert result.stderr == b""
    assert result.stdout == b""
    logged = log.read_text(encoding="utf-8").splitlines()
    assert len(logged) == 1 and "memory-router hook:" in logged[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("hook_args", [["hook"], ["sentinel", "hook"]], ids=["router", "sentinel"])
def test_log_that_is_a_fifo_keeps_the_hook_silent_and_fast(run_cli, example_cluster_file, tmp_path, hook_args):
    """Issue 11, class 3: $MEMORY_ROUTER_LOG naming a FIFO with no reader hung the hook for ever."""
    (tmp_path / "file").write_text("not a directory")
    # A bad payload for the router, a flag that cannot be created for the sentinel: both fail
    # open and log, first to a regular file (so the case is known to log), then to a FIFO.
    args = (["--clusters", example_cluster_file] if hook_args == ["hook"]
            else ["--flag", tmp_path / "file" / "flag", "--text", "x"])
    regular = tmp_path / "log.txt"
    result = run_cli(*hook_args, *args, input=b'{"prompt": ', env={"MEMORY_ROUTER_LOG": str(regular)}, timeout=20)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert regular.read_text(encoding="utf-8").count("\n") == 1
    log = tmp_path / "log.fifo"
    os.mkfifo(log)
    result = run_cli(*hook_args, *args, input=b'{"prompt": ', env={"MEMORY_ROUTER_LOG": str(log)}, timeout=20)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_no_log_file_unless_asked(run_cli, example_cluster_file, tmp_path):
    result = run_cli("hook", "--clusters", tmp_path / "nope.md", input=payload("setx"), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, b"")
    assert list(tmp_path.iterdir()) == []


def test_five_megabyte_prompt(run_cli, example_cluster_file):
    prompt = "setx bash tool env var " + "x" * (5 * 1024 * 1024)
    result = run_cli("hook", "--clusters", example_cluster_file, input=payload(prompt))
    assert result.returncode == 0
    assert_injection(result.stdout)


def test_broken_pipe_on_stdout_exits_0_silently(example_cluster_file):
    import shutil

    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    read_end, write_end = os.pipe()
    os.close(read_end)  # Claude Code gone: every write to stdout raises EPIPE
    try:
        result = subprocess.run([exe, "hook", "--clusters", str(example_cluster_file)],
                                input=payload(SETX_PHRASINGS[0]), stdout=write_end, stderr=subprocess.PIPE,
                                timeout=60)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (0, b"")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "utf-16"])
def test_output_is_the_same_bytes_on_any_stdout_encoding(run_cli, example_cluster_file, encoding):
    plain = run_cli("hook", "--clusters", example_cluster_file, input=payload(SETX_PHRASINGS[0]))
    other = run_cli("hook", "--clusters", example_cluster_file, input=payload(SETX_PHRASINGS[0]),
                    env={"PYTHONIOENCODING": encoding})
    assert_injection(plain.stdout)
    assert other.returncode == 0
    assert other.stdout == plain.stdout


def test_oversized_cluster_file_is_refused_not_parsed(monkeypatch, example_cluster_file, tmp_path):
    import router.hooks.compiled as hook

    out = io.StringIO()
    run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(payload(SETX_PHRASINGS[0])), out)
    assert_injection(out.getvalue())
    monkeypatch.setattr(hook, "MAX_CLUSTER_FILE_BYTES", 1000)
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    out = io.StringIO()
    assert run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(payload(SETX_PHRASINGS[0])), out) == 0
    assert out.getvalue() == ""
    assert "over the hook's limit" in (tmp_path / "log").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "pyproject",
    [
        pytest.param(b'[project\nname = "not ours, and broken"\n', id="broken TOML"),
        pytest.param(b"tool = 5\n", id="tool not a table"),
        pytest.param(b'[project]\nname = "x"\n', id="no table of ours"),
        pytest.param(b'[project]\nname = "caf\xe9"\n', id="not UTF-8"),
    ],
)
def test_someone_elses_pyproject_in_cwd_does_not_silence_the_hook(run_cli, example_cluster_file, tmp_path,
                                                                    pyproject):
    project = tmp_path / "their-project"
    project.mkdir()
    (project / "pyproject.toml").write_bytes(pyproject)
    result = run_cli("hook", input=payload(SETX_PHRASINGS[0], cwd=str(project)),
                     env={"MEMORY_ROUTER_CLUSTERS": str(example_cluster_file)})
    assert result.returncode == 0
    assert "env_bash_tool_env_var_caching" in assert_injection(result.stdout)


def test_our_broken_config_in_cwd_fails_open_and_logs(run_cli, example_cluster_file, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "memory-router.toml").write_text("score_floor = \n", encoding="utf-8")
    log = tmp_path / "hook.log"
    result = run_cli("hook", input=payload(SETX_PHRASINGS[0], cwd=str(project)),
                     env={"MEMORY_ROUTER_CLUSTERS": str(example_cluster_file), "MEMORY_ROUTER_LOG": str(log)})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "memory-router.toml:1:" in log.read_text(encoding="utf-8")


def test_any_exception_fails_open(monkeypatch, example_cluster_file):
    import router.hooks.hook as hook

    def boom(*_args, **_kwargs):
        raise RuntimeError("scorer exploded")

    monkeypatch.setattr(hook, "route", boom)
    out = io.StringIO()
    assert run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(payload("setx bash")), out) == 0
    assert out.getvalue() == ""


def test_cache_is_used_and_refreshed_when_the_file_changes(tmp_path, example_cluster_file, monkeypatch):
    import router.cache

    monkeypatch.setattr(router.cache, "RACY_WINDOW_NS", 0)  # the store was written a moment ago
    store = tmp_path / "c.md"
    store.write_bytes(example_cluster_file.read_bytes())
    out = io.StringIO()
    run_hook(["--clusters", str(store)], io.BytesIO(payload(SETX_PHRASINGS[0])), out)
    assert "env_bash_tool_env_var_caching" in out.getvalue()
    cache_dir = os.environ["MEMORY_ROUTER_CACHE_DIR"]
    assert any(name.startswith("table-") for name in os.listdir(cache_dir))
    # rewrite the store without the fact: the stale cache must not be served
    text = store.read_text(encoding="utf-8").replace("setx", "regedit").replace("Bash tool", "shell")
    store.write_text(text, encoding="utf-8")
    os.utime(store, ns=(1, 1))
    out = io.StringIO()
    run_hook(["--clusters", str(store)], io.BytesIO(payload("setx bash tool")), out)
    assert "setx" not in out.getvalue()


def test_hook_module_imports_no_heavy_libraries():
    code = ("import sys, router.hooks.hook; heavy = {'yaml', 'rich', 'deepdiff', 'jsonlines', 'jsonschema', 'dataclasses', "
            "'tomllib', 'argparse', 'typing'} & set(sys.modules); print(sorted(heavy))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_console_entry_for_hook_imports_no_heavy_libraries(example_cluster_file):
    code = ("import sys, io; sys.argv = ['memory-router', 'hook', '--clusters', sys.argv[1]]; "
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"prompt\": \"setx bash tool env var\"}')); "
            "from harness.cli import main; rc = main(); "
            "heavy = {'yaml', 'rich', 'deepdiff', 'jsonlines', 'jsonschema', 'tomllib', 'argparse'} & set(sys.modules); "
            "sys.stdout.write('|' + repr(sorted(heavy)) + '|' + str(rc))")
    result = subprocess.run([sys.executable, "-c", code, str(example_cluster_file)], capture_output=True,
                            text=True, check=True)
    assert result.stdout.endswith("|[]|0")


HOOK_SHAPE_KEYS = {"hookSpecificOutput"}


def _check_output(text):
    if text == "":
        return
    out = json.loads(text)
    assert set(out) == HOOK_SHAPE_KEYS
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert isinstance(out["hookSpecificOutput"]["additionalContext"], str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=2048))
def test_property_arbitrary_bytes(example_cluster_file, raw):
    out = io.StringIO()
    assert run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(raw), out) == 0
    _check_output(out.getvalue())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=200),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | st.fixed_dictionaries({"prompt": st.text(max_size=500), "cwd": st.text(max_size=30)}),
       words=st.lists(st.sampled_from(["setx", "bash", "tool", "env", "var", "cloudflare", "secret", "the"]),
                      max_size=8))
def test_property_arbitrary_json(example_cluster_file, value, words):
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        value["prompt"] += " " + " ".join(words)
    out = io.StringIO()
    raw = json.dumps(value).encode()
    assert run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(raw), out) == 0
    _check_output(out.getvalue())


# --------------------------------------------------------------------------- session-start (issue 13)


@pytest.mark.parametrize("source, forgets", [("compact", False), ("clear", True), ("startup", False),
                                             ("resume", False)])
def test_session_start_resets_after_compaction_and_clear_only(run_cli, example_cluster_file, source, forgets):
    # no transcript_path: the record is trusted without the transcript (tests/router/test_session.py)
    prompt = payload(SETX_PHRASINGS[0], transcript_path=None)
    session_id = json.loads(prompt)["session_id"]
    assert_injection(run_cli("hook", "--clusters", example_cluster_file, input=prompt).stdout)
    assert run_cli("hook", "--clusters", example_cluster_file, input=prompt).stdout == b""
    start = json.dumps({"session_id": session_id, "transcript_path": "", "cwd": "/tmp",
                        "hook_event_name": "SessionStart", "source": source}).encode()
    result = run_cli("session-start", input=start)
    assert (result.returncode, result.stderr) == (0, b"")
    if source == "compact":
        # the repeat relied on the session holding the fact: it is sent again with the compaction,
        # and the session holds it again (so the next ask sends nothing)
        out = json.loads(result.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart"
        assert out["additionalContext"].startswith("Routed memory cluster: layer1_project_memory_router "
                                                   "(again after compaction)\n")
        assert "- env_bash_tool_env_var_caching \u2014 " in out["additionalContext"]
    else:
        assert result.stdout == b""
    again = run_cli("hook", "--clusters", example_cluster_file, input=prompt).stdout
    assert (again != b"") is forgets


@pytest.mark.parametrize("stdin, args", [
    (b"{not json", []),
    (b'{"source": "compact"}', []),
    (b'{"session_id": "s", "source": "compact"}', ["--bogus"]),
])
def test_session_start_fails_open(run_cli, tmp_path, stdin, args):
    log = tmp_path / "hook.log"
    result = run_cli("session-start", *args, input=stdin, env={"MEMORY_ROUTER_LOG": str(log)})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    logged = log.read_text(encoding="utf-8").splitlines()
    assert len(logged) == 1 and "memory-router session-start:" in logged[0]


def test_session_start_after_compaction_sends_nothing_when_nothing_was_relied_on(run_cli, example_cluster_file):
    prompt = payload(SETX_PHRASINGS[0], transcript_path=None)
    session_id = json.loads(prompt)["session_id"]
    assert_injection(run_cli("hook", "--clusters", example_cluster_file, input=prompt).stdout)
    start = json.dumps({"session_id": session_id, "hook_event_name": "SessionStart", "source": "compact"}).encode()
    assert run_cli("session-start", input=start).stdout == b""
    assert_injection(run_cli("hook", "--clusters", example_cluster_file, input=prompt).stdout)


def test_session_start_after_compaction_with_a_changed_store_sends_nothing_and_logs(run_cli, example_cluster_file,
                                                                                   tmp_path):
    store = tmp_path / "clusters.md"
    store.write_bytes(example_cluster_file.read_bytes())
    prompt = payload(SETX_PHRASINGS[0], transcript_path=None)
    session_id = json.loads(prompt)["session_id"]
    run_cli("hook", "--clusters", store, input=prompt)
    run_cli("hook", "--clusters", store, input=prompt)
    store.write_bytes(example_cluster_file.read_bytes() + b"\n")
    log = tmp_path / "hook.log"
    start = json.dumps({"session_id": session_id, "hook_event_name": "SessionStart", "source": "compact"}).encode()
    assert run_cli("session-start", input=start, env={"MEMORY_ROUTER_LOG": str(log)}).stdout == b""
    assert "another cluster file" in log.read_text(encoding="utf-8")


LEARNED_PROMPT = "the flibbertigibbet is glacial again"


def _learning_project(tmp_path, example_cluster_file, learning):
    from router.store.clusterfile import load_cluster_file

    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    store = project / "c.md"
    store.write_bytes(example_cluster_file.read_bytes())
    (project / "memory-router.toml").write_text(
        f'clusters = "c.md"\nlearning = {"true" if learning else "false"}\n', encoding="utf-8")
    cluster_id = next(c.cluster_id for c in load_cluster_file(store).clusters
                      for m in c.members if m.slug == "env_defender_excludes_dev_dir")
    return project, store, cluster_id


def _write_learned(store, cluster_id, terms):
    from router.config import learned_path
    from router.store.learned import COLUMNS

    rows = ["\t".join(COLUMNS)] + [f"2026-11-30T10:00:0{n}Z\t{cluster_id}\tenv_defender_excludes_dev_dir\t{term}\tlearn"
                                   for n, term in enumerate(terms)]
    path = pathlib.Path(learned_path(store))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    os.utime(path, ns=(1, 1))  # settled: old enough for the cache to keep the table
    return path


def _hook_in(project):
    out = io.StringIO()
    os.environ["CLAUDE_PROJECT_DIR"] = str(project)
    try:
        run_hook([], io.BytesIO(payload(LEARNED_PROMPT, cwd=str(project))), out)
    finally:
        del os.environ["CLAUDE_PROJECT_DIR"]
    return out.getvalue()


def test_learned_terms_route_the_next_prompt_when_learning_is_on(tmp_path, example_cluster_file, monkeypatch):
    import router.cache

    monkeypatch.setattr(router.cache, "RACY_WINDOW_NS", 0)  # files written a moment ago are cached
    project, store, cluster_id = _learning_project(tmp_path, example_cluster_file, learning=True)
    os.utime(store, ns=(1, 1))
    assert _hook_in(project) == ""  # no memory holds these words: cached as such
    assert any(name.startswith("table-companions-") for name in os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"]))
    _write_learned(store, cluster_id, ["flibbertigibbet", "glacial"])
    text = assert_injection(_hook_in(project))  # the learned file's stat is in the cache key
    assert "env_defender_excludes_dev_dir" in text
    # forgetting the rows (a person deleted them) is seen on the next prompt too
    _write_learned(store, cluster_id, [])
    assert _hook_in(project) == ""


def test_learned_terms_are_ignored_while_learning_is_off(tmp_path, example_cluster_file):
    project, store, cluster_id = _learning_project(tmp_path, example_cluster_file, learning=False)
    _write_learned(store, cluster_id, ["flibbertigibbet", "glacial"])
    assert _hook_in(project) == ""


def test_a_damaged_learned_file_is_logged_and_the_hand_words_still_route(tmp_path, example_cluster_file,
                                                                           monkeypatch):
    project, store, cluster_id = _learning_project(tmp_path, example_cluster_file, learning=True)
    learned = _write_learned(store, cluster_id, ["flibbertigibbet"])
    learned.write_text(learned.read_text(encoding="utf-8").replace("source\n", "origin\n"), encoding="utf-8")
    log = tmp_path / "hook.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    out = io.StringIO()
    run_hook([], io.BytesIO(payload(SETX_PHRASINGS[0], cwd=str(project))), out)
    assert "env_bash_tool_env_var_caching" in assert_injection(out.getvalue())
    logged = log.read_text(encoding="utf-8")
    assert "expected the column row" in logged and "routing without learned terms" in logged


def test_a_bad_learned_row_is_logged_skipped_and_the_other_rows_still_route(tmp_path, example_cluster_file,
                                                                            monkeypatch):
    """Issue 35 item 7: one bad row is skipped and logged by place; the file's other rows still route."""
    project, store, cluster_id = _learning_project(tmp_path, example_cluster_file, learning=True)
    learned = _write_learned(store, cluster_id, ["gobbledygook", "flibbertigibbet", "glacial"])
    learned.write_text(learned.read_text(encoding="utf-8").replace("learn\n", "nobody\n", 1), encoding="utf-8")
    log = tmp_path / "hook.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    out = io.StringIO()
    run_hook([], io.BytesIO(payload(LEARNED_PROMPT, cwd=str(project))), out)
    assert "env_defender_excludes_dev_dir" in assert_injection(out.getvalue())
    logged = log.read_text(encoding="utf-8")
    assert f"{learned}:2:" in logged and "unknown source 'nobody'" in logged and "that row is skipped" in logged


def test_a_task_notification_turn_is_not_routed(example_cluster_file):
    text = task_notification_text()
    out = io.StringIO()
    run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(payload(text)), out)
    assert out.getvalue() == ""
    # the same words typed by a person do route: the silence is the wrapper's, not the words'
    inner = text.replace("<task-notification>", "").replace("</task-notification>", "")
    out = io.StringIO()
    run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(payload(inner)), out)
    assert assert_injection(out.getvalue())


def test_a_current_cache_routes_with_learning_on_without_importing_the_learned_reader(tmp_path, example_cluster_file,
                                                                                    monkeypatch):
    """The learned file's path is needed on every prompt, its reader only when the table is built:
    a prompt on a current cache must not pay for importing router.store.learned (~2 ms)."""
    import sys

    import router.cache

    monkeypatch.setattr(router.cache, "RACY_WINDOW_NS", 0)
    project, store, cluster_id = _learning_project(tmp_path, example_cluster_file, learning=True)
    _write_learned(store, cluster_id, ["flibbertigibbet", "glacial"])
    assert "env_defender_excludes_dev_dir" in assert_injection(_hook_in(project))  # builds and caches
    monkeypatch.delitem(sys.modules, "router.store.learned", raising=False)
    assert "env_defender_excludes_dev_dir" in assert_injection(_hook_in(project))
    assert "router.store.learned" not in sys.modules


# --------------------------------------------------------------------------- issue 24: no HOME, read-only sessions


def _no_usable_home(monkeypatch, home):
    """No cache variable and a HOME that names no usable directory; ``unset`` also gives the
    password database's fallback a home that does not exist (a service account's /nonexistent)."""
    monkeypatch.delenv("MEMORY_ROUTER_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if home is None:
        monkeypatch.delenv("HOME", raising=False)
        monkeypatch.setattr(os.path, "expanduser", lambda path: path.replace("~", "/nonexistent", 1))
    else:
        monkeypatch.setenv("HOME", home)
    from router.cache import cache_dir

    assert cache_dir() is None


@pytest.mark.parametrize("home", [None, "", "/"], ids=["unset", "empty", "root"])
def test_issue24_item14_no_cache_directory_still_routes_a_session_prompt(monkeypatch, example_cluster_file,
                                                                         tmp_path, home):
    """Item 14: every real prompt carries a session_id; with nowhere to keep its record the hook
    must route it and record nothing (it joined None and injected nothing)."""
    _no_usable_home(monkeypatch, home)
    log = tmp_path / "hook.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    prompt = payload(SETX_PHRASINGS[0])
    for _ in range(2):  # nothing is recorded, so the repeat is sent too
        out = io.StringIO()
        assert run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(prompt), out) == 0
        assert "env_bash_tool_env_var_caching" in assert_injection(out.getvalue())
    logged = log.read_text(encoding="utf-8")
    assert "no cache directory" in logged and "Error" not in logged
    start = json.dumps({"session_id": json.loads(prompt)["session_id"], "hook_event_name": "SessionStart",
                        "source": "compact"}).encode()
    out = io.StringIO()
    assert run_session_start([], io.BytesIO(start), out) == 0 and out.getvalue() == ""
    assert "Error" not in log.read_text(encoding="utf-8")


def _refuse_writes_under(monkeypatch, directory):
    """What a read-only directory does to a process that may write elsewhere (the tests run as
    root, whom a chmod does not stop): creating, replacing or removing a file in it is EACCES."""
    directory = os.path.abspath(directory)
    real_open, real_replace, real_unlink = os.open, os.replace, os.unlink

    def inside(path):
        return os.path.dirname(os.path.abspath(os.fsdecode(path))) == directory

    def refuse(path):
        raise PermissionError(13, "Permission denied", os.fsdecode(path))

    def guarded_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and inside(path):
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def guarded_replace(src, dst, *args, **kwargs):
        if inside(src) or inside(dst):
            refuse(dst)
        return real_replace(src, dst, *args, **kwargs)

    def guarded_unlink(path, *args, **kwargs):
        if inside(path):
            refuse(path)
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
    monkeypatch.setattr(os, "replace", guarded_replace)
    monkeypatch.setattr(os, "unlink", guarded_unlink)
    monkeypatch.setattr(os, "remove", guarded_unlink)


def test_issue24_item15_compact_with_a_read_only_sessions_dir_still_sends_again(monkeypatch, example_cluster_file,
                                                                                tmp_path):
    """Item 15: the record write fails, then the reset fails too; what the last prompt relied on
    must still be sent again (a PermissionError escaped after the failed write)."""
    from router.hooks.sessionrecord import sessions_dir

    prompt = payload(SETX_PHRASINGS[0], transcript_path=None)
    for _ in range(2):  # sent, then held: the second prompt relies on the session holding it
        run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(prompt), io.StringIO())
    log = tmp_path / "hook.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    _refuse_writes_under(monkeypatch, sessions_dir())
    start = json.dumps({"session_id": json.loads(prompt)["session_id"], "hook_event_name": "SessionStart",
                        "source": "compact"}).encode()
    out = io.StringIO()
    assert run_session_start([], io.BytesIO(start), out) == 0
    sent = json.loads(out.getvalue())["hookSpecificOutput"]
    assert sent["hookEventName"] == "SessionStart"
    assert "- env_bash_tool_env_var_caching \u2014 " in sent["additionalContext"]
    logged = log.read_text(encoding="utf-8")
    assert "record not written" in logged and "record not removed (it could not be deleted: Permission denied)" in logged


def test_a_nul_in_the_transcript_path_still_routes(example_cluster_file):
    """A path with a NUL raises ValueError from os.stat, not OSError: it cost every prompt its
    injection. The first prompt is sent; the second cannot scan that transcript, so it is sent again."""
    prompt = payload(SETX_PHRASINGS[0], transcript_path="/tmp/a\x00b.jsonl")
    for _ in range(2):
        out = io.StringIO()
        run_hook(["--clusters", str(example_cluster_file)], io.BytesIO(prompt), out)
        assert "env_bash_tool_env_var_caching" in assert_injection(out.getvalue())
