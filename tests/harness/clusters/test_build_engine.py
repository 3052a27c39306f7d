"""`clusters build --engine E`: the engine names each built cluster, then the built store is
enriched in the same run (one estimate, one confirmation)."""

import json
import pathlib
import sys

import pytest

from harness.cli import main
from router.store.clusterfile import load_cluster_file
from router.config import utterances_path
from router.store.utterances import read_utterances

FAKE = pathlib.Path(__file__).with_name("fake_engine.py")
HELDOUT_MEMORY = pathlib.Path(__file__).resolve().parents[3] / "benchmarks" / "heldout" / "memory"


def build_argv(out, mode="good", *extra, engine_args=()):
    command = " ".join([sys.executable, str(FAKE), mode, *map(str, engine_args)])
    return ["clusters", "build", "--memory-dir", str(HELDOUT_MEMORY), "--out", str(out), "--engine", "command",
            "--command", command, "--per-memory", "2", "--yes", *extra]


@pytest.fixture
def out(tmp_path):
    return tmp_path / "brain" / "memory-layer1-clusters.md"


def test_build_with_an_engine_names_the_clusters_and_enriches_them(out, capsys, tmp_path):
    log = tmp_path / "asked.jsonl"
    assert main(build_argv(out, "good", "--json", engine_args=("--log", log))) == 0
    summary = json.loads(capsys.readouterr().out)
    asked = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = [a["protocol"] for a in asked]
    clusters = len(summary["clusters"])
    assert kinds == ["memory-router.label/1"] * clusters + ["memory-router.enrich/2"] * clusters
    index = load_cluster_file(out)
    # the fake engine names a cluster after its first member's slug words and adds the tag "working"
    renamed = summary["naming"]["renamed"]
    assert summary["naming"]["failed"] == [] and len(renamed) >= clusters // 2
    for final in renamed.values():
        first = index.cluster(final).members[0].slug.split("_")
        words = [w for w in first if w not in ("env", "feedback", "project", "reference", "user")]
        assert final == "layer1_" + "_".join(words[:2])
        assert index.cluster(final).label == "about " + " ".join(words)
    assert all("working" not in cluster.tags and cluster.tags for cluster in index.clusters)
    assert [c["cluster_id"] for c in summary["clusters"]] == [c.cluster_id for c in index.clusters]
    assert summary["enrich"]["failed"] == 0 and summary["enrich"]["rows"] == 2 * len(index.members)
    rows = read_utterances(utterances_path(out))
    assert {r.slug for r in rows} == {m.slug for m in index.members}


def test_a_rebuild_keeps_carried_ids_and_asks_only_for_names(out, capsys, tmp_path):
    assert main(build_argv(out, "good")) == 0
    first = load_cluster_file(out)
    capsys.readouterr()
    log = tmp_path / "asked.jsonl"
    assert main(build_argv(out, "good", "--json", engine_args=("--log", log))) == 0
    summary = json.loads(capsys.readouterr().out)
    assert load_cluster_file(out).cluster_ids == first.cluster_ids       # every id carried over
    assert summary["naming"]["renamed"] == {}
    assert {json.loads(line)["protocol"] for line in log.read_text().splitlines()} == {"memory-router.label/1"}
    assert summary["enrich"]["asked"] == 0


def test_a_failing_naming_request_keeps_the_builders_names_and_exits_1(out, capsys):
    assert main(build_argv(out, "good", "--json")) == 0
    capsys.readouterr()
    out.unlink()
    out.with_suffix(".tsv").unlink()
    assert main(["clusters", "build", "--memory-dir", str(HELDOUT_MEMORY), "--out", str(out), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    victim = plain["clusters"][0]["cluster_id"]
    out.unlink()
    out.with_suffix(".tsv").unlink()
    assert main(build_argv(out, "good", "--json", engine_args=("--fail-cluster", victim))) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["naming"]["failed"] == [victim]
    assert victim in load_cluster_file(out).cluster_ids
    assert any(line.startswith(f"{victim}: naming FAILED") for line in summary["naming"]["lines"])


def test_naming_answers_that_are_all_refused_count_as_failed_requests_and_exit_1(out, capsys):
    # docs/enrich.md: a failed request exits 1; an answer with nothing usable is one (issue 36 item 6).
    assert main(build_argv(out, "badnames", "--json")) == 1
    summary = json.loads(capsys.readouterr().out)
    built = load_cluster_file(out).cluster_ids
    assert sorted(summary["naming"]["failed"]) == sorted(built) and summary["naming"]["renamed"] == {}
    assert summary["enrich"]["failed"] == 0


def test_a_dry_run_with_an_engine_writes_nothing(out, capsys):
    assert main(build_argv(out, "good", "--dry-run")) == 0
    text = capsys.readouterr().out
    assert "engine: " in text and "naming and" in text and "(dry run: not written)" in text
    assert not out.exists() and not pathlib.Path(utterances_path(out)).exists()


def test_without_engine_nothing_is_asked(out, capsys):
    assert main(["clusters", "build", "--memory-dir", str(HELDOUT_MEMORY), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "naming" not in summary and "enrich" not in summary
    assert not pathlib.Path(utterances_path(out)).exists()


def test_without_yes_nothing_is_sent_or_written(out, capsys, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    argv = [a for a in build_argv(out, "good") if a != "--yes"]
    assert main(argv) == 1
    assert "nothing was sent" in capsys.readouterr().err
    assert not out.exists()


def test_a_refused_key_while_naming_stops_the_run_and_enrich_asks_nothing(out, capsys, tmp_path):
    program = tmp_path / "refused.sh"
    program.write_text(f"#!/bin/sh\ncat > /dev/null\necho asked >> {tmp_path / 'calls'}\n"
                       "echo 'invalid x-api-key' >&2\nexit 77\n")
    program.chmod(0o755)
    argv = ["clusters", "build", "--memory-dir", str(HELDOUT_MEMORY), "--out", str(out), "--engine", "command",
            "--command", str(program), "--yes", "--json"]
    assert main(argv) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (tmp_path / "calls").read_text().splitlines() == ["asked"]           # one request, not 2 x 27
    clusters = len(summary["clusters"])
    assert len(summary["naming"]["failed"]) == clusters
    assert summary["naming"]["lines"][-1].startswith("stopped: the program was refused its credentials (exit 77)")
    assert summary["naming"]["lines"][-1].endswith(f"; {clusters - 1} cluster(s) not asked (the builder's names "
                                                    "are kept)")
    assert summary["enrich"]["failed"] == clusters and not summary["enrich"]["written"]
    assert {c["error"] for c in summary["enrich"]["clusters"]} == {"not asked: the run stopped while naming"}


def test_a_term_signal_while_naming_exits_143_and_ends_the_engine(out, tmp_path):
    import signal
    import subprocess
    import time

    from support.executables import memory_router_exe

    pids = tmp_path / "pids"
    argv = [memory_router_exe(), *build_argv(out, "hang", engine_args=("--state", tmp_path / "once", "--pids", pids))]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not pids.exists() and process.poll() is None:
        time.sleep(0.05)
    assert pids.exists(), process.communicate()[1]
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, err
