"""``memory-router tokens report`` end to end on the example store (no network, ever)."""

import json
import os
import shutil
import sys
import types

import pytest

from harness.slim import index as slim
from harness.tokens import sessionmodel
from harness.tokens import counts as tk
from harness.cli import main
from router.store.clusterfile import load_cluster_file
from router.config import bundled_example_dir
from router.configfile import parse_config_file
from router.config import default_settings
from router.providers.provider import build_table
from router.routing.score import build_routing_table
from router.hooks.session import route_fresh
from harness.tokens.report import DEFAULT_TURNS

LONG_SESSION = "v2.0.76-tools.jsonl"   # first reply: input 10, cache 8889 + 17919, output 1 then 358
TOOL_HEAVY = "v2.1.38-tools.jsonl"
NO_ASSISTANT = "v2.1.38-subagent/subagents"   # a subagent's file: only sidechain rows, no call of a session

PROMPTS = [
    "I set an env var with setx but the Bash tool does not see it, even after a reboot",
    "my PUBLIC_ env var is undefined in the Cloudflare Workers build, I set it as a Secret \u2014 why?",
    "refactor this loop",
    "what is the capital of Australia?",
    "how do I take a pg_dump of the postgres server on anvil",
]


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    import urllib.request

    def refuse(*args, **kwargs):
        raise AssertionError("a test tried to reach the network")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)


@pytest.fixture(autouse=True)
def without_ctok(monkeypatch):
    # Whatever is installed here, tests decide whether ctok exists.
    monkeypatch.setitem(sys.modules, "ctok", None)


@pytest.fixture
def paths(tmp_path):
    example = bundled_example_dir()
    clusters = os.path.join(example, "memory-layer1-clusters.md")
    flat = tmp_path / "MEMORY.flat.md"
    shutil.copy(os.path.join(example, "MEMORY.md"), flat)
    index = load_cluster_file(clusters)
    hot = parse_config_file(os.path.join(example, "memory-router.toml"))["hot_strip"]
    slim_path = tmp_path / "MEMORY.slim.md"
    slim_path.write_text(slim.assemble_slim_index(slim.build_hot_strip(index, hot), slim.render_layer0_router(index)),
                         encoding="utf-8")
    suite = tmp_path / "suite.yaml"
    # The expectations only make the suite valid; the report uses the prompts, not the verdicts.
    cases = "".join(f"  - id: case{i}\n    prompt: {json.dumps(p)}\n    max_chars: 9500\n"
                    for i, p in enumerate(PROMPTS))
    suite.write_text(f"clusters: {json.dumps(clusters)}\ncases:\n{cases}", encoding="utf-8")
    return types.SimpleNamespace(flat=flat, slim=slim_path, suite=suite, clusters=clusters)


def report(capsys, *args):
    code = main(["tokens", "report", *map(str, args), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_report_sections_on_the_example_store(paths, capsys):
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite, "--turns", 10)
    assert result["tokenizer"]["method"] == "estimate"
    loaded = result["always_loaded"]
    flat_text = paths.flat.read_text(encoding="utf-8")
    slim_text = paths.slim.read_text(encoding="utf-8")
    assert loaded["flat"]["bytes"] == len(flat_text.encode()) == 18583
    assert loaded["slim"]["bytes"] == len(slim_text.encode()) <= 5500
    assert loaded["flat"]["tokens"] == tk.estimate_tokens(flat_text)
    assert loaded["slim"]["tokens"] == tk.estimate_tokens(slim_text)
    assert loaded["saved"]["tokens"] == loaded["flat"]["tokens"] - loaded["slim"]["tokens"]
    assert loaded["flat"]["tokens_method"] == "estimate" and loaded["flat"]["truncated"] is False

    # (b) recomputed independently: route each prompt, count the wrapped injection.
    table = build_table(load_cluster_file(paths.clusters))
    expected = []
    for prompt in PROMPTS:
        # what a fresh session is sent (the line selection applied)
        text = route_fresh(prompt, table, default_settings())["additional_context"]
        expected.append(tk.estimate_tokens(tk.rendered_injection(text)) if text else 0)
    injections = result["injections"]
    assert [row["tokens"] for row in injections["per_prompt"]] == expected
    assert injections["prompts"] == 5
    assert injections["injecting"] == sum(1 for t in expected if t) >= 3
    assert injections["share_injecting"] == round(injections["injecting"] / 5, 3)
    assert injections["tokens"]["max"] == max(expected)
    assert injections["tokens"]["method"] == "estimate"
    assert injections["per_prompt"][2]["tokens"] == 0  # "refactor this loop" is silent

    # (c) runs the hook's session stage: 10 prompts cycle the 5 twice, and the second round finds
    # every line it needs held, so it sends nothing and slim pays the first round's lines on every
    # later call, never twice.
    session = result["session"]
    assert session["turns"] == 10 and session["calls_per_prompt"] == 1
    flat_tokens, slim_tokens = loaded["flat"]["tokens"], loaded["slim"]["tokens"]
    routed, worst = session["scenarios"]["routed"], session["scenarios"]["worst"]
    five = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite,
                  "--turns", 5)["session"]["scenarios"]["routed"]
    assert 0 < five["sent_tokens"] <= sum(expected)
    assert routed["sent_tokens"] == five["sent_tokens"]
    assert routed["flat_total"] == 10 * flat_tokens and routed["compactions"] == 0
    assert routed["slim_total"] == five["slim_total"] + 5 * (slim_tokens + five["sent_tokens"])
    # The worst case sends at least as much as the router does, prompt by prompt.
    assert worst["slim_total"] >= routed["slim_total"] and worst["sent_tokens"] > routed["sent_tokens"]
    assert "spread order" in session["modelled"] and "estimates" in session["estimate"]
    assert result["transcripts"] is None


def test_calls_per_prompt_scales_totals_not_break_even(paths, capsys):
    one = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite)
    three = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite,
                   "--calls-per-prompt", 3)
    for name in ("routed", "worst"):
        a, b = one["session"]["scenarios"][name], three["session"]["scenarios"][name]
        assert b["flat_total"] == 3 * a["flat_total"]
        assert b["break_even_prompts"] == a["break_even_prompts"]
    assert one["session"]["turns"] == DEFAULT_TURNS


def test_without_a_prompt_set_the_net_is_not_claimed(paths, capsys):
    # No --suite, no --history, and no store here (so no utterances file): (a) only.
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim)
    assert result["injections"] is None and result["session"] is None
    assert any("net saving cannot be judged" in note for note in result["notes"])
    # The note says the point itself; it cites no document that does not ship (issue 29 item 8).
    assert not any("\u00a7" in note or "spec" in note for note in result["notes"])


def test_without_a_suite_the_stores_own_utterances_are_the_prompt_set(paths, capsys, tmp_path):
    store = tmp_path / "brain"
    store.mkdir()
    example = bundled_example_dir()
    for name in ("memory-layer1-clusters.md", "memory-layer1-clusters.utterances.tsv"):
        shutil.copy(os.path.join(example, name), store / name)
    clusters = store / "memory-layer1-clusters.md"
    from harness.tokens.report import utterance_prompts

    prompts, source = utterance_prompts(str(clusters))
    assert len(prompts) > 100 and source == str(store / "memory-layer1-clusters.utterances.tsv")
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--clusters", clusters)
    injections = result["injections"]
    assert injections["prompt_set"] == {"kind": "utterances", "from": [source], "prompts": len(prompts)}
    assert injections["prompts"] == len(prompts) and injections["suite"] is None
    assert result["session"] is not None
    assert any(f"the store's own {len(prompts)} utterances" in note for note in result["notes"])
    assert main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim),
                 "--clusters", str(clusters)]) == 0
    assert f"prompts: the store's own utterances (no --suite): {source}" in capsys.readouterr().out


def test_history_takes_the_prompts_you_typed(paths, capsys, tmp_path):
    from support.replay_sessions import write_session

    history = tmp_path / "history"
    history.mkdir()
    write_session(history, "s1", [(PROMPTS[0], []), (PROMPTS[2], []), "compact", (PROMPTS[1], [])])
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--clusters", paths.clusters,
                    "--history", history)
    injections = result["injections"]
    # The typed prompts, in order; /compact is a slash command, not one of them.
    assert injections["prompt_set"] == {"kind": "history", "from": [str(history)], "prompts": 3}
    expected = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite)
    rows = expected["injections"]["per_prompt"]
    assert injections["per_prompt"] == [dict(rows[i], prompt_index=n) for n, i in enumerate((0, 2, 1))]
    # (c) models the session as it was: its turns (the /compact turn included), its compaction.
    session = result["session"]
    assert session["compaction"]["source"] == "history" and session["calls_per_prompt"] == "as in the transcripts"
    routed, worst = session["scenarios"]["routed"], session["scenarios"]["worst"]
    assert routed["compactions"] == worst["compactions"] == 1 and routed["sessions"] == 1
    assert routed["prompts"] == session["turns"] == 4
    assert 0 < routed["sent_tokens"] <= worst["sent_tokens"]


def test_history_with_no_directory_reads_this_projects_transcripts(paths, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--history"]) == 2
    assert "no Claude Code transcripts for this project" in capsys.readouterr().err


def test_measured_first_calls_from_real_transcripts(paths, capsys, transcript_fixtures):
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim,
                    "--before", transcript_fixtures / LONG_SESSION, "--after", transcript_fixtures / TOOL_HEAVY)
    before, after = result["transcripts"]["before"], result["transcripts"]["after"]
    assert before["method"] == after["method"] == result["transcripts"]["method"] == "measured"
    assert before["total_input_tokens"] == 10 + 8889 + 17919
    assert before["output_tokens"] == 358  # the last streamed row, not the first (1)
    assert result["transcripts"]["delta"]["total_input_tokens"] == \
        after["total_input_tokens"] - before["total_input_tokens"]
    assert before["reader"]["bad_lines"] == 0


def test_transcript_without_api_calls_exits_2(paths, capsys, transcript_fixtures):
    [no_assistant] = sorted((transcript_fixtures / NO_ASSISTANT).glob("agent-*.jsonl"))
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim),
                 "--before", str(no_assistant)])
    assert code == 2
    assert "no assistant line with usage" in capsys.readouterr().err


def test_api_tokenizer_refuses_without_a_key(paths, capsys):
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--tokenizer", "api"])
    assert code == 2
    err = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in err and "nothing was sent" in err


def test_api_tokenizer_with_a_key_labels_figures_api(paths, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    calls = []

    def fake_api_count_message(model, key):
        calls.append((model, key))
        return lambda text: 5 + len(text)

    monkeypatch.setattr(tk, "api_count_message", fake_api_count_message)
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", paths.suite,
                    "--tokenizer", "api", "--model", "claude-test")
    assert calls == [("claude-test", "test-key")]
    assert result["tokenizer"]["method"] == "api"
    assert result["always_loaded"]["flat"]["tokens"] == len(paths.flat.read_text(encoding="utf-8"))
    assert result["injections"]["tokens"]["method"] == "api"
    assert result["session"]["tokens_method"] == "api"


def fake_ctok_module():
    module = types.ModuleType("ctok")
    module.__version__ = "0.0-test"
    module.token_count = lambda text, version=None: 7 + len(text.split())
    return module


def test_offline_tokenizer_without_ctok_exits_2(paths, capsys):
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--tokenizer", "offline"])
    assert code == 2
    assert tk.ctok_install_command() in capsys.readouterr().err


@pytest.mark.parametrize("version, relaxed", [((3, 11, 7), True), ((3, 12, 0), False), ((3, 13, 1), False)])
def test_the_ctok_hint_installs_where_this_memory_router_runs(version, relaxed):
    import shlex

    # ctok's releases declare Python >= 3.12: plain `pip install ctok` finds nothing on 3.11 (issue 36 item 3).
    words = shlex.split(tk.ctok_install_command("/opt/my tools/venv/bin/python", version))
    assert words[:4] == ["/opt/my tools/venv/bin/python", "-m", "pip", "install"] and words[-1] == "ctok"
    assert ("--ignore-requires-python" in words) is relaxed


@pytest.mark.parametrize("choice", ["offline", "auto"])
def test_ctok_is_used_when_importable(paths, capsys, monkeypatch, choice):
    monkeypatch.setitem(sys.modules, "ctok", fake_ctok_module())
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--tokenizer", choice)
    assert result["tokenizer"]["method"] == "offline"
    assert result["always_loaded"]["slim"]["tokens"] == len(paths.slim.read_text(encoding="utf-8").split())


def test_auto_without_ctok_is_an_estimate_and_says_so(paths, capsys):
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim)
    assert result["tokenizer"] == {"method": "estimate", "detail": tk.ESTIMATE_RULE}
    assert any("estimate" in note and tk.ctok_install_command() in note for note in result["notes"])


def test_the_same_file_as_flat_and_slim_is_refused(paths, capsys, tmp_path):
    # Before a render MEMORY.md is both: comparing it with itself would report "saved 0" (issue 36 item 3).
    assert main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.flat)]) == 2
    assert "--flat and --slim are the same file" in capsys.readouterr().err
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(paths.flat.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["tokens", "report", "--memory-dir", str(memory), "--flat", "MEMORY.md"]) == 2
    assert "the same file" in capsys.readouterr().err


def test_before_a_render_the_fix_is_a_render_that_works(paths, capsys, tmp_path, monkeypatch):
    import shlex

    memory = tmp_path / "my memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(paths.flat.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["tokens", "report", "--memory-dir", str(memory)]) == 2
    err = capsys.readouterr().err
    assert "no slim index to compare with" in err
    command = err.split("fix: run ", 1)[1].split(" first (slim rollback undoes it)")[0]
    words = shlex.split(command)
    assert words[:3] == ["memory-router", "slim", "render"] and words[-1] == str(memory)


@pytest.mark.parametrize("args, message", [
    (["--turns", "0"], "--turns"),
    (["--calls-per-prompt", "0"], "--calls-per-prompt"),
    (["--suite", "missing.yaml"], "missing.yaml"),
])
def test_bad_arguments_exit_2(paths, capsys, args, message):
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), *args])
    assert code == 2
    assert message in capsys.readouterr().err


def test_unreadable_index_exits_2(paths, capsys, tmp_path):
    code = main(["tokens", "report", "--flat", str(tmp_path / "nope.md"), "--slim", str(paths.slim)])
    assert code == 2
    assert "cannot read flat index" in capsys.readouterr().err


def test_tables_for_people(paths, capsys, transcript_fixtures):
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--suite",
                 str(paths.suite), "--before", str(transcript_fixtures / LONG_SESSION)])
    out = capsys.readouterr().out
    assert code == 0
    for heading in ("(a) always loaded", "(b) injection per prompt", "(c) modelled session", "(d) first API call"):
        assert heading in out
    assert "break-even" in out and "estimate" in out


def test_bundled_example_suite_when_present(paths, capsys):
    from canaries.suite import bundled_suites

    suites = [s for s in bundled_suites() if s.endswith("example.yaml")]
    if not suites:
        pytest.skip("canaries/example.yaml not written yet")
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", suites[0])
    injections = result["injections"]
    assert injections["prompts"] >= 60
    assert 0 < injections["share_injecting"] < 1
    routed, worst = result["session"]["scenarios"]["routed"], result["session"]["scenarios"]["worst"]
    # The example store's flat index is 4.9x its slim one: even the worst this router can do, with
    # lines held until a compaction, costs less than flat (the old model's "largest injection on
    # every prompt, paid again on every call" drew a loss the hook cannot make).
    assert routed["share_of_flat"] <= worst["share_of_flat"] < 1
    assert worst["break_even_prompts"] is None and worst["horizon"] >= 60


class FakeResponse:
    def __init__(self, body):
        self.body = body

    def read(self):
        return self.body

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_api_request_shape_with_a_fake_urlopen(monkeypatch):
    import urllib.request

    sent = []

    def fake_urlopen(request, timeout=None):
        sent.append(request)
        text = json.loads(request.data)["messages"][0]["content"]
        return FakeResponse(json.dumps({"input_tokens": 8 + len(text)}).encode())

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    count = tk.api_count_message("claude-test", "sk-test")
    assert count("hello") == 13
    request = sent[0]
    assert request.full_url == tk.COUNT_TOKENS_URL and request.get_method() == "POST"
    headers = {k.lower(): v for k, v in request.header_items()}
    assert headers["x-api-key"] == "sk-test" and headers["anthropic-version"] == "2023-06-01"
    assert json.loads(request.data) == {"model": "claude-test", "messages": [{"role": "user", "content": "hello"}]}


@pytest.mark.parametrize("failure, message", [
    ("http", "HTTP 401"),
    ("unreachable", "call failed"),
    ("no-field", "without input_tokens"),
])
def test_api_failures_are_one_line_errors(monkeypatch, failure, message):
    import io
    import urllib.error
    import urllib.request

    from router.errors import MemoryRouterError

    def fake_urlopen(request, timeout=None):
        if failure == "http":
            raise urllib.error.HTTPError(request.full_url, 401, "Unauthorized", {}, io.BytesIO(b'{"error":"bad key"}'))
        if failure == "unreachable":
            raise urllib.error.URLError("no route to host")
        return FakeResponse(b'{"type": "error"}')

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    with pytest.raises(MemoryRouterError) as caught:
        tk.api_count_message("m", "k")("text")
    assert message in str(caught.value) and caught.value.exit_code == 1


def test_people_see_which_cluster_file_the_injections_were_routed_with(paths, capsys, tmp_path):
    # A suite that names no cluster file is routed with the config's or, failing that, the bundled
    # example store: the figures are about that store, so the report must say which one it was.
    suite = tmp_path / "no-clusters.yaml"
    suite.write_text(paths.suite.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", suite)
    used = result["injections"]["cluster_file"]
    assert used == os.path.abspath(os.path.join(bundled_example_dir(), "memory-layer1-clusters.md"))
    code = main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--suite", str(suite)])
    out = capsys.readouterr().out
    assert code == 0
    assert f"prompts: the suite's: {suite}" in out and f"routed with: {used}" in out


@pytest.fixture
def rendered_memory_dir(tmp_path, capsys):
    """A memory dir after `slim render`: MEMORY.md slim, MEMORY.archive-<stamp>.md flat."""
    example = bundled_example_dir()
    memory = tmp_path / "memory"
    memory.mkdir()
    shutil.copy(os.path.join(example, "MEMORY.md"), memory / "MEMORY.md")
    # --force: no router hook in this test's project; what it routes is not measured here
    assert main(["slim", "render", "--memory-dir", str(memory), "--config",
                 os.path.join(example, "memory-router.toml"), "--force"]) == 0
    capsys.readouterr()
    return memory


def test_memory_dir_finds_the_flat_archive_and_the_slim_index_from_anywhere(rendered_memory_dir, capsys, tmp_path,
                                                                           monkeypatch):
    # Issue 11: the Quick start's --flat MEMORY.archive-<stamp>.md --slim MEMORY.md worked only from
    # inside the memory directory.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    archive = next(rendered_memory_dir.glob("MEMORY.archive-*.md"))
    result = report(capsys, "--memory-dir", rendered_memory_dir)
    assert result["always_loaded"]["flat"]["path"] == str(archive)
    assert result["always_loaded"]["slim"]["path"] == str(rendered_memory_dir / "MEMORY.md")
    assert result["always_loaded"]["slim"]["bytes"] < result["always_loaded"]["flat"]["bytes"]
    # the Quick start's relative names, from elsewhere, with --memory-dir
    again = report(capsys, "--memory-dir", rendered_memory_dir, "--flat", archive.name, "--slim", "MEMORY.md")
    assert again["always_loaded"] == result["always_loaded"]


def test_memory_dir_comes_from_the_config(rendered_memory_dir, capsys, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "memory-router.toml").write_text(f'memory_dir = "{rendered_memory_dir}"\n')
    monkeypatch.chdir(project)
    assert report(capsys)["always_loaded"]["slim"]["path"] == str(rendered_memory_dir / "MEMORY.md")


@pytest.mark.parametrize("setup, message", [
    ("none", "no --flat and --slim given"),
    ("no-archive", "no MEMORY.archive-<UTC stamp>.md"),
    ("missing", "memory directory does not exist"),
])
def test_memory_dir_problems_exit_2(capsys, tmp_path, monkeypatch, setup, message):
    monkeypatch.chdir(tmp_path)
    args = []
    if setup == "no-archive":
        (tmp_path / "memory").mkdir()
        (tmp_path / "memory" / "MEMORY.md").write_text("# Memory Index\n")
        args = ["--memory-dir", str(tmp_path / "memory")]
    elif setup == "missing":
        args = ["--memory-dir", str(tmp_path / "nope")]
    assert main(["tokens", "report", *args]) == 2
    assert message in capsys.readouterr().err


def test_the_session_curve_is_drawn_in_80_columns(paths, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    # A "flat" index 100 tokens above the slim one: the held lines soon cost more than that, so
    # both break-evens fall inside the chart and are marked on its axis.
    flat = paths.slim.with_name("MEMORY.nearly-slim.md")
    flat.write_text(paths.slim.read_text(encoding="utf-8") + "x" * 400, encoding="utf-8")
    args = ("--flat", flat, "--slim", paths.slim, "--suite", paths.suite, "--turns", 80)
    data = report(capsys, *args)
    curve = data["session"]["curve"]
    shown = [b for b in curve["break_even"].values() if b and b <= curve["prompts"]]
    assert curve["prompts"] == 80 and len(shown) == 2
    later = max(shown)
    assert curve["series"]["flat"][0] == data["always_loaded"]["flat"]["tokens"]
    assert main(["tokens", "report", *map(str, args)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = lines.index("input tokens sent so far, after each prompt (tokens: estimate)")
    chart_lines = lines[start + 1:start + 20]
    assert all(len(line) <= 80 for line in chart_lines + [l for l in lines if l[:1] in "┏┃┡│└"])
    assert sum(line.count("o") + line.count("#") for line in chart_lines[:16]) >= 60   # flat drawn across
    assert any("x" in line for line in chart_lines[:16]) and any("*" in line for line in chart_lines[:16])
    assert f"{later} " in chart_lines[17] and "break-even" in chart_lines[17]
    assert "o flat" in chart_lines[18] and "* slim (routed)" in chart_lines[18]
    # (c) is one column per scenario: every figure of the model on its own row
    assert "│ break-even (prompts)" in out and "│ first heavier call" in out


def test_a_suite_without_clusters_is_routed_with_the_project_store_as_canary_run_finds_it(paths, capsys, tmp_path,
                                                                                        monkeypatch):
    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    shutil.copy(paths.clusters, project / "brain" / "memory-layer1-clusters.md")
    suite = project / "no-clusters.yaml"
    suite.write_text(paths.suite.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    monkeypatch.chdir(project)
    result = report(capsys, "--flat", paths.flat, "--slim", paths.slim, "--suite", suite)
    brain = str(project / "brain" / "memory-layer1-clusters.md")
    assert result["injections"]["cluster_file"] == brain
    assert result["store"] == {"cluster_file": brain, "cluster_file_from": f"brain/ under {project}",
                               "memory_dir": None, "memory_dir_from": "not read: --flat and --slim given",
                               "config_file": None}
    assert main(["tokens", "report", "--flat", str(paths.flat), "--slim", str(paths.slim), "--suite", str(suite)]) == 0
    assert f"cluster file: {brain} (brain/ under {project})\n" in capsys.readouterr().out


def test_the_memory_directory_read_is_named(rendered_memory_dir, capsys):
    result = report(capsys, "--memory-dir", rendered_memory_dir)
    assert result["store"]["memory_dir"] == str(rendered_memory_dir)
    assert result["store"]["memory_dir_from"] == "--memory-dir"
    assert result["store"]["cluster_file_from"] == "not read: no --suite, and no store found"
