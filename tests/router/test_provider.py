"""Providers behind one fail-safe call: the built-ins, custom modules, and every way a custom one
can fail (each must end in silence and exactly one log line, never an exception or a wait)."""

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from router.store.clusterfile import load_cluster_file
from router.config import default_settings
from router.providers.provider import build_table, check_decision, load_factory, route, score_confidence
from router.providername import BUILTINS, ProviderError, parse_provider_name
from router.routing.score import build_routing_table, route_prompt
from support.fixture_transcripts import task_notification_text

SETX = "I set an env var with setx but the Bash tool still can't see it, why?"
_names = itertools.count()

GOOD_PROVIDER = '''
def make(settings):
    def provider(request):
        table = request["table"]
        cluster_id, _tags, _label, members = table["clusters"][0]
        lines = [{"cluster_id": cluster_id, "slug": slug, "hook": hook} for slug, _t, hook in members]
        return {"clusters": [cluster_id], "lines": lines * 5, "confidence": 0.9,
                "explanation": "first cluster for " + str(request["session_id"]) + " in " + str(request["cwd"])}
    return provider
'''


@pytest.fixture
def table(example_cluster_file):
    return build_table(load_cluster_file(example_cluster_file))


@pytest.fixture
def write_provider(tmp_path, monkeypatch):
    """Write a provider module under a fresh name; returns 'module:make'. On PYTHONPATH, as a user
    installs one: a custom provider runs in a child interpreter (router/providers/providerproc.py)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))

    def write(source):
        name = f"provider_under_test_{next(_names)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return f"{name}:make"

    return write


@pytest.fixture
def log_file(tmp_path, monkeypatch):
    path = tmp_path / "router.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(path))
    return path


def settings(**overrides):
    out = default_settings()
    out.update(overrides)
    return out


def test_builtins_are_listed_and_load():
    assert BUILTINS == ("null", "spec", "weighted")
    for name in BUILTINS:
        assert callable(load_factory(name))


def test_null_never_injects(table):
    decision = route(SETX, table, settings(provider="null"))
    assert (decision["routed"], decision["additional_context"], decision["confidence"]) == ([], None, 0.0)
    assert decision["provider"] == "null"


@pytest.mark.parametrize("prompt", [
    SETX, "what did we decide about SQLAlchemy, Core or the ORM?", "refactor this loop",
    "pg_dump backup restore vacuum postgres on anvil", "windows setx bash PATH",
])
def test_spec_provider_is_the_spec_scorer_unchanged(example_cluster_file, table, prompt):
    reference = route_prompt(prompt, build_routing_table(load_cluster_file(example_cluster_file)), settings())
    decision = route(prompt, table, settings(provider="spec"))
    for key, value in reference.items():
        assert decision[key] == value, key
    assert decision["clusters"] == reference["routed"]
    assert decision["confidence"] == score_confidence(reference["top_score"], reference["floor"])
    assert decision["explanation"]


@pytest.mark.parametrize("top, floor, expected", [(0, 3, 0.0), (3, 3, 0.5), (9, 3, 0.75), (2, 0, 1.0)])
def test_score_confidence(top, floor, expected):
    assert score_confidence(top, floor) == expected


def test_custom_provider_gets_the_payload_and_its_lines_are_capped(table, write_provider):
    name = write_provider(GOOD_PROVIDER)
    decision = route(SETX, table, settings(provider=name, line_cap=7), cwd="/proj", session_id="s-1")
    assert decision["provider"] == name
    assert decision["routed"] == ["layer1_project_memory_router"]
    assert len(decision["lines"]) == 7 and decision["total_member_lines"] == 40
    assert decision["additional_context"].startswith("Routed memory cluster: layer1_project_memory_router "
                                                     "(showing 7 of 40 member lines; capped)")
    assert decision["explanation"] == "first cluster for s-1 in /proj"
    assert decision["confidence"] == 0.9


@pytest.mark.parametrize("provider", ["spec", "weighted", "custom"])
def test_every_provider_says_how_many_lines_the_size_cap_cut(table, write_provider, provider):
    name = write_provider(GOOD_PROVIDER) if provider == "custom" else provider
    # Without utterances: with the example store's own, weighted sends the one member SETX is
    # about, and a 400-character cap has nothing to cut (utterances = false is read at route time).
    roomy = route(SETX, table, settings(provider=name, line_cap=2, utterances=False))
    assert roomy["size_capped_lines"] == 0 and roomy["lines"]
    tight = route(SETX, table, settings(provider=name, max_context_chars=400, utterances=False))
    assert tight["lines"] and "the rest exceeded the size cap" in tight["additional_context"].splitlines()[0]
    assert tight["size_capped_lines"] == min(tight["total_member_lines"], 12) - len(tight["lines"]) > 0


def test_min_confidence_silences_a_weak_decision(table, write_provider):
    name = write_provider(GOOD_PROVIDER)
    decision = route(SETX, table, settings(provider=name, min_confidence=0.95))
    assert decision["additional_context"] is None and decision["routed"] == []
    assert "under min_confidence" in decision["explanation"]


BROKEN = {
    "missing-module": None,
    "import-raises": "raise RuntimeError('broken at import')\n",
    "import-exits": "import sys\nsys.exit(3)\n",
    "no-factory": "x = 1\n",
    "factory-raises": "def make(settings):\n    raise ValueError('no config')\n",
    "factory-not-callable-result": "def make(settings):\n    return 42\n",
    "provider-raises": "def make(settings):\n    return lambda request: 1 / 0\n",
    "returns-none": "def make(settings):\n    return lambda request: None\n",
    "missing-key": "def make(settings):\n    return lambda r: {'clusters': [], 'lines': [], 'confidence': 0.5}\n",
    "confidence-out-of-range": ("def make(settings):\n    return lambda r: {'clusters': [], 'lines': [], "
                                "'confidence': 1.5, 'explanation': ''}\n"),
    "line-of-unchosen-cluster": ("def make(settings):\n    return lambda r: {'clusters': ['a'], 'lines': "
                                 "[{'cluster_id': 'b', 'slug': 's', 'hook': 'h'}], 'confidence': 1, "
                                 "'explanation': ''}\n"),
    "over-budget": "import time\ndef make(settings):\n    time.sleep(30)\n",
    "over-budget-at-import": "import time\ntime.sleep(30)\ndef make(settings):\n    pass\n",
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_custom_provider_is_silent_with_one_log_line(table, write_provider, log_file, case):
    source = BROKEN[case]
    name = "no_such_provider_module_xyz:make" if source is None else write_provider(source)
    decision = route(SETX, table, settings(provider=name, provider_timeout_ms=200))
    assert decision["additional_context"] is None and decision["routed"] == [] and decision["lines"] == []
    assert decision["provider"] == name and decision["explanation"].startswith("failed: ")
    lines = log_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and name in lines[0] and "injecting nothing" in lines[0]


GOOD = {"clusters": ["c"], "lines": [{"cluster_id": "c", "slug": "s", "hook": "h"}], "confidence": 0.5,
        "explanation": "why"}


@pytest.mark.parametrize("change, message", [
    ({"clusters": "c"}, "clusters"),
    ({"clusters": [""]}, "clusters"),
    ({"lines": {}}, "lines"),
    ({"lines": ["- s - h"]}, "line 0"),
    ({"lines": [{"cluster_id": "c", "slug": "s"}]}, "line 0"),
    ({"confidence": True}, "confidence"),
    ({"confidence": math.nan}, "confidence"),
    ({"confidence": -0.1}, "confidence"),
    ({"confidence": "high"}, "confidence"),
    ({"explanation": None}, "explanation"),
])
def test_check_decision_refuses(change, message):
    check_decision(GOOD)
    with pytest.raises(ProviderError, match=message):
        check_decision(dict(GOOD, **change))


@pytest.mark.parametrize("name", ["weighted:", ":make", "a.b", "a:b:c", "my-pkg.mod:make", "mod:1make", 7])
def test_malformed_provider_names(name):
    with pytest.raises(ProviderError):
        parse_provider_name(name)


def test_provider_names_parse():
    assert parse_provider_name("acme.routing:create_provider") == ("acme.routing", "create_provider")


def _payload(prompt):
    return json.dumps({"session_id": "s-2", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt}).encode()


def test_hook_with_custom_provider_injects(run_cli, example_cluster_file, write_provider, tmp_path):
    name = write_provider(GOOD_PROVIDER)
    (tmp_path / "memory-router.toml").write_text(f'provider = "{name}"\n', encoding="utf-8")
    result = run_cli("hook", "--clusters", str(example_cluster_file), "--config", str(tmp_path / "memory-router.toml"),
                     input=_payload(SETX))
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    # The custom provider's decision, then the session stage's line selection (router.hooks.session).
    assert context.startswith("Routed memory cluster: layer1_project_memory_router (")
    assert "more not shown" in context.splitlines()[0] and "- env_bash_tool_env_var_caching" in context


def test_hook_does_not_wait_for_a_hanging_provider(run_cli, example_cluster_file, write_provider, tmp_path):
    # The provider sleeps 60 s; the hook must come back (silent, exit 0) long before that. The
    # subprocess timeout is a hang detector, not a speed target.
    name = write_provider("import time\ndef make(settings):\n    return lambda request: time.sleep(60)\n")
    config = tmp_path / "memory-router.toml"
    config.write_text(f'provider = "{name}"\nprovider_timeout_ms = 100\n', encoding="utf-8")
    log = tmp_path / "hook.log"
    result = run_cli("hook", "--clusters", str(example_cluster_file), "--config", str(config), input=_payload(SETX),
                     env={"MEMORY_ROUTER_LOG": str(log)}, timeout=30)
    assert (result.returncode, result.stdout) == (0, b"")
    assert "took longer than its budget of 100 ms" in log.read_text(encoding="utf-8")


def test_hook_with_builtin_provider_imports_no_threading(example_cluster_file):
    """The built-ins stay in-process: no thread, no child interpreter, not even the module that runs one."""
    code = ("import sys, io; sys.argv = ['memory-router', 'hook', '--clusters', sys.argv[1]]; "
            "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{\"prompt\": \"setx bash tool env var\"}')); "
            "from harness.cli import main; main(); sys.stdout.write('|' + repr(sorted("
            "{'threading', 'subprocess', 'selectors', 'router.providers.providerproc'} & set(sys.modules))))")
    result = subprocess.run([sys.executable, "-c", code, str(example_cluster_file)], capture_output=True,
                            text=True, check=True)
    assert "additionalContext" in result.stdout and result.stdout.endswith("|[]")


@pytest.mark.parametrize("provider", BUILTINS)
def test_a_task_notification_turn_asks_no_provider(table, provider):
    """Every surface that routes (the hook, route, MCP, canaries) goes through route(): a turn the
    client made itself is silent there, with the reason, whatever the provider."""
    settings = dict(default_settings(), provider=provider)
    text = task_notification_text()
    decision = route(text, table, settings)
    assert decision["additional_context"] is None and decision["routed"] == []
    assert "task-notification" in decision["explanation"] and decision["provider"] == provider
    inner = text.replace("<task-notification>", "").replace("</task-notification>", "")
    if provider != "null":
        assert route(inner, table, settings)["additional_context"] is not None


# --------------------------------------------------------------------------- issue 24: a provider cannot reach the hook
# Through the installed hook: a custom provider now runs in a child interpreter
# (router/providers/providerproc.py; its protocol is tested in tests/router/test_providerproc.py). The
# subprocess timeouts are hang detectors, not speed targets (benchmarks/hook_latency.py).

# Returns the first cluster's first line; the three holes run at import, in the factory, in the call.
CHILD_PROVIDER = """
import os, sys
{at_import}
def make(settings):
    {in_factory}
    def provider(request):
        {in_call}
        cluster_id, _tags, _label, members = request["table"]["clusters"][0]
        slug, _type, hook = members[0]
        return {{"clusters": [cluster_id], "lines": [{{"cluster_id": cluster_id, "slug": slug, "hook": hook}}],
                 "confidence": 0.9, "explanation": "first line"}}
    return provider
"""


def _provider_with(write_provider, at_import="pass", in_factory="pass", in_call="pass"):
    return write_provider(CHILD_PROVIDER.format(at_import=at_import, in_factory=in_factory, in_call=in_call))


def _hook(run_cli, cluster_file, name, tmp_path, budget_ms=3000, timeout=30):
    """The installed hook with provider ``name``; returns (CompletedProcess, log text)."""
    config = tmp_path / "memory-router.toml"
    config.write_text(f'provider = "{name}"\nprovider_timeout_ms = {budget_ms}\n', encoding="utf-8")
    log = tmp_path / "hook.log"
    payload = json.dumps({"session_id": f"s-{next(_names)}", "cwd": str(tmp_path),
                          "hook_event_name": "UserPromptSubmit", "prompt": SETX}).encode()
    result = run_cli("hook", "--clusters", str(cluster_file), "--config", str(config), input=payload,
                     env={"MEMORY_ROUTER_LOG": str(log)}, timeout=timeout)
    return result, log.read_text(encoding="utf-8") if log.exists() else ""


def _gone(pid):
    """True once ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_gone(pid, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


# --------------------------------------------------------------------------- items 16-18, through the hook


def test_issue24_item16_a_provider_holding_the_gil_is_killed_at_the_budget(run_cli, example_cluster_file,
                                                                           write_provider, tmp_path):
    """Item 16: one long C call (a catastrophic regex) holds the GIL, so no thread-based budget
    could interrupt it; the hook waited for Claude Code's timeout."""
    name = _provider_with(write_provider, in_call="import re; re.match(r'(a+)+$', 'a' * 64 + 'b')")
    result, logged = _hook(run_cli, example_cluster_file, name, tmp_path, budget_ms=300)
    assert (result.returncode, result.stdout) == (0, b"")
    assert "took longer than its budget of 300 ms" in logged


def test_issue24_item17_a_provider_printing_cannot_touch_the_hooks_output(run_cli, example_cluster_file,
                                                                         write_provider, tmp_path):
    """Item 17: print() (and a raw write to fd 1) landed on the hook's stdout: the output was no
    longer JSON and the debug text became context."""
    noisy = "print('DEBUG-IMPORT'); os.write(1, b'RAW-FD1\\n')"
    name = _provider_with(write_provider, at_import=noisy, in_factory="print('DEBUG-FACTORY')",
                          in_call="print('DEBUG-CALL'); sys.stdout.flush()")
    result, logged = _hook(run_cli, example_cluster_file, name, tmp_path)
    assert result.returncode == 0 and b"DEBUG" not in result.stdout and b"RAW" not in result.stdout
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Routed memory cluster: layer1_project_memory_router")
    assert logged == ""


def test_issue24_item18_a_provider_calling_os_exit_does_not_set_the_hooks_status(run_cli, example_cluster_file,
                                                                                write_provider, tmp_path):
    """Item 18: os._exit(2) in a provider exited the hook with 2, and Claude Code erased the prompt."""
    name = _provider_with(write_provider, in_call="os._exit(2)")
    result, logged = _hook(run_cli, example_cluster_file, name, tmp_path)
    assert (result.returncode, result.stdout) == (0, b"")
    assert "its process exited with status 2 before answering" in logged


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize("escapes", [False, True], ids=["child-of-provider", "setsid-daemon"])
def test_issue24_item18_a_forking_provider_cannot_hold_the_hooks_stdout(run_cli, example_cluster_file,
                                                                       write_provider, tmp_path, escapes):
    """Item 18: a provider's forked child kept the hook's stdout open for as long as it lived, so
    Claude Code waited for it. Now the hook answers at once; the forked child is killed with the
    provider's process group, unless it left the group (setsid), and then it holds nothing of the hook's."""
    pid_file = tmp_path / "grandchild.pid"
    fork = ("if os.fork() == 0:\n"
            f"            {'os.setsid()' if escapes else 'pass'}\n"
            f"            open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
            "            import time; time.sleep(60); os._exit(0)\n"
            "        import time\n"
            f"        while not os.path.exists({str(pid_file)!r}): time.sleep(0.01)")
    name = _provider_with(write_provider, in_call=fork)
    try:
        result, logged = _hook(run_cli, example_cluster_file, name, tmp_path, timeout=20)
        assert result.returncode == 0 and logged == ""
        assert json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"].startswith("Routed memory cluster")
        if not escapes:
            assert _wait_gone(int(pid_file.read_text())), "the provider's forked child outlived the prompt"
    finally:
        grandchild = int(pid_file.read_text()) if pid_file.exists() else None
        if grandchild is not None and not _gone(grandchild):
            os.kill(grandchild, signal.SIGKILL)
