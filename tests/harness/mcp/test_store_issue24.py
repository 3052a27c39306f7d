"""Issue 24 items 19-21 on the MCP server, and search_memory on utterances: a custom provider
that keeps overrunning stops being called (item 19); a feedback, a ``learn`` run or a new
utterances file reaches the running server's ``route`` (item 20); a damaged learned or utterances
file is logged and left out while every tool keeps serving (item 21). Through the real server
over stdio where the SDK is in the loop, through ``MemoryStore`` where a clock is."""

import json
import os
import shutil
import textwrap
import threading
import time

import pytest

from harness.cli import main
from harness.mcp.breaker import ProviderBreaker
from harness.mcp.store import MemoryStore
from router.config import bundled_cluster_file
from router.configcheck import validate_config
from router.errors import RefusedError
from router.store.learned import LearnedFileError

pytest.importorskip("mcp")

MISSED = "the antivirus makes installing packages painfully slow"   # routes nowhere until taught
DEFENDER = "env_defender_excludes_dev_dir"
MEMORY_FILE = "---\nname: Defender\ndescription: exclude the dev dir\ntype: env\n---\nExclude D:\\dev.\n"
STAMP = "2026-12-01T21:00:00Z"
DAMAGED_LEARNED = "added\tcluster_id\tslug\tterm\tsource\nyesterday\tlayer1_01\t" + DEFENDER + "\tslow\tmcp\n"
DAMAGED_UTTERANCES = "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\nNot A Slug\tantivirus\t-\thand\t-\t" \
                     + STAMP + "\n"


def text_of(result):
    return "".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture
def project(tmp_path):
    """A project with its own copy of the example store, a memory directory and learning on."""
    root = tmp_path / "project"
    (root / "brain").mkdir(parents=True)
    shutil.copy(bundled_cluster_file(), root / "brain" / "memory-layer1-clusters.md")
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / f"{DEFENDER}.md").write_text(MEMORY_FILE, encoding="utf-8")
    (root / "memory-router.toml").write_text(f'clusters = "brain/memory-layer1-clusters.md"\nlearning = true\n'
                                             f'memory_dir = "{memory}"\n', encoding="utf-8")
    return root


def beside(root, suffix):
    return root / "brain" / f"memory-layer1-clusters{suffix}"


def utterances(rows):
    return "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n" + "".join(
        f"{slug}\t{text}\t-\thand\t-\t{STAMP}\n" for slug, text in rows)


def store_of(root, breaker=None, **settings):
    config = validate_config({"learning": True, **settings}, str(root / "memory-router.toml"))
    extra = {"breaker": breaker} if breaker else {}
    return MemoryStore(root / "brain" / "memory-layer1-clusters.md", config, memory_dir=root.parent / "memory",
                       **extra)


def slugs_of(decision):
    return [line["slug"] for line in decision["lines"]]


# --------------------------------------------------------------------------- item 19


SLOW_PROVIDER = '''
import os, time
def make(settings):
    def provider(request):
        with open({marker!r}, "a") as handle:
            handle.write(f"{{os.getpid()}}\\n")
        time.sleep(30)
    return provider
'''


@pytest.fixture
def slow_provider(tmp_path, monkeypatch):
    """A custom provider on PYTHONPATH that never answers; each call that starts appends its pid
    to a file."""
    marker = tmp_path / "calls.txt"
    (tmp_path / "k_slow_provider.py").write_text(textwrap.dedent(SLOW_PROVIDER.format(marker=str(marker))),
                                                  encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    return {"name": "k_slow_provider:make", "calls": marker, "pythonpath": os.environ["PYTHONPATH"]}


def calls_made(marker):
    return marker.read_text().split() if marker.exists() else []


class Clock:
    now = 5000.0

    def __call__(self):
        return self.now


def test_item19_a_provider_that_keeps_overrunning_is_not_called_again_for_a_while(project, slow_provider,
                                                                                monkeypatch):
    from router.providers import providerproc

    children = []
    real_run = providerproc.run_provider

    def counted(*args, **kwargs):
        children.append(args[0])
        return real_run(*args, **kwargs)

    monkeypatch.setattr(providerproc, "run_provider", counted)
    clock = Clock()
    store = store_of(project, ProviderBreaker(clock=clock), provider=slow_provider["name"], provider_timeout_ms=150)
    threads = threading.active_count()
    for _ in range(3):
        decision = store.route(MISSED)
        assert decision["explanation"].startswith("failed: provider k_slow_provider:make took longer than its budget")
    assert len(children) == 3
    started = time.monotonic()
    for _ in range(5):
        with pytest.raises(RefusedError, match="overran its budget of 150 ms on 3 calls in a row"):
            store.route(MISSED)
    assert time.monotonic() - started < 0.15 * 5      # refused at once, not after the budget each time
    assert len(children) == 3
    assert store.get_memory(DEFENDER)["body"] == "Exclude D:\\dev.\n"
    assert store.search("defender")["results"]
    # nothing outlives a call: no thread, and every child the provider ran is gone
    assert threading.active_count() == threads
    for pid in calls_made(slow_provider["calls"]):
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)
    clock.now += 60                                   # the cool-off is over: one trial call
    assert store.route(MISSED)["explanation"].startswith("failed: ")
    assert len(children) == 4
    with pytest.raises(RefusedError):                 # it overran again: open again at once
        store.route(MISSED)


def test_item19_a_provider_that_answers_in_time_is_never_refused(project, tmp_path, monkeypatch):
    (tmp_path / "k_quick_provider.py").write_text(textwrap.dedent('''
        def make(settings):
            def provider(request):
                return {"clusters": [], "lines": [], "confidence": 0.0, "explanation": "nothing here"}
            return provider
        '''), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    store = store_of(project, provider="k_quick_provider:make", provider_timeout_ms=4000)
    for _ in range(4):
        assert store.route(MISSED)["explanation"] == "nothing here"
    assert not store.breaker.is_open


def test_item19_the_running_server_answers_a_tool_error_once_the_breaker_opens(project, slow_provider, mcp_session,
                                                                             mcp_env, tmp_path):
    with open(project / "memory-router.toml", "a", encoding="utf-8") as handle:
        handle.write(f'provider = "{slow_provider["name"]}"\nprovider_timeout_ms = 150\n')
    calls = [(f"route-{n}", "route", {"prompt": MISSED}) for n in range(5)] + [
        ("get", "get_memory", {"slug": DEFENDER})]
    out = mcp_session(["mcp"], project, tmp_path, calls=calls,
                      env=mcp_env(project, tmp_path, PYTHONPATH=slow_provider["pythonpath"]))
    for n in range(3):
        result = out["calls"][f"route-{n}"]
        assert result.is_error is False and "took longer than its budget" in \
            result.structured_content["explanation"]
    for n in (3, 4):
        assert out["calls"][f"route-{n}"].is_error is True
        assert "overran its budget of 150 ms on 3 calls in a row" in text_of(out["calls"][f"route-{n}"])
    assert out["calls"]["get"].structured_content["slug"] == DEFENDER
    # (a child on a loaded machine may be killed before the provider's call writes its pid)
    assert len(calls_made(slow_provider["calls"])) <= 3


# --------------------------------------------------------------------------- item 20


def test_item20_record_feedback_reaches_the_running_servers_route(project, mcp_session, tmp_path):
    calls = [("before", "route", {"prompt": MISSED}),
             ("teach", "record_feedback", {"prompt": MISSED, "slug": DEFENDER, "useful": True}),
             ("after", "route", {"prompt": MISSED})]
    out = mcp_session(["mcp"], project, tmp_path, calls=calls)
    assert DEFENDER not in slugs_of(out["calls"]["before"].structured_content)
    assert out["calls"]["teach"].structured_content["written"] is True
    after = out["calls"]["after"].structured_content
    assert DEFENDER in slugs_of(after) and after["routed"] == ["layer1_01"]


def test_item20_a_learn_run_reaches_the_running_store(project, session, tmp_path, capsys):
    store = store_of(project)
    assert DEFENDER not in slugs_of(store.route(MISSED))
    s = session()
    s.prompt(MISSED)
    s.tool_call("Read", {"file_path": f"/home/dev/.claude/projects/x/memory/{DEFENDER}.md"}, "body")
    s.assistant("done")
    assert main(["learn", str(s.write(tmp_path / "s.jsonl")), "--config", str(project / "memory-router.toml")]) == 0
    capsys.readouterr()
    assert DEFENDER in slugs_of(store.route(MISSED))


def test_item20_a_new_or_edited_utterances_file_reaches_the_running_store(project):
    store = store_of(project)
    assert not store.route(MISSED).get("utterance_hits")
    beside(project, ".utterances.tsv").write_text(utterances([(DEFENDER, "antivirus makes installs slow")]),
                                                  encoding="utf-8")
    # every prompt word the member's utterances hold (router.routing.utterscore), not only the deciding ones
    assert store.route(MISSED)["utterance_hits"] == {DEFENDER: ["antivirus", "installing", "slow"]}
    beside(project, ".utterances.tsv").write_text(utterances([(DEFENDER, "antivirus scans every file")]),
                                                  encoding="utf-8")
    assert store.route(MISSED)["utterance_hits"] == {DEFENDER: ["antivirus"]}


# --------------------------------------------------------------------------- item 21


@pytest.mark.parametrize("suffix, damaged, line, left_out", [
    (".learned.tsv", DAMAGED_LEARNED, ":2:1: added 'yesterday'", "without learned terms"),
    (".utterances.tsv", DAMAGED_UTTERANCES, ":2:1: invalid slug 'Not A Slug'", "without utterances"),
], ids=["learned", "utterances"])
def test_item21_a_damaged_file_is_logged_and_every_tool_keeps_serving(project, mcp_session, mcp_env, tmp_path,
                                                                      suffix, damaged, line, left_out):
    damaged_file = beside(project, suffix)
    damaged_file.write_text(damaged, encoding="utf-8")
    log = tmp_path / "router.log"
    calls = [("route", "route", {"prompt": "setx PATH never reaches the bash tool on windows"}),
             ("search", "search_memory", {"query": "real-time scanning excluding"}),
             ("get", "get_memory", {"slug": DEFENDER}),
             ("feedback", "record_feedback", {"prompt": MISSED, "slug": DEFENDER, "useful": True})]
    out = mcp_session(["mcp"], project, tmp_path, calls=calls, read=["memory-router://clusters"],
                      env=mcp_env(project, tmp_path, MEMORY_ROUTER_LOG=log))
    route = out["calls"]["route"]
    assert route.is_error is False and route.structured_content["routed"], text_of(route)
    # issue 35 items 1 and 7: the bad row is skipped (the rest are used) and named to the agent by place only
    assert any(p.startswith(f"{damaged_file}:2:1: a bad row was skipped") for p in route.structured_content["store_problems"])
    assert "yesterday" not in str(route.structured_content) and "Not A Slug" not in str(route.structured_content)
    assert out["calls"]["search"].structured_content["results"][0]["slug"] == DEFENDER
    assert out["calls"]["get"].structured_content["body"] == "Exclude D:\\dev.\n"
    assert out["reads"]["memory-router://clusters"].startswith("# Memory clusters")
    assert f"{damaged_file}{line}" in log.read_text(encoding="utf-8")
    assert f"{damaged_file}{line}" in out["stderr"] and "Traceback" not in out["stderr"]
    feedback = out["calls"]["feedback"]
    if suffix == ".learned.tsv":   # never rewritten on a guess
        assert feedback.is_error is True and f"{damaged_file}:2:1" in text_of(feedback)
        assert "yesterday" not in text_of(feedback)
    else:
        assert feedback.is_error is False and feedback.structured_content["written"] is True
    assert damaged_file.read_text(encoding="utf-8") == damaged


def test_item21_fixing_the_learned_file_brings_its_terms_back(project):
    store = store_of(project)
    beside(project, ".learned.tsv").write_text(DAMAGED_LEARNED, encoding="utf-8")
    assert store.search("slow")["store_problems"]
    with pytest.raises(LearnedFileError):
        store.record_feedback(MISSED, DEFENDER, True)
    beside(project, ".learned.tsv").write_text(DAMAGED_LEARNED.replace("yesterday", STAMP), encoding="utf-8")
    found = store.search("slow")
    assert "store_problems" not in found
    assert [r["learned_hits"] for r in found["results"] if r["slug"] == DEFENDER] == [["slow"]]


# --------------------------------------------------------------------------- search sees utterances


def test_search_counts_a_word_only_the_memorys_utterances_hold(project):
    beside(project, ".utterances.tsv").write_text(utterances([
        (DEFENDER, "the virus scanner makes every install crawl"),
        ("env_bash_tool_env_var_caching", "my variable is missing in the shell")]), encoding="utf-8")
    store = store_of(project)
    (top,) = store.search("scanner crawl", 1)["results"]
    assert top["slug"] == DEFENDER and top["utterance_hits"] == ["crawl", "scanner"]
    assert top["score"] == pytest.approx(2 * store.settings["member_weight"])
    # a word the memory's own line holds counts once, as its own word
    (own,) = store.search("defender scanner", 1)["results"]
    assert own["slug"] == DEFENDER and "defender" not in own["utterance_hits"]
    off = store_of(project, utterances=False)
    assert off.search("scanner crawl")["total_matches"] == 0


def test_search_by_utterances_finds_what_a_scan_of_every_members_utterances_finds(project):
    from router.tokens import tokenize
    from router.routing.uttertable import stems_of_text

    rows = [(DEFENDER, "the virus scanner makes every install crawl"),
            ("env_bash_tool_env_var_caching", "my variable is missing in the shell"),
            ("env_git_autocrlf_false", "git keeps rewriting my line endings")]
    beside(project, ".utterances.tsv").write_text(utterances(rows), encoding="utf-8")
    store = store_of(project)
    for query in ("crawl", "rewriting endings", "missing variable shell", "scanner"):
        words = tokenize(query)
        expected = {slug for slug, text in rows
                    if any(stems_of_text(word) & stems_of_text(text) for word in words)}
        found = {r["slug"] for r in store.search(query, 50)["results"] if r["utterance_hits"]}
        assert found == expected, query
