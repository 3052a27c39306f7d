"""benchmarks/routing_quality.py: the targets it reports, and a real run on a small suite."""

import importlib.util
import json
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def quality():
    return _load("routing_quality")


def figures(fact, paraphrase, priming):
    return {"all": {"fact_recall": fact, "false_priming": priming},
            "by_kind": {"paraphrase": {"fact_recall": paraphrase}} if paraphrase is not None else {}}


@pytest.mark.parametrize("fact, paraphrase, priming, missed", [
    (0.90, 0.60, 0.05, []),
    (0.85, 0.50, 0.10, []),
    (0.84, 0.60, 0.05, ["fact_recall"]),
    (0.90, 0.49, 0.05, ["paraphrase_recall"]),
    (0.90, 0.60, 0.11, ["false_priming"]),
    (0.50, 0.10, 0.50, ["fact_recall", "paraphrase_recall", "false_priming"]),
])
def test_targets_flag_each_miss(quality, fact, paraphrase, priming, missed):
    checks = quality.targets(figures(fact, paraphrase, priming))
    assert sorted(key for key, check in checks.items() if check["met"] is False) == sorted(missed)


def test_no_paraphrase_cases_is_not_a_pass(quality):
    assert quality.targets(figures(0.9, None, 0.0))["paraphrase_recall"]["met"] is None


@pytest.mark.parametrize("silent, chars, missed", [
    (0.08, 250, []),
    (0.09, 150, ["all_silent_priming"]),
    (0.0, 251, ["routed_chars"]),
])
def test_the_utterance_targets_count_every_silent_case_and_bytes(quality, silent, chars, missed):
    report = figures(0.95, 0.70, 0.05)
    report["all"].update(all_silent_priming=silent, routed_chars=chars)
    checks = quality.targets(report, quality.UTTERANCE_TARGETS)
    assert sorted(key for key, check in checks.items() if check["met"] is False) == missed
    assert checks["fact_recall"]["target"] == ">= 0.8" and checks["paraphrase_recall"]["target"] == ">= 0.45"


def test_each_held_out_store_has_its_blind_near_misses(quality):
    for cluster_file, near in quality.NEAR_MISSES.items():
        assert pathlib.Path(cluster_file).is_file() and pathlib.Path(near).is_file()


def test_each_held_out_store_has_its_blind_utterances(quality):
    for cluster_file, blind in quality.BLIND.items():
        assert pathlib.Path(cluster_file).is_file() and pathlib.Path(blind).is_file()
        assert quality.blind_file(cluster_file) == blind
    assert quality.blind_file("elsewhere.md", "given.tsv") == "given.tsv"


def test_the_utterance_column_routes_on_the_stores_utterances(quality, capsys):
    paraphrase = pathlib.Path(__file__).resolve().parents[2] / "canaries" / "paraphrase.yaml"
    assert quality.main([str(paraphrase), "--no-latency", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (source,) = report["utterances"].values()
    assert source.endswith("memory-layer1-clusters.utterances.tsv")
    plain = report["providers"]["weighted"]["by_kind"]["paraphrase"]["fact_recall"]
    rich = report["providers"]["weighted + utterances"]["by_kind"]["paraphrase"]["fact_recall"]
    assert rich > plain


def test_spec_suite_side_by_side(quality, capsys):
    pytest.importorskip("rank_bm25")
    spec_suite = pathlib.Path(__file__).resolve().parents[2] / "canaries" / "spec.yaml"
    assert quality.main([str(spec_suite), "--no-latency", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["providers"]) == {"spec", "weighted", "utterances, landed", "weighted + utterances", "bm25"}
    spec = report["providers"]["spec"]
    assert spec["all"]["cases"] == 13 and spec["all"]["fact_recall"] == 1.0  # the spec's own canaries
    assert report["settings"]["bm25"]["bm25_threshold"] in quality.BM25_GRID["bm25_threshold"]


def test_bm25_provider_routes_and_stays_silent(example_cluster_file):
    pytest.importorskip("rank_bm25")
    from router.store.clusterfile import load_cluster_file
    from router.config import default_settings
    from router.providers.provider import build_table

    make = _load("bm25_provider").make
    table = build_table(load_cluster_file(example_cluster_file))
    settings = dict(default_settings(), bm25_threshold=4.0)
    provider = make(settings)
    routed = provider({"prompt": "pg_dump restore with pg_restore", "table": table, "settings": settings})
    assert routed["clusters"] == ["layer1_08"] and 0.5 <= routed["confidence"] <= 1
    silent = provider({"prompt": "what is the capital of Australia", "table": table, "settings": settings})
    assert silent["clusters"] == [] and silent["lines"] == []


def test_another_cluster_file_is_judged_by_what_it_injects(quality, capsys, example_cluster_file):
    pytest.importorskip("rank_bm25")
    spec_suite = str(pathlib.Path(__file__).resolve().parents[2] / "canaries" / "spec.yaml")
    assert quality.main([spec_suite, "--no-latency", "--json"]) == 0
    hand = json.loads(capsys.readouterr().out)
    # The .tsv form of the same store: same facts, and routes_to is not judged (facts only).
    assert quality.main([spec_suite, "--clusters", str(example_cluster_file.with_suffix(".tsv")),
                         "--no-latency", "--json"]) == 0
    other = json.loads(capsys.readouterr().out)
    for name in ("spec", "weighted"):
        assert other["providers"][name]["all"]["fact_recall"] == hand["providers"][name]["all"]["fact_recall"]
        assert other["providers"][name]["all"]["cluster_hit"] is None
