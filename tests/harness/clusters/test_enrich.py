"""clusters enrich, the model: a run through the command engine (scripted programs) and through
engines written here, on a store in the real formats (a cluster file rendered by
router.store.clusterfile, Claude Code topic files with front matter); retries, refusals, an interrupted
run resumed, an edit that re-asks only its cluster, the writes."""

import json
import pathlib
import sys

import pytest

from harness.clusters import enrich
from harness.clusters import engines
from router.store.clusterfile import Cluster, ClusterIndex, Member, render_markdown
from router.config import utterances_path
from router.errors import RefusedError
from router.store.utterances import HAND_HASH, parse_utterances_text, read_utterances

FAKE = pathlib.Path(__file__).with_name("fake_engine.py")
NOW = 1796159700.0   # 2026-12-01T21:15:00Z

STORE = [
    ("layer1_pnpm", ("pnpm", "lockfile"), "Node tooling", [
        ("env_pnpm_store_on_d", "env", "the pnpm store lives on D:, not C:"),
        ("feedback_bun_for_scripts", "feedback", "run one-off scripts with bun, never ts-node")]),
    ("layer1_postgres", ("postgres", "backup"), "the Postgres server", [
        ("env_pg_dump_custom_format", "env", "pg_dump -Fc, restore with pg_restore -j 4")]),
    ("layer1_windows", ("windows", "msys"), "Windows dev box", [
        ("env_msys_path_conversion", "env", "Git Bash rewrites /c/ paths: MSYS_NO_PATHCONV=1"),
        ("env_defender_excludes_dev_dir", "env", "Defender made pnpm install slow: exclude D:\\dev"),
        ("env_winget_path_refresh", "env", "winget installs are missing from PATH in open shells")]),
]
TOPIC = "---\nname: {slug}\ndescription: {hook}\nmetadata:\n  type: {type}\n---\n\n{body}\n"


@pytest.fixture
def store(tmp_path):
    """A cluster file (brain/memory-layer1-clusters.md) and a memory directory with topic files
    for all but one memory."""
    brain = tmp_path / "project" / "brain"
    brain.mkdir(parents=True)
    memory = tmp_path / "memory"
    memory.mkdir()
    clusters = []
    for cluster_id, tags, label, members in STORE:
        clusters.append(Cluster(cluster_id, len(members), False, tags, label,
                                tuple(Member(s, t, h, 0) for s, t, h in members), 0))
        for slug, mtype, hook in members:
            if slug != "env_winget_path_refresh":
                (memory / f"{slug}.md").write_text(TOPIC.format(slug=slug, hook=hook, type=mtype,
                                                                body=f"Why {slug} matters, at length."))
    (memory / "MEMORY.md").write_text("".join(f"- [{s}]({s}.md) — {h}\n" for _c, _t, _l, ms in STORE
                                              for s, _ty, h in ms))
    path = brain / "memory-layer1-clusters.md"
    path.write_text(render_markdown(ClusterIndex(clusters)))
    return path, memory


def command(mode, *extra):
    return " ".join([sys.executable, str(FAKE), mode, *map(str, extra)])


def run(store, engine, *, force=False, dry_run=False, per_memory=3, **kwargs):
    cluster_path, memory = store
    plan, writer = enrich.prepare(cluster_path, memory, force=force, dry_run=dry_run)
    events = []
    result = enrich.run_enrich(plan, engine, per_memory, writer, on_event=events.append, sleep=lambda s: None,
                               now=lambda: NOW, **kwargs)
    return plan, writer, result, events


def asked(log):
    return [json.loads(line) for line in pathlib.Path(log).read_text().splitlines()] if log.exists() else []


def test_a_first_run_writes_every_memorys_utterances_from_the_topic_files(store, tmp_path):
    log = tmp_path / "asked.jsonl"
    plan, writer, result, events = run(store, engines.create_engine("command", command=command("good", "--log", log)))
    assert [r["cluster"] for r in asked(log)] == ["layer1_pnpm", "layer1_postgres", "layer1_windows"]
    assert not enrich.failed(result.outcomes) and result.written and result.archived is None
    rows = read_utterances(utterances_path(store[0]))
    assert len(rows) == 6 * 3
    first = rows[0]
    assert (first.slug, first.engine, first.model, first.written) == ("env_pnpm_store_on_d", "command", "-",
                                                                      "2026-12-01T21:15:00Z")
    from router.store.utterances import memory_text_hash
    assert first.memory_hash == memory_text_hash("the pnpm store lives on D:, not C:\n"
                                                 "Why env_pnpm_store_on_d matters, at length.")
    winget = [r for r in rows if r.slug == "env_winget_path_refresh"][0]
    assert winget.memory_hash == memory_text_hash("winget installs are missing from PATH in open shells")
    assert [e.kind for e in events] == ["start", "done"] * 3
    assert [enrich.summary_line(o) for o in result.outcomes][0] == ("layer1_pnpm: 6 utterances for 2 memories, "
                                                                    "12 near-misses")


def test_the_request_carries_the_topic_file_body(store, tmp_path):
    seen = []

    class Spy(engines.Engine):
        name = "spy"

        def ask(self, request):
            seen.append(request)
            return {"utterances": {m["slug"]: ["a b c"] for m in request["memories"]}}

    run(store, Spy())
    memory = seen[0]["memories"][0]
    assert memory == {"slug": "env_pnpm_store_on_d", "type": "env", "hook": "the pnpm store lives on D:, not C:",
                      "body": "Why env_pnpm_store_on_d matters, at length."}
    assert seen[2]["memories"][2]["body"] == ""   # env_winget_path_refresh has no topic file


def test_a_second_run_asks_nothing_and_writes_nothing(store, tmp_path):
    run(store, engines.create_engine("command", command=command("good")))
    path = pathlib.Path(utterances_path(store[0]))
    before = path.stat().st_mtime_ns, path.read_bytes()
    plan, writer, result, _events = run(store, engines.create_engine("command", command=command("crash")))
    assert plan.jobs == () and result.outcomes == [] and not result.written
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before


def test_an_edit_to_one_memory_re_asks_only_its_cluster(store, tmp_path):
    run(store, engines.create_engine("command", command=command("good")))
    topic = store[1] / "env_pg_dump_custom_format.md"
    topic.write_text(topic.read_text().replace("at length", "and a new paragraph"))
    log = tmp_path / "asked.jsonl"
    engine = engines.create_engine("command", command=command("good", "--log", log))
    _plan, _writer, result, _events = run(store, engine)
    assert [(r["cluster"], r["slugs"]) for r in asked(log)] == [("layer1_postgres", ["env_pg_dump_custom_format"])]
    assert result.archived is not None and pathlib.Path(result.archived).name.startswith(
        "memory-layer1-clusters.utterances.archive-")


def test_an_edit_to_one_member_of_a_bigger_cluster_sends_the_others_as_neighbours(store, tmp_path):
    run(store, engines.create_engine("command", command=command("good")))
    topic = store[1] / "env_msys_path_conversion.md"
    topic.write_text(topic.read_text() + "\nMore.\n")
    seen = []

    class Spy(engines.Engine):
        name = "spy"

        def ask(self, request):
            seen.append(request)
            return {"utterances": {m["slug"]: ["new words"] for m in request["memories"]}}

    run(store, Spy())
    (request,) = seen
    assert [m["slug"] for m in request["memories"]] == ["env_msys_path_conversion"]
    assert [n["slug"] for n in request["neighbours"]] == ["env_defender_excludes_dev_dir", "env_winget_path_refresh"]
    rows = read_utterances(utterances_path(store[0]))
    assert [r.text for r in rows if r.slug == "env_msys_path_conversion"] == ["new words"]
    assert len([r for r in rows if r.slug == "env_defender_excludes_dev_dir"]) == 3   # untouched


def test_an_interrupted_run_keeps_what_finished_and_resumes(store, tmp_path):
    class Interrupted(engines.Engine):
        name = "command"
        calls = 0

        def ask(self, request):
            Interrupted.calls += 1
            if Interrupted.calls == 2:
                raise KeyboardInterrupt
            return {"utterances": {m["slug"]: ["first run words"] for m in request["memories"]}}

    with pytest.raises(KeyboardInterrupt):
        run(store, Interrupted())
    rows = read_utterances(utterances_path(store[0]))
    assert {r.slug for r in rows} == {"env_pnpm_store_on_d", "feedback_bun_for_scripts"}
    log = tmp_path / "asked.jsonl"
    engine = engines.create_engine("command", command=command("good", "--log", log))
    _plan, _writer, result, _events = run(store, engine)
    # utterances resume where the run stopped; the near-misses, which the interrupted engine never
    # wrote, are asked of every cluster (pnpm's with no memory to re-ask)
    assert [r["cluster"] for r in asked(log) if r["slugs"]] == ["layer1_postgres", "layer1_windows"]
    assert [r["cluster"] for r in asked(log) if not r["slugs"]] == ["layer1_pnpm"]
    rows = read_utterances(utterances_path(store[0]))
    assert [r.text for r in rows if r.slug == "env_pnpm_store_on_d"] == ["first run words"]
    assert len(rows) == 2 + 4 * 3


def test_a_failing_cluster_is_reported_and_the_others_are_kept(store, tmp_path):
    engine = engines.create_engine("command", command=command("good", "--fail-cluster", "layer1_postgres"))
    _plan, _writer, result, _events = run(store, engine)
    (bad,) = enrich.failed(result.outcomes)
    assert enrich.summary_line(bad) == ("layer1_postgres: FAILED, nothing written for 1 memories: the program "
                                        "failed (exit 1): refusing cluster layer1_postgres")
    rows = read_utterances(utterances_path(store[0]))
    assert "env_pg_dump_custom_format" not in {r.slug for r in rows} and len(rows) == 5 * 3


@pytest.mark.parametrize("mode", ["notjson", "wrongshape", "crash", "flood"])
def test_a_refused_answer_keeps_the_previous_file_byte_for_byte(store, mode):
    run(store, engines.create_engine("command", command=command("good")), per_memory=2)
    path = pathlib.Path(utterances_path(store[0]))
    before = path.read_bytes()
    _plan, _writer, result, _events = run(store, engines.create_engine("command", command=command(mode)), force=True)
    assert len(enrich.failed(result.outcomes)) == 3 and not result.written
    assert path.read_bytes() == before
    assert list(path.parent.glob("*.archive-*")) == []


def test_a_lying_answer_is_trimmed_with_one_line_saying_what_and_why(store):
    _plan, _writer, result, _events = run(store, engines.create_engine("command", command=command("lie")))
    line = enrich.summary_line(result.outcomes[0])
    assert line.startswith("layer1_pnpm: 3 utterances for 2 memories; ")
    assert "ignored 1 slug(s) not asked for: 'not_asked_slug'" in line and "past 3 per memory" in line
    assert "\n" not in line
    rows = read_utterances(utterances_path(store[0]))
    assert all(len(r.text) <= 200 for r in rows) and "not_asked_slug" not in {r.slug for r in rows}


def test_transient_errors_are_retried_with_exponential_backoff(store):
    class Flaky(engines.Engine):
        name = "command"
        failures = 2

        def ask(self, request):
            if Flaky.failures:
                Flaky.failures -= 1
                raise engines.EngineError("HTTP 529 overloaded", transient=True)
            return {"utterances": {m["slug"]: ["ok words"] for m in request["memories"]}}

    slept = []
    plan, writer = enrich.prepare(*store)
    events = []
    result = enrich.run_enrich(plan, Flaky(), 3, writer, on_event=events.append, sleep=slept.append)
    assert slept == [2.0, 4.0] and not enrich.failed(result.outcomes)
    assert [e.detail for e in events if e.kind == "retry"] == [
        "HTTP 529 overloaded; trying again in 2 s", "HTTP 529 overloaded; trying again in 4 s"]
    assert result.outcomes[0].attempts == 3 and "(after 3 attempts)" in enrich.summary_line(result.outcomes[0])


def test_retries_stop_after_the_limit_and_honour_retry_after():
    class Always(engines.Engine):
        def ask(self, request):
            raise engines.EngineError("rate limited", transient=True, retry_after=7.0)

    slept = []
    with pytest.raises(engines.EngineError) as caught:
        enrich.ask_with_retries(Always(), {}, retries=3, sleep=slept.append)
    assert slept == [7.0, 7.0, 7.0] and caught.value.attempts == 4


def test_a_non_transient_error_is_not_retried():
    class Once(engines.Engine):
        def ask(self, request):
            raise engines.EngineError("bad request")

    slept = []
    with pytest.raises(engines.EngineError):
        enrich.ask_with_retries(Once(), {}, sleep=slept.append)
    assert slept == []


def test_a_fatal_error_stops_asking_the_other_clusters(store):
    engine = engines.create_engine("command", command=str(store[0].parent / "no_such_program"))
    _plan, _writer, result, events = run(store, engine)
    assert [o.attempts for o in result.outcomes] == [1, 0, 0]
    assert [o.error for o in result.outcomes[1:]] == ["not asked: the run stopped after layer1_pnpm"] * 2
    (stopped,) = [e for e in events if e.kind == "stopped"]
    assert stopped.detail.startswith("stopped: cannot run ") and stopped.detail.endswith(
        "(fix: pass the program's path, or put it on PATH); 2 cluster(s) not asked")
    assert [e.cluster_id for e in events if e.kind == "done"] == ["layer1_pnpm"]    # one line, not one per cluster


def test_a_claude_cli_not_logged_in_stops_after_the_first_cluster_with_the_fix(store, tmp_path):
    # what Claude Code 2.1.328 prints with no login: is_error, no HTTP status, exit 1
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\ncat > /dev/null\necho '{\"type\":\"result\",\"is_error\":true,"
                       "\"api_error_status\":null,\"result\":\"Not logged in \u00b7 Please run /login\"}'\n"
                       "echo called >> " + str(tmp_path / "calls") + "\nexit 1\n")
    program.chmod(0o755)
    _plan, _writer, result, events = run(store, engines.create_engine("claude", command=str(program)))
    assert (tmp_path / "calls").read_text().splitlines() == ["called"]
    assert [o.attempts for o in result.outcomes] == [1, 0, 0]
    (stopped,) = [e.detail for e in events if e.kind == "stopped"]
    assert stopped == ("stopped: claude reported an error: Not logged in \u00b7 Please run /login (fix: log the CLI in "
                       "(run `claude`, then /login) or set ANTHROPIC_API_KEY; then run the command again); "
                       "2 cluster(s) not asked")


def unreachable_then(answers):
    """An engine whose n-th request fails unreachable when ``answers[n]`` is None, else answers."""
    class Scripted(engines.Engine):
        name = "command"
        calls = []

        def ask(self, request):
            Scripted.calls.append(request["cluster"]["id"])
            if answers[len(Scripted.calls) - 1] is None:
                raise engines.EngineError("gave no answer within 76 s (killed)", unreachable=True)
            return {"utterances": {m["slug"]: ["some words"] for m in request["memories"]}}

    return Scripted()


def test_no_answer_on_two_clusters_in_a_row_stops_the_run(store):
    engine = unreachable_then([None, None, "ok"])
    _plan, _writer, result, events = run(store, engine)
    assert engine.calls == ["layer1_pnpm", "layer1_postgres"]
    assert result.outcomes[2].error == "not asked: the run stopped after layer1_postgres"
    (stopped,) = [e.detail for e in events if e.kind == "stopped"]
    assert stopped.startswith("stopped: no answer on 2 clusters in a row (gave no answer within 76 s (killed)) "
                              "(fix: check that the engine answers") and stopped.endswith("; 1 cluster(s) not asked")


def test_no_answer_twice_but_not_in_a_row_goes_on(store):
    engine = unreachable_then([None, "ok", None])
    _plan, _writer, result, events = run(store, engine)
    assert engine.calls == ["layer1_pnpm", "layer1_postgres", "layer1_windows"]
    assert not [e for e in events if e.kind == "stopped"]
    assert [bool(o.error) for o in result.outcomes] == [True, False, True]


def test_a_connection_failure_is_retried_then_counts_toward_the_stop(store):
    class Refused(engines.Engine):
        name = "command"
        calls = 0

        def ask(self, request):
            Refused.calls += 1
            raise engines.EngineError("cannot reach the API: Connection error.", transient=True, unreachable=True)

    _plan, _writer, result, events = run(store, Refused())
    assert Refused.calls == 2 * (enrich.RETRIES + 1)              # two clusters, each tried 4 times
    assert [o.attempts for o in result.outcomes] == [4, 4, 0]
    assert len([e for e in events if e.kind == "stopped"]) == 1


def test_hand_rows_survive_a_forced_run_and_gone_memories_leave(store):
    run(store, engines.create_engine("command", command=command("good")), per_memory=1)
    path = pathlib.Path(utterances_path(store[0]))
    text = path.read_text()
    text += f"env_pnpm_store_on_d\tmy disk is full of node modules\t{HAND_HASH}\thand\t-\t2026-12-01T20:00:00Z\n"
    text += "gone_memory\tstale words\t0123456789abcdef\tcommand\t-\t2026-12-01T20:00:00Z\n"
    path.write_text(text)
    _plan, _writer, result, _events = run(store, engines.create_engine("command", command=command("good")), force=True)
    rows = read_utterances(path)
    assert "gone_memory" not in {r.slug for r in rows}
    mine = [r for r in rows if r.engine == "hand"]
    assert [(r.slug, r.text) for r in mine] == [("env_pnpm_store_on_d", "my disk is full of node modules")]


def test_memories_that_left_are_dropped_even_when_nothing_is_asked(store):
    run(store, engines.create_engine("command", command=command("good")), per_memory=1)
    path = pathlib.Path(utterances_path(store[0]))
    path.write_text(path.read_text() + "gone_memory\tstale\t0123456789abcdef\tcommand\t-\t2026-12-01T20:00:00Z\n")
    plan, _writer, result, _events = run(store, engines.create_engine("command", command=command("crash")))
    assert plan.jobs == () and plan.dropped == ["gone_memory"] and result.written
    assert "gone_memory" not in path.read_text()


def test_a_dry_run_writes_nothing_and_gives_the_diff(store):
    _plan, writer, result, _events = run(store, engines.create_engine("command", command=command("good")),
                                         dry_run=True, per_memory=1)
    assert not result.written and not pathlib.Path(utterances_path(store[0])).exists()
    diff = writer.diff()
    assert diff.startswith("--- /dev/null\n+++ ")
    added = [line[1:] for line in diff.splitlines()[2:] if line.startswith("+")]
    assert sum(1 for line in added if line.count("\t") == 5) == 1 + 6   # the column row and six rows
    assert [r._replace(line=0) for r in parse_utterances_text(writer.text)] == result.rows


def test_a_file_changed_during_the_run_is_not_overwritten(store):
    path = pathlib.Path(utterances_path(store[0]))

    class Meddler(engines.Engine):
        name = "command"

        def ask(self, request):
            if request["cluster"]["id"] == "layer1_postgres":
                path.write_text(path.read_text() + "# someone edits the file meanwhile\n")
            return {"utterances": {m["slug"]: ["words here"] for m in request["memories"]}}

    with pytest.raises(RefusedError, match="changed since it was read"):
        run(store, Meddler())
    assert path.read_text().endswith("# someone edits the file meanwhile\n")


def test_a_damaged_utterances_file_is_refused_and_kept(store):
    path = pathlib.Path(utterances_path(store[0]))
    path.write_text("slug\tutterance\n")
    from router.store.utterances import UtterancesFileError

    with pytest.raises(UtterancesFileError) as caught:
        enrich.prepare(*store)
    assert caught.value.line == 1 and caught.value.fix
    assert path.read_text() == "slug\tutterance\n"


def test_the_estimate_counts_requests_and_tokens(store):
    plan, _writer = enrich.prepare(*store)
    requests = enrich.job_requests(plan.jobs, 10)
    engine = engines.create_engine("claude")
    figure = enrich.estimate(requests, engine)
    assert figure.requests == 3
    text = sum(len((r["instructions"] + json.dumps(r)).encode()) for r in requests)
    assert text // 4 + 3 * engine.overhead_tokens <= figure.input_tokens <= text // 4 + 3 * engine.overhead_tokens + 400
    assert figure.output_tokens == sum(-(-(len(r["memories"]) * (40 + 10 * 70) + 40) // 4) for r in requests)
    assert enrich.estimate(requests, engines.create_engine("command", command="x")).input_tokens < figure.input_tokens


def test_read_bodies_agrees_with_the_memory_directory_reader(store, tmp_path):
    from harness.memorydir import read_memory_files

    memory = store[1]
    (memory / "no-front-matter.md").write_text("just a body\n")
    (memory / "MEMORY.archive-2026-12-01T00-00-00-000Z.md").write_text("- an archive\n")
    (memory / "folder.md").mkdir()
    (memory / "notes.txt").write_text("not a memory")
    expected = {found.slug: found.body for found in read_memory_files(memory)}
    assert enrich.read_bodies(memory) == expected
    assert enrich.read_bodies(memory)["no_front_matter"] == "just a body\n"
    heldout = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "heldout" / "memory"
    assert enrich.read_bodies(heldout) == {found.slug: found.body for found in read_memory_files(heldout)}
    assert enrich.read_bodies(None) == {}
    from router.errors import InputError

    with pytest.raises(InputError, match="memory directory does not exist"):
        enrich.read_bodies(tmp_path / "nowhere")


# --------------------------------------------------------------------------- near-misses (enrich/2)
# Protocol memory-router.enrich/2: near-misses asked per cluster, stored beside the utterances,
# re-asked when the cluster's members change, a /1 engine accepted; the veto's self-check and
# self-routing before and after (harness/clusters/selfcheck.py).

from harness.clusters import selfcheck  # noqa: E402
from harness.clusters.enrich_answers import check_near_misses  # noqa: E402
from harness.clusters.enrich_protocol import enrich_request, request_problems  # noqa: E402
from router.config import default_settings, nearmisses_path  # noqa: E402
from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.store.nearmisses import read_nearmisses  # noqa: E402


def run_near(store, engine, near_misses=12, force=False):
    cluster_path, memory = store
    plan, writer = enrich.prepare(cluster_path, memory, force=force, near_misses=near_misses)
    result = enrich.run_enrich(plan, engine, 3, writer, sleep=lambda s: None, now=lambda: NOW)
    return plan, writer, result


def test_the_request_asks_for_near_misses_and_says_what_they_are():
    from router.store.clusterfile import Cluster, Member

    cluster = Cluster("layer1_x", 1, False, ("deploy",), "deploys", (Member("env_a", "env", "hook", 0),), 0)
    from harness.clusters.enrich_plan import MemoryText

    memory = MemoryText("env_a", "env", "hook", "", "0" * 16)
    request = enrich_request(cluster, [memory], 10, near_misses=12)
    assert request["protocol"] == "memory-router.enrich/2" and request["near_misses"] == 12
    assert "near_misses" in request["instructions"] and request_problems(request) == []
    only = enrich_request(cluster, [], 10, (memory,), near_misses=12)
    assert request_problems(only) == [] and "near_misses" in only["instructions"]
    assert request_problems(enrich_request(cluster, [], 10, (memory,), near_misses=0))


@pytest.mark.parametrize("answer, kept, answered", [
    ({"utterances": {}}, [], False),
    ({"utterances": {}, "near_misses": ["a", "a", "b", 7, "x" * 300, "c\x1b[2J"]}, ["a", "b"], True),
    ({"utterances": {}, "near_misses": "not a list"}, [], True),
    ({"utterances": {}, "near_misses": ["one", "two", "three"]}, ["one", "two"], True),
])
def test_an_answers_near_misses_are_untrusted_input(answer, kept, answered):
    check = check_near_misses(answer, 2)
    assert check.texts == kept and check.answered is answered


def test_a_run_writes_the_near_misses_file_and_a_second_run_asks_nothing(store, tmp_path):
    log = tmp_path / "asked.jsonl"
    engine = engines.create_engine("command", command=command("good", "--log", log))
    _plan, _writer, result = run_near(store, engine)
    rows = read_nearmisses(nearmisses_path(store[0]))
    assert {r.key for r in rows} == {"layer1_pnpm", "layer1_postgres", "layer1_windows"}
    assert all(len([r for r in rows if r.key == key]) == 12 for key in {r.key for r in rows})
    assert all(o.near_misses == 12 for o in result.outcomes)
    _plan, _writer, result = run_near(store, engines.create_engine("command", command=command("good", "--log", log)))
    assert result.outcomes == [] and len(asked(log)) == 3


def test_a_changed_member_re_asks_its_clusters_near_misses(store, tmp_path):
    run_near(store, engines.create_engine("command", command=command("good")))
    memory = store[1] / "env_pg_dump_custom_format.md"
    memory.write_text(memory.read_text() + "\nAnd now restores run in parallel.\n")
    log = tmp_path / "asked.jsonl"
    plan, _writer, _result = run_near(store, engines.create_engine("command", command=command("good", "--log", log)))
    assert plan.near_reasons == {"layer1_postgres": "changed"}
    assert [r["cluster"] for r in asked(log)] == ["layer1_postgres"]


def test_a_v1_engine_is_accepted_said_once_and_not_asked_again(store, tmp_path):
    _plan, _writer, result = run_near(store, engines.create_engine("command", command=command("good1")))
    notes = [note for o in result.outcomes for note in o.notes if "near_misses" in note]
    assert len(notes) == 1 and "memory-router.enrich/1" in notes[0]
    assert read_nearmisses(nearmisses_path(store[0])) == []           # the file says they were asked
    log = tmp_path / "asked.jsonl"
    run_near(store, engines.create_engine("command", command=command("good1", "--log", log)))
    assert asked(log) == []


def test_near_misses_zero_asks_for_none(store, tmp_path):
    log = tmp_path / "asked.jsonl"
    run_near(store, engines.create_engine("command", command=command("good", "--log", log)), near_misses=0)
    assert {r["cluster"] for r in asked(log)} == {"layer1_pnpm", "layer1_postgres", "layer1_windows"}
    assert not pathlib.Path(nearmisses_path(store[0])).exists()


def test_the_self_check_drops_a_near_miss_that_silences_a_members_own_utterances(store):
    index = load_cluster_file(store[0])
    utterances = {"env_pg_dump_custom_format": ("how do i get last night's database dump back",
                                                "restore the postgres backup in parallel")}
    hostile = {"layer1_postgres": ["restore the postgres backup in parallel", "write a sql join tutorial"]}
    # The margin the veto shipped with before issue 34's choice (-0.1): at today's +0.1 this one
    # hostile row no longer outvotes the member, and the self-check is what is tested here.
    settings = dict(default_settings(), veto_strong=0.0, veto_protect=0.0, veto_margin=-0.1)
    build, route = selfcheck.store_tables(index)
    before = route("restore the postgres backup in parallel", build(utterances, hostile), settings)
    assert before.get("veto", {}).get("vetoed")
    kept, dropped = selfcheck.veto_self_check(index, utterances, hostile, settings, build, route)
    assert dropped == {"layer1_postgres": ["restore the postgres backup in parallel"]}
    assert kept == {"layer1_postgres": ["write a sql join tutorial"]}
    after = route("restore the postgres backup in parallel", build(utterances, kept), settings)
    assert any(line["slug"] == "env_pg_dump_custom_format" for line in after["lines"])


def _own_vetoed(index, utterances, near_misses, settings, build, route):
    table = build(utterances, near_misses)
    return [(slug, text) for slug, texts in utterances.items() for text in texts
            if (route(text, table, settings).get("veto") or {}).get("vetoed")]


def test_the_self_check_runs_to_a_fixed_point_on_near_duplicate_near_misses(store):
    # a hostile engine's near-misses: thirty near-copies of a member's own utterances, more than
    # five rounds of the veto's k (2) nearest can clear
    index = load_cluster_file(store[0])
    own = ["restore the postgres backup in parallel", "pg_restore of last night's dump with four jobs"]
    utterances = {"env_pg_dump_custom_format": tuple(own)}
    hostile = {"layer1_postgres": [f"{text} {word}" for text in own for word in
                                   ("now", "please", "again", "today", "quickly", "here", "first", "then",
                                    "asap", "too", "fast", "once", "still", "soon", "later")]}
    settings = dict(default_settings(), veto_strong=0.0, veto_protect=0.0, veto_k=2)
    build, route = selfcheck.store_tables(index)
    assert _own_vetoed(index, utterances, hostile, settings, build, route)
    kept, dropped = selfcheck.veto_self_check(index, utterances, hostile, settings, build, route)
    assert _own_vetoed(index, utterances, kept, settings, build, route) == []
    assert sum(map(len, dropped.values())) + sum(map(len, kept.values())) == 30


def test_the_self_check_fails_loudly_when_a_round_can_drop_nothing(store):
    index = load_cluster_file(store[0])
    utterances = {"env_pg_dump_custom_format": ("restore the postgres backup in parallel",)}
    cluster = next(n for n, c in enumerate(index.clusters) if c.cluster_id == "layer1_postgres")
    from router.routing.veto import near_miss_code

    def route(prompt, table, settings):   # a veto that names a near-miss the table does not hold
        return {"veto": {"vetoed": True, "negatives": [near_miss_code(cluster, 7)]},
                "scores": [{"cluster_id": "layer1_postgres"}]}

    with pytest.raises(selfcheck.SelfCheckError, match="still silence 1 of 1"):
        selfcheck.veto_self_check(index, utterances, {"layer1_postgres": ["a"]}, default_settings(),
                                  lambda u, n: None, route)


def test_self_routing_counts_each_family_and_names_what_it_lost(store):
    index = load_cluster_file(store[0])
    build, route = selfcheck.store_tables(index)
    utterances = {"env_pg_dump_custom_format": ("pg_restore with four jobs from the pg_dump backup",)}
    settings = default_settings()
    found = selfcheck.self_routing(index, build(utterances, {}), settings, utterances, route)
    assert found["hook lines"]["total"] == 6 and found["utterances"] == {"hit": 1, "total": 1, "missed": []}
    worse = dict(found, utterances={"hit": 0, "total": 1, "missed": ["env_pg_dump_custom_format"]})
    assert selfcheck.lost_families(found, worse) == ["utterances"]
    assert selfcheck.lost_families(found, found) == []


def test_the_face_prints_self_routing_and_writes_the_near_misses(store, tmp_path, capsys):
    from harness.cli import main

    cluster_path, memory = store
    code = main(["clusters", "enrich", "--clusters", str(cluster_path), "--memory-dir", str(memory),
                 "--engine", "command", "--command", command("good"), "--yes", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["self_check"]["after"]["utterances"]["total"] > 0
    assert report["compiled"]["entry"]
    assert read_nearmisses(nearmisses_path(cluster_path))


def test_near_misses_of_a_cluster_that_left_go_even_when_nothing_is_asked(store, tmp_path):
    run_near(store, engines.create_engine("command", command=command("good")))
    path = pathlib.Path(nearmisses_path(store[0]))
    path.write_text(path.read_text() + "layer1_gone\tan old request\t0123456789abcdef\tclaude\thaiku\t"
                    "2026-12-01T21:00:00Z\n", encoding="utf-8")
    log = tmp_path / "asked.jsonl"
    plan, _writer, result = run_near(store, engines.create_engine("command", command=command("good", "--log", log)))
    assert plan.near_dropped == ("layer1_gone",) and asked(log) == []
    assert result.written and "layer1_gone" not in {r.key for r in read_nearmisses(str(path))}
