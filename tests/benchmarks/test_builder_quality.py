"""benchmarks/builder_quality.py: the targets it checks, on failing figures and on the real store."""

import importlib.util
import json
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "builder_quality.py"


@pytest.fixture(scope="module")
def quality():
    spec = importlib.util.spec_from_file_location("builder_quality", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(self_share, hand_recall, built_recall):
    return {"self_routing": {"built": self_share},
            "suites": {"example.yaml": {"hand": {"fact_recall": hand_recall},
                                        "built": {"fact_recall": built_recall}}}}


@pytest.mark.parametrize("self_share, hand, built, missed", [
    (0.95, 0.87, 0.80, []),
    (0.90, 0.87, 0.77, []),
    (0.89, 0.87, 0.88, ["self-routing"]),
    (0.95, 0.87, 0.76, ["fact recall"]),
    (0.50, 0.90, 0.50, ["self-routing", "fact recall"]),
])
def test_verdict_flags_each_missed_target(quality, self_share, hand, built, missed):
    failures = quality.verdict(figures(self_share, hand, built))
    assert len(failures) == len(missed)
    assert all(failure.startswith(target) for failure, target in zip(failures, missed))


def test_example_store_meets_the_targets(quality, capsys):
    code = quality.main(["--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result["failures"]
    assert result["self_routing"]["built"] >= 0.9
    example = result["suites"]["example.yaml"]
    assert example["hand"]["fact_recall"] - example["built"]["fact_recall"] <= 0.10
    assert result["stability"]["keep_clusters"]["moved"] == 0
