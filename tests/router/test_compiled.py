"""router/hooks/compiled.py: the hook's table is compiled when the store is written; a prompt never
builds one it could not finish (it routes on the cluster file alone and a rebuild starts outside)."""

import io
import json
import os
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
