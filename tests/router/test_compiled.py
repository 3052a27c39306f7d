"""router/hooks/compiled.py: the hook's table is compiled when the store is written; a prompt never
builds one it could not finish (it routes on the cluster file alone and a rebuild starts outside)."""

import io
import json
import os
import re
import sys
import time

import pytest

import router.hooks.compiled as compiled
import router.hooks.hook as hook
from router.cache import table_is_current
from router.config import nearmisses_path, utterances_path
from router.store.utterances import Utterance, render_utterances

STORE = """\
## Layer 0 - Cluster Router

- c_windows · 2 · tags: windows, shell · label: the Windows dev box
- c_db · 2 · tags: postgres, database · label: the database server

## Layer 1 - Member Lines

### c_windows
- env_defender_excludes_dev_dir - env; real-time scanning made pnpm install take 4 min; excluding D:\\dev fixed it
- env_long_paths - env; clones fail past 260 characters: enable LongPathsEnabled in the registry

### c_db
- env_pg_dump_custom_format - env; nightly pg_dump -Fc to /srv/backups at 04:00; restore with pg_restore -j 4
- feedback_psql_begin_first - feedback; start every manual psql session on prod with BEGIN and an explicit COMMIT
"""
# Routes on its utterances alone: no word of it is in the cluster file.
SAID = "antivirus hogs the disk whenever packages get installed"


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "brain" / "memory-layer1-clusters.md"
    path.parent.mkdir()
    path.write_text(STORE, encoding="utf-8")
    rows = [Utterance("env_defender_excludes_dev_dir", text, "-", "hand", "-", "2026-12-01T00:00:00Z", 0)
            for text in (SAID, "installing packages is painfully slow", "antivirus hogs the disk")]
    pathlib_write(utterances_path(path), render_utterances(rows))
    old = time.time() - 10  # settled: the cache stores what it builds
    for name in (path, utterances_path(path)):
        os.utime(name, (old, old))
    return str(path)


def pathlib_write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def ask(store, prompt):
    out = io.StringIO()
    payload = json.dumps({"session_id": "s1", "cwd": os.path.dirname(store), "prompt": prompt,
                          "hook_event_name": "UserPromptSubmit"})
    assert hook.run_hook(["--clusters", store], io.BytesIO(payload.encode()), out) == 0
    return out.getvalue()


@pytest.fixture
def builds(monkeypatch):
    counted = []
    real = hook._build_table

    def counting(path, learned_file=None):
        counted.append(path)
        return real(path, learned_file)

    monkeypatch.setattr(hook, "_build_table", counting)
    return counted


def test_a_compiled_table_is_what_the_first_prompt_reads(store, builds):
    assert not table_is_current(store)
    result = compiled.compile_store(store)
    assert result["entry"] and table_is_current(store)
    assert "env_defender_excludes_dev_dir" in ask(store, SAID)
    assert builds == []


def test_a_small_store_without_a_compiled_table_still_builds_inline(store, builds):
    assert "env_defender_excludes_dev_dir" in ask(store, SAID)
    assert len(builds) == 1


def test_a_large_uncompiled_store_routes_on_the_cluster_file_alone_and_starts_a_rebuild(
        store, builds, monkeypatch, tmp_path):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    started = []
    monkeypatch.setattr(compiled, "start_rebuild", lambda path, learned=None: started.append(path) or True)
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    assert ask(store, SAID) == ""                                # its words are only in the utterances
    assert "pg_dump" in ask(store, "how do I restore the nightly pg_dump backup?")  # the file alone routes
    assert builds == [] and len(started) == 2
    log = (tmp_path / "log").read_text(encoding="utf-8")
    assert "routing on the cluster file alone" in log and "memory-router clusters compile" in log
    compiled.compile_store(store)
    assert "env_defender_excludes_dev_dir" in ask(store, SAID)    # compiled: the whole table again


def test_an_edit_to_the_near_misses_file_makes_the_table_stale(store):
    compiled.compile_store(store)
    assert table_is_current(store)
    pathlib_write(nearmisses_path(store), "cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\n")
    assert not table_is_current(store)


def test_the_detached_rebuild_compiles_the_table_and_only_one_runs_at_a_time(store):
    assert compiled.start_rebuild(store) is True
    assert compiled.start_rebuild(store) is False                 # its marker is there
    deadline = time.time() + 30
    while not table_is_current(store) and time.time() < deadline:
        time.sleep(0.2)
    assert table_is_current(store)
    while os.path.exists(compiled._marker(store)) and time.time() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(compiled._marker(store))


def test_caching_off_compiles_nothing(store, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    assert compiled.compile_store(store)["entry"] is None


def test_clusters_compile_says_what_it_did(store, capsys):
    from harness.cli import main

    assert main(["clusters", "compile", "--clusters", store, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entry"] and report["cluster_file"] == os.path.abspath(store)
    assert table_is_current(store)


# --------------------------------------------------------------------------- issue 35 items 6 and 7


def _forbid_builds(monkeypatch):
    """Any build of a table with the files beside the cluster file fails the test."""
    import router.routing.uttertable as uttertable

    def refuse(*_args, **_kwargs):
        raise AssertionError("a table was built with the utterances and near-misses")

    monkeypatch.setattr(uttertable, "read_beside", refuse)


def test_route_reads_the_compiled_table_and_shows_the_hooks_decision(store, monkeypatch, capsys):
    from harness.cli import main

    compiled.compile_store(store)
    hook_said = json.loads(ask(store, SAID))
    _forbid_builds(monkeypatch)
    assert main(["route", SAID, "--clusters", store, "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)
    assert decision["hook_output"] == hook_said


def test_route_on_a_large_stale_table_shows_what_the_hook_does_and_says_why(store, monkeypatch, capsys):
    from harness.cli import main

    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    monkeypatch.setattr(compiled, "start_rebuild", lambda path, learned=None: True)
    _forbid_builds(monkeypatch)
    assert main(["route", SAID, "--clusters", store, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["hook_output"] is None and ask(store, SAID) == ""
    assert "routes on the cluster file alone" in captured.err and "memory-router clusters compile" in captured.err


@pytest.mark.parametrize("environment", [{"MEMORY_ROUTER_NO_CACHE": "1"}, {"HOME": ""}], ids=["no-cache", "no-home"])
def test_without_a_cache_the_hook_never_builds_a_large_table_in_a_prompt(store, monkeypatch, tmp_path, environment):
    for name in ("MEMORY_ROUTER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    _forbid_builds(monkeypatch)
    assert "pg_dump" in ask(store, "how do I restore the nightly pg_dump backup?")  # the cluster file alone
    lines = [line for line in (tmp_path / "log").read_text(encoding="utf-8").splitlines() if "table" in line]
    assert len(lines) == 1 and "caching is off" in lines[0] and "routing on the cluster file alone" in lines[0]


def test_a_rebuild_marker_dated_ahead_of_the_clock_does_not_hold_rebuilds_back(store, monkeypatch):
    monkeypatch.setattr("subprocess.Popen", lambda *a, **k: None)    # the rebuild itself is not the point
    marker = compiled._marker(store)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    pathlib_write(marker, "")
    ahead = time.time() + 86400
    os.utime(marker, (ahead, ahead))
    assert compiled.start_rebuild(store) is True


def test_a_rebuild_that_cannot_land_is_not_restarted_each_prompt_and_compile_names_it(
        store, monkeypatch, tmp_path, capsys):
    import errno

    import router.cache
    from harness.cli import main

    def full(_fd, _data):
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(router.cache, "write_all_synced", full)      # takes the marker, not the table
    monkeypatch.setattr(compiled.time, "sleep", lambda _s: None)
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    marker = compiled._marker(store)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    pathlib_write(marker, "")
    assert compiled.main([store]) == 1
    assert "Disk quota exceeded" in compiled.marker_state(store)["failed"]
    assert compiled.start_rebuild(store) is False                    # not started again on the next prompt
    assert "Disk quota exceeded" in (tmp_path / "log").read_text(encoding="utf-8")
    assert main(["clusters", "compile", "--clusters", store]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("not compiled:") and "Disk quota exceeded" in out and "fix:" in out


def test_clusters_compile_with_caching_off_says_what_the_hook_really_does(store, monkeypatch, capsys):
    from harness.cli import main

    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    assert main(["clusters", "compile", "--clusters", store]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "builds the table on each prompt" not in out
    assert "routes on the cluster file alone" in out and "MEMORY_ROUTER_NO_CACHE" in out


def test_clusters_compile_names_each_bad_row_and_exits_1(store, capsys):
    from harness.cli import main

    with open(utterances_path(store), "a", encoding="utf-8") as handle:
        handle.write(f"env_long_paths\t{'y' * 201}\t-\thand\t-\t2026-12-01T00:00:00Z\n")
    with open(nearmisses_path(store), "w", encoding="utf-8") as handle:
        handle.write("cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\n"
                     "c_db\tdrop the test table\t-\thand\t-\tyesterday\n")
    assert main(["clusters", "compile", "--clusters", store]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("compiled the hook's routing table")
    assert re.search(re.escape(utterances_path(store)) + r":\d+:16: utterance of 201 characters \(at most 200\) "
                     r"\(fix: shorten it\)", out)
    assert f"{nearmisses_path(store)}:2:" in out and "written 'yesterday'" in out
    assert "env_defender_excludes_dev_dir" in ask(store, SAID)     # the good rows still route


def test_doctor_names_bad_rows_and_a_damaged_near_misses_file_fails(store):
    from harness.doctor.table import table_checks

    assert [c["status"] for c in table_checks(store, None)][0] == "pass"
    with open(nearmisses_path(store), "w", encoding="utf-8") as handle:
        handle.write("cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\n"
                     "c_db\tdrop the test table\t-\thand\t-\tyesterday\n")
    rows = table_checks(store, None)[0]
    assert rows["status"] == "fail" and f"{nearmisses_path(store)}:2:" in rows["message"] and "fix:" in rows["message"]
    with open(nearmisses_path(store), "w", encoding="utf-8") as handle:
        handle.write("not the column row\n")
    rows = table_checks(store, None)[0]
    assert rows["status"] == "fail" and "expected the column row" in rows["message"]


def test_canary_run_and_the_mcp_server_read_the_compiled_table(store, monkeypatch):
    from types import SimpleNamespace

    from harness.canary.suiteargs import table_for
    from harness.mcp.store import MemoryStore
    from router.config import default_settings
    from router.hooks.session import route_fresh
    from router.providers.provider import route
    from router.store.clusterfile import load_cluster_file

    compiled.compile_store(store)
    built = compiled.build_table_of(store)
    expected = route(SAID, built, default_settings())["additional_context"]
    fresh = route_fresh(SAID, built, default_settings())["additional_context"]   # as a new session gets it
    assert "env_defender_excludes_dev_dir" in expected
    _forbid_builds(monkeypatch)
    suite = SimpleNamespace(cluster_path=store, index=load_cluster_file(store))
    assert route(SAID, table_for(suite, {}), default_settings())["additional_context"] == expected
    assert MemoryStore(store).route(SAID)["additional_context"] == fresh


def test_the_mcp_server_closes_the_table_it_reloads_past(store):
    from harness.mcp.store import MemoryStore

    compiled.compile_store(store)
    served = MemoryStore(store)
    served.route(SAID)
    fds = len(os.listdir("/proc/self/fd"))
    for n in range(5):
        with open(store, "a", encoding="utf-8") as handle:
            handle.write("\n")
        os.utime(store, (time.time() - 10 - n, time.time() - 10 - n))
        compiled.compile_store(store)
        served.route(SAID)
    assert len(os.listdir("/proc/self/fd")) <= fds


# --------------------------------------------------------------------------- each part, message by message (issue 38)


def test_beside_bytes_and_companions(store):
    assert compiled.beside_bytes(store) == os.path.getsize(utterances_path(store))
    pathlib_write(nearmisses_path(store), "x" * 10)
    assert compiled.beside_bytes(store) == os.path.getsize(utterances_path(store)) + 10
    os.remove(utterances_path(store))
    assert compiled.beside_bytes(store) == 10
    assert compiled.companions_of("learned.tsv") == ("learned.tsv",) and compiled.companions_of(None) == ()


def test_no_cache_message_in_full(monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    assert compiled.no_cache_message("/s/c.md", 300000) == (
        "caching is off (MEMORY_ROUTER_NO_CACHE is set), so the routing table of /s/c.md cannot be compiled "
        "ahead, and its utterances and near-misses (300,000 bytes) are too large to compile inside a prompt: "
        "routing on the cluster file alone (fix: unset MEMORY_ROUTER_NO_CACHE, or set MEMORY_ROUTER_CACHE_DIR "
        "to a local directory you can write)")


@pytest.mark.parametrize("size, problem, meanwhile, fix", [
    (1000, "caching is off (MEMORY_ROUTER_NO_CACHE is set)",
     "the hook builds the whole table inside each prompt, since the utterances and near-misses (1,000 bytes) are "
     "under 256 KiB",
     "unset MEMORY_ROUTER_NO_CACHE, or set MEMORY_ROUTER_CACHE_DIR to a local directory you can write"),
    (256 * 1024, "the table could not be written",
     "the hook builds the whole table inside each prompt, since the utterances and near-misses (262,144 bytes) "
     "are under 256 KiB",
     "make the cache directory writable (or free space in it), or set MEMORY_ROUTER_CACHE_DIR to a local "
     "directory you can write; then run memory-router clusters compile again"),
    (256 * 1024 + 1, "the table could not be written",
     "the hook routes on the cluster file alone: the utterances and near-misses (262,145 bytes) are over the "
     "256 KiB a prompt may build, so they go unused",
     "make the cache directory writable (or free space in it), or set MEMORY_ROUTER_CACHE_DIR to a local "
     "directory you can write; then run memory-router clusters compile again"),
])
def test_not_compiled_says_what_the_hook_does_meanwhile_and_the_fix(store, size, problem, meanwhile, fix):
    pathlib_write(utterances_path(store), "x" * size)
    assert compiled.not_compiled(store, problem) == (meanwhile, fix)


def _plant_marker(store, text="", age=0.0):
    marker = compiled._marker(store)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    pathlib_write(marker, text)
    when = time.time() - age
    os.utime(marker, (when, when))
    return marker


def test_the_marker_lives_in_the_cache_and_says_its_state(store, monkeypatch):
    marker = compiled._marker(store)
    assert os.path.dirname(marker) == os.environ["MEMORY_ROUTER_CACHE_DIR"]
    assert os.path.basename(marker).startswith("rebuild-") and marker.endswith(".marker")
    assert compiled.marker_state(store) is None
    _plant_marker(store, age=30)
    state = compiled.marker_state(store)
    assert state["path"] == marker and state["failed"] is None and 29 <= state["age_s"] <= 60
    _plant_marker(store, "failed: Disk quota exceeded \n", age=5)
    assert compiled.marker_state(store)["failed"] == "Disk quota exceeded"
    _plant_marker(store, "FAILED: no", age=5)
    assert compiled.marker_state(store)["failed"] is None
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("MEMORY_ROUTER_CACHE_DIR")
    assert compiled._marker(store) is None and compiled.marker_state(store) is None


@pytest.mark.parametrize("age, failed", [
    (0, "no space"), (60, "no space"), (compiled.REBUILD_MARKER_TTL_S - 5, "no space"),
    (compiled.REBUILD_MARKER_TTL_S + 5, None),       # held back long enough: try again
    (-3600, None),                                    # dated ahead of the clock: not holding back
])
def test_a_failed_rebuild_holds_back_the_next_for_the_ttl(store, age, failed):
    _plant_marker(store, "failed: no space", age=age)
    assert compiled.rebuild_failure(store) == failed


@pytest.fixture
def popen(monkeypatch):
    started = []

    def fake(command, **kwargs):
        started.append((command, kwargs))

    monkeypatch.setattr("subprocess.Popen", fake)
    return started


def test_start_rebuild_starts_one_detached_process_with_this_router(store, popen, tmp_path):
    learned = tmp_path / "learned.tsv"
    assert compiled.start_rebuild(store, str(learned)) is True
    [(command, options)] = popen
    assert command[1:] == ["-m", "router.hooks.compiled", os.path.abspath(store), "--learned", str(learned)]
    assert options["start_new_session"] is True and options["close_fds"] is True
    assert options["cwd"] == os.path.dirname(os.path.abspath(store))
    import router

    home = os.path.dirname(os.path.dirname(os.path.abspath(router.__file__)))
    assert options["env"]["PYTHONPATH"].split(os.pathsep)[0] == home
    assert os.path.exists(compiled._marker(store)) and os.path.getsize(compiled._marker(store)) == 0
    assert compiled.start_rebuild(store) is False and len(popen) == 1     # one at a time


@pytest.mark.parametrize("age, started", [(10, False), (compiled.REBUILD_MARKER_TTL_S - 5, False),
                                          (compiled.REBUILD_MARKER_TTL_S + 5, True), (-60, True)])
def test_start_rebuild_honours_a_live_marker_only(store, popen, age, started):
    _plant_marker(store, age=age)
    assert compiled.start_rebuild(store) is started and len(popen) == started
    if started:
        assert popen[0][0][-1] == os.path.abspath(store) and "--learned" not in popen[0][0]


def test_start_rebuild_without_a_cache_or_when_the_process_cannot_start(store, monkeypatch):
    def cannot(*_args, **_kwargs):
        raise OSError("no such interpreter")

    monkeypatch.setattr("subprocess.Popen", cannot)
    assert compiled.start_rebuild(store) is False
    assert not os.path.exists(compiled._marker(store))               # its marker is taken back
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("MEMORY_ROUTER_CACHE_DIR")
    assert compiled.start_rebuild(store) is False


def test_the_hooks_fallback_message_for_each_state(store, monkeypatch, popen):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    size = f"{compiled.beside_bytes(store):,}"
    head = (f"the routing table of {store} is missing or stale and its utterances and near-misses ({size} bytes) "
            "are too large to compile inside a prompt: routing on the cluster file alone; ")
    said = []
    table = compiled.hook_fallback(store, None, said.append)
    assert said == [head + "a rebuild has started (or run: memory-router clusters compile)"]
    assert "utterance_meta" not in table or not table["utterance_meta"].get("members")
    said.clear()
    compiled.hook_fallback(store, None, said.append)
    assert said == [head + "a rebuild is already running (or run: memory-router clusters compile)"]
    _plant_marker(store, "failed: Disk quota exceeded", age=5)
    said.clear()
    compiled.hook_fallback(store, None, said.append)
    assert said == [head + "the last rebuild could not store the table (Disk quota exceeded); another is tried "
                           "15 minutes after it (or run: memory-router clusters compile)"]
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", compiled.beside_bytes(store))
    assert compiled.hook_fallback(store, None, said.append) is None       # small enough: build inline


def test_the_hooks_fallback_with_caching_off_routes_on_the_cluster_file(store, monkeypatch, popen):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    said = []
    table = compiled.hook_fallback(store, None, said.append)
    assert said == [compiled.no_cache_message(store, compiled.beside_bytes(store))] and popen == []
    assert [cluster[0] for cluster in table["clusters"]] == ["c_windows", "c_db"]


def test_hook_table_builds_a_small_store_and_says_nothing(store):
    said = []
    table = compiled.hook_table(store, log=said.append)
    assert said == [] and table["utterance_meta"]["members"] == 1


def test_hook_table_on_a_large_stale_store_says_what_the_hook_does(store, monkeypatch):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    said = []
    table = compiled.hook_table(store, log=said.append)
    size = f"{compiled.beside_bytes(store):,}"
    assert said == [f"the compiled routing table of {os.path.abspath(store)} is missing or stale and its utterances "
                    f"and near-misses ({size} bytes) are too large to compile inside a prompt, so the hook routes on "
                    "the cluster file alone until it is compiled (fix: memory-router clusters compile)"]
    assert not (table.get("utterance_meta") or {}).get("members")
    assert compiled.hook_table(store) is not None                         # no log: silent
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    said.clear()
    compiled.hook_table(store, log=said.append)
    assert said == [compiled.no_cache_message(os.path.abspath(store), compiled.beside_bytes(store))]


def test_compile_store_reports_the_entry_and_the_rows_it_skipped(store):
    with open(utterances_path(store), "a", encoding="utf-8") as handle:
        handle.write(f"env_long_paths\t{'y' * 201}\t-\thand\t-\t2026-12-01T00:00:00Z\n")
    result = compiled.compile_store(store)
    assert result["entry"] and result["problem"] is None and result["seconds"] >= 0
    assert result["skipped_row_count"] == 1 and len(result["skipped_rows"]) == 1
    where, message = result["skipped_rows"][0]
    assert where.startswith(utterances_path(store) + ":") and "201 characters" in message


def test_the_detached_rebuild_removes_its_marker_or_leaves_why(store, monkeypatch, tmp_path):
    monkeypatch.setattr(compiled.time, "sleep", lambda _s: None)
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    marker = _plant_marker(store)
    assert compiled.main([store]) == 0 and not os.path.exists(marker) and table_is_current(store)

    def broken(*_args, **_kwargs):
        raise RuntimeError("the store went away\nmid-build")

    monkeypatch.setattr(compiled, "compile_store", broken)
    _plant_marker(store)
    assert compiled.main([store, "--learned", "x.tsv"]) == 1
    with open(marker, encoding="utf-8") as handle:
        assert handle.read() == "failed: RuntimeError: the store went away mid-build\n"
    log = (tmp_path / "log").read_text(encoding="utf-8")
    assert log.endswith(f"memory-router rebuild: the routing table of {store} was not stored: RuntimeError: the "
                        "store went away mid-build; the hook routes on the cluster file alone and tries again in 15 "
                        "minutes (fix: memory-router clusters compile names what to change)\n")


def test_row_file_problems_name_each_bad_row_and_an_unusable_file(store):
    assert compiled.row_file_problems(store) == []
    with open(nearmisses_path(store), "w", encoding="utf-8") as handle:
        handle.write("not the column row\n")
    [(where, message)] = compiled.row_file_problems(store)
    assert where == nearmisses_path(store) and "expected the column row" in message


def test_build_table_of_reads_learned_terms_and_routes_without_a_damaged_file(store, tmp_path):
    from router.store.learned import COLUMNS, HEADER_COMMENT

    learned = tmp_path / "learned.tsv"
    pathlib_write(learned, HEADER_COMMENT + "\t".join(COLUMNS) + "\n"
                  "2026-12-01T00:00:00Z\tc_db\tenv_pg_dump_custom_format\twalrus\thand\n"
                  "not a row\n")
    said = []
    table = compiled.build_table_of(store, str(learned), log=said.append)
    assert said == [] and table["skipped_row_count"] == 1, table["skipped_rows"]
    [(where, _message)] = table["skipped_rows"]
    assert where.startswith(f"{learned}:")
    plain = compiled.build_table_of(store, None)
    assert table["term_postings"].get("walrus") and not plain["term_postings"].get("walrus")
    alone = compiled.build_table_of(store, None, beside=False)
    assert not (alone.get("utterance_meta") or {}).get("members")
    with open(learned, "wb") as handle:
        handle.write(b"\xff\xfe not utf-8")
    said.clear()
    damaged = compiled.build_table_of(store, str(learned), log=said.append)
    assert len(said) == 1 and said[0].endswith("; routing without learned terms until it is fixed")
    assert not damaged["term_postings"].get("walrus")
    compiled.build_table_of(store, str(learned))                      # no log: still routes


# --------------------------------------------------------------------------- a learned-terms file on every path (issue 38)


def _learned(tmp_path, term="walrus"):
    from router.store.learned import COLUMNS, HEADER_COMMENT

    path = tmp_path / "learned.tsv"
    pathlib_write(path, HEADER_COMMENT + "\t".join(COLUMNS) + "\n"
                  f"2026-12-01T00:00:00Z\tc_db\tenv_pg_dump_custom_format\t{term}\thand\n")
    return str(path)


def _damaged(path):
    with open(path, "wb") as handle:
        handle.write(b"\xff\xfe not utf-8")


def _knows(table, term="walrus"):
    return bool(table["term_postings"].get(term))


def test_hook_table_reads_the_learned_terms_and_the_compiled_table_with_them(store, tmp_path, monkeypatch):
    learned = _learned(tmp_path)
    said = []
    assert _knows(compiled.hook_table(store, learned, log=said.append)) and said == []
    assert compiled.compile_store(store, learned)["problem"] is None
    built = []
    real = compiled.build_table_of
    monkeypatch.setattr(compiled, "build_table_of", lambda *a, **k: built.append(a) or real(*a, **k))
    assert _knows(compiled.hook_table(store, learned)) and built == []     # the compiled table, read
    _damaged(learned)
    compiled.hook_table(store, learned, log=said.append)
    assert said and said[0].endswith("; routing without learned terms until it is fixed")


def test_hook_table_on_a_large_store_keeps_the_learned_terms_of_the_cluster_file_alone(store, tmp_path, monkeypatch):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    learned = _learned(tmp_path)
    table = compiled.hook_table(store, learned, log=lambda _m: None)
    assert _knows(table) and not (table.get("utterance_meta") or {}).get("members")
    _damaged(learned)
    said = []
    compiled.hook_table(store, learned, log=said.append)
    assert any(m.endswith("; routing without learned terms until it is fixed") for m in said)


def test_the_hooks_fallback_keeps_the_learned_terms_and_rebuilds_with_them(store, tmp_path, monkeypatch, popen):
    from router import cache

    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    learned = _learned(tmp_path)
    table = compiled.hook_fallback(store, learned, lambda _m: None)
    assert _knows(table) and popen[0][0][-2:] == ["--learned", os.path.abspath(learned)]
    # the cluster file's own table is kept apart: the whole table is still not compiled
    assert not cache.table_is_current(store, (learned,)) and not table_is_current(store)
    compiled.hook_fallback(store, learned, lambda _m: None)
    time.sleep(0.01)
    pathlib_write(learned, open(learned, encoding="utf-8").read().replace("walrus", "narwhal"))
    again = compiled.hook_fallback(store, learned, lambda _m: None)
    assert _knows(again, "narwhal") and not _knows(again)                # a changed learned file: rebuilt
    _damaged(learned)
    said = []
    compiled.hook_fallback(store, learned, said.append)
    assert any(m.endswith("; routing without learned terms until it is fixed") for m in said)


def test_the_hooks_fallback_with_caching_off_keeps_the_learned_terms(store, tmp_path, monkeypatch):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    learned = _learned(tmp_path)
    assert _knows(compiled.hook_fallback(store, learned, lambda _m: None))
    _damaged(learned)
    said = []
    compiled.hook_fallback(store, learned, said.append)
    assert said[-1].endswith("; routing without learned terms until it is fixed")


def test_compile_store_compiles_the_learned_terms_and_times_itself(store, tmp_path):
    from router import cache

    learned = _learned(tmp_path)
    result = compiled.compile_store(store, learned)
    assert cache.table_is_current(store, (learned,))

    def refuse(_path):
        raise AssertionError("built again")

    assert _knows(cache.load_routing_table(store, refuse, (learned,)))
    assert isinstance(result["seconds"], float) and 0 <= result["seconds"] < 60
    assert result["seconds"] == round(result["seconds"], 3)
    _damaged(learned)
    said = []
    compiled.compile_store(store, learned, log=said.append)
    assert said and said[0].endswith("; routing without learned terms until it is fixed")


def test_the_detached_rebuild_reads_its_arguments(store, tmp_path, monkeypatch):
    from router import cache

    monkeypatch.setattr(compiled.time, "sleep", lambda seconds: slept.append(seconds))
    slept = []
    learned = _learned(tmp_path)
    monkeypatch.setattr(sys, "argv", ["compiled", store, "--learned", learned])
    assert compiled.main() == 0 and slept == [cache.RACY_WINDOW_NS / 1e9]
    assert cache.table_is_current(store, (learned,))


def test_start_rebuild_hands_the_process_nothing_of_its_own_but_its_environment(store, popen, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    monkeypatch.setenv("SOMETHING_ELSE", "kept")
    assert compiled.start_rebuild(store) is True
    [(_command, options)] = popen
    import subprocess

    assert (options["stdin"], options["stdout"], options["stderr"]) == (subprocess.DEVNULL,) * 3
    assert options["env"]["SOMETHING_ELSE"] == "kept" and options["env"]["PYTHONPATH"].endswith(os.pathsep + "/elsewhere")
    assert os.stat(compiled._marker(store)).st_mode & 0o777 == 0o600


def test_start_rebuild_leaves_a_stale_marker_it_could_not_have_written(store, popen):
    marker = compiled._marker(store)
    os.makedirs(marker)                      # a directory where the marker goes
    old = time.time() - compiled.REBUILD_MARKER_TTL_S - 60
    os.utime(marker, (old, old))
    assert compiled.start_rebuild(store) is False and popen == [] and os.path.isdir(marker)


def test_start_rebuild_without_a_usable_cache_directory(store, popen, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-directory"
    pathlib_write(blocker, "")
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(blocker / "cache"))
    assert compiled.start_rebuild(store) is False and popen == []


def test_the_marker_state_reads_a_long_or_undecodable_failure(store, monkeypatch):
    marker = _plant_marker(store)
    with open(marker, "wb") as handle:
        handle.write(b"failed: " + b"x" * 3000)
    assert compiled.marker_state(store)["failed"] == "x" * (2000 - len("failed: "))
    with open(marker, "wb") as handle:
        handle.write(b"failed: bad \xff byte")
    assert compiled.marker_state(store)["failed"] == "bad \ufffd byte"
    os.utime(marker, ns=(10**18, 10**18))
    monkeypatch.setattr(compiled.time, "time", lambda: 10**9 + 30.1234)
    assert compiled.marker_state(store)["age_s"] == 30.1


def test_a_failure_note_replaces_what_the_marker_held_and_never_follows_a_link(store, tmp_path):
    marker = _plant_marker(store, "x" * 100)
    compiled._note_failure(marker, "no \udcff space")
    with open(marker, "rb") as handle:
        assert handle.read() == b"failed: no ? space\n"
    target = tmp_path / "elsewhere"
    pathlib_write(target, "mine")
    os.remove(marker)
    os.symlink(target, marker)
    compiled._note_failure(marker, "no space")
    assert target.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize("age, live", [(0.0, True), (compiled.REBUILD_MARKER_TTL_S, False)])
def test_a_marker_is_live_from_its_first_instant_until_the_ttl(store, popen, monkeypatch, age, live):
    marker = _plant_marker(store, "failed: no space")
    os.utime(marker, (1_000_000_000.0, 1_000_000_000.0))
    monkeypatch.setattr(compiled.time, "time", lambda: 1_000_000_000.0 + age)
    assert compiled.rebuild_failure(store) == ("no space" if live else None)
    assert compiled.start_rebuild(store) is (not live)


def test_row_file_problems_name_a_bad_row_by_its_place(store):
    with open(utterances_path(store), "a", encoding="utf-8") as handle:
        handle.write(f"env_long_paths\t{'y' * 201}\t-\thand\t-\t2026-12-01T00:00:00Z\n")
    [(where, message)] = compiled.row_file_problems(store)
    assert re.fullmatch(re.escape(utterances_path(store)) + r":\d+:16", where) and "201 characters" in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_failure_note_never_waits_on_a_fifo_in_place_of_the_marker(store):
    marker = compiled._marker(store)
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    os.mkfifo(marker)
    compiled._note_failure(marker, "no space")      # returns at once: nobody reads the FIFO


def test_build_table_of_refuses_an_oversized_cluster_file_by_name(store, monkeypatch):
    monkeypatch.setattr(compiled, "MAX_CLUSTER_FILE_BYTES", 10)
    with pytest.raises(ValueError) as refused:
        compiled.build_table_of(store)
    assert str(refused.value) == f"cluster file {store} is {os.path.getsize(store)} bytes, over the hook's limit of 10"


def test_a_skipped_learned_row_is_logged_as_a_learned_term(store, tmp_path, monkeypatch):
    learned = _learned(tmp_path)
    with open(learned, "a", encoding="utf-8") as handle:
        handle.write("not a row\n")
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(tmp_path / "log"))
    compiled.build_table_of(store, learned)
    assert "memory-router learned terms: " in (tmp_path / "log").read_text(encoding="utf-8")


def test_hook_table_builds_the_whole_table_at_exactly_the_inline_limit(store, monkeypatch):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", compiled.beside_bytes(store))
    assert compiled.hook_table(store)["utterance_meta"]["members"] == 1


def test_the_fallback_table_with_learned_terms_has_its_own_entry(store, tmp_path, monkeypatch, popen):
    monkeypatch.setattr(compiled, "INLINE_BUILD_BYTES", 10)
    learned = _learned(tmp_path)
    from router import cache

    monkeypatch.setattr(cache, "RACY_WINDOW_NS", 0)    # the learned file's ctime is now: store at once
    compiled.hook_fallback(store, learned, lambda _m: None)
    names = [name for name in os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"]) if name.endswith(".marshal")]
    assert [name.rsplit("-", 1)[0] for name in names] == ["table-companions-alone"]
