"""benchmarks/mutation.py: reading mutmut's results into kill rates, and the goal check failing."""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "mutation.py"

RESULTS = """\
    router.score.x_route_prompt__mutmut_1: killed
    router.score.x_route_prompt__mutmut_2: timeout
    router.score.x_choose_clusters__mutmut_1: survived
    router.tokens.x_tokenize__mutmut_1: killed
    canaries.runner.x_differences__mutmut_1: killed
    canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1: no tests
    canaries.cases.x\u01c1SuiteError\u01c1format__mutmut_7: killed
    canaries.cases.x\u01c1Case\u01c1expectations__mutmut_2: suspicious
"""


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_results_lines_are_parsed_with_their_module(mutation):
    rows = mutation.parse_results("some banner\n" + RESULTS)
    assert rows[0] == ("router.score.x_route_prompt__mutmut_1", "router.score", "killed")
    assert rows[5] == ("canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1", "canaries.runner", "no tests")
    assert len(rows) == 8


@pytest.mark.parametrize("target, mutants, killed, survived, rate", [
    ("scorer", 3, 2, ["router.score.x_choose_clusters__mutmut_1"], 66.7),  # a timeout counts as killed
    ("tokeniser", 1, 1, [], 100.0),
    ("canary checks", 4, 2, ["canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1",
                             "canaries.cases.x\u01c1Case\u01c1expectations__mutmut_2"], 50.0),
])
def test_targets_tally_killed_and_not_killed(mutation, target, mutants, killed, survived, rate):
    summary = mutation.summarise(mutation.parse_results(RESULTS), goal=50)
    tally = summary["targets"][target]
    assert (tally["mutants"], tally["killed"], tally["survived"], tally["kill_rate"]) == (mutants, killed, survived, rate)


@pytest.mark.parametrize("goal, ok", [(50, True), (66.7, False), (90, False)])
def test_goal_fails_when_any_target_misses_it(mutation, goal, ok):
    assert mutation.summarise(mutation.parse_results(RESULTS), goal=goal)["ok"] is ok


@pytest.mark.parametrize("text, message", [
    (RESULTS + "    harness.cli.x_main__mutmut_1: killed\n", "outside the targets: harness.cli"),
    ("    router.score.x_f__mutmut_1: killed\n", "no mutants for target 'tokeniser'"),
    ("    weird_name__mutmut_1: killed\n", "cannot tell the module"),
])
def test_unexpected_results_are_refused(mutation, text, message):
    with pytest.raises(ValueError, match=message):
        mutation.summarise(mutation.parse_results(text))
