"""benchmarks/mutation.py: reading mutmut's results into kill rates, telling known equivalent
mutants from unexplained ones, and the goal check failing."""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "mutation.py"

RESULTS = """\
    router.routing.score.x_route_prompt__mutmut_1: killed
    router.routing.score.x_route_prompt__mutmut_2: timeout
    router.routing.score.x_choose_clusters__mutmut_1: survived
    router.tokens.x_tokenize__mutmut_1: killed
    canaries.runner.x_differences__mutmut_1: killed
    canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1: no tests
    canaries.cases.x\u01c1SuiteError\u01c1format__mutmut_7: killed
    canaries.cases.x\u01c1Case\u01c1expectations__mutmut_2: suspicious
    router.gate.citations.x_load_ledgers__mutmut_1: killed
    router.routing.weighted.x_route_weighted__mutmut_1: killed
    router.routing.weightedscore.x_choose_clusters__mutmut_1: killed
    router.routing.wordmatch.x_lookup_stems__mutmut_1: killed
    router.routing.utterscore.x_coverage__mutmut_1: killed
    router.routing.veto.x_judge__mutmut_1: killed
    router.routing.exemplars.x_add_exemplar_postings__mutmut_1: killed
    router.hooks.compiled.x_start_rebuild__mutmut_1: killed
    router.cache.x_table_is_current__mutmut_1: killed
    router.cacheformat.x_read_table__mutmut_1: killed
"""

ONLY_LINE_DIFF = """\
# router.routing.score.x_choose_clusters__mutmut_1: survived
--- router/routing/score.py
+++ router/routing/score.py
@@ -1,3 +1,3 @@
 def choose_clusters(scored, settings):
-    if total > line_cap:
+    if total >= line_cap:
         pass
"""


@pytest.fixture(scope="module")
def mutation():
    spec = importlib.util.spec_from_file_location("mutation_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_results_lines_are_parsed_with_their_module(mutation):
    rows = mutation.parse_results("some banner\n" + RESULTS)
    assert rows[0] == ("router.routing.score.x_route_prompt__mutmut_1", "router.routing.score", "killed")
    assert rows[5] == ("canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1", "canaries.runner", "no tests")
    assert len(rows) == 18


@pytest.mark.parametrize("target, mutants, killed, survived, rate", [
    ("scorer", 3, 2, ["router.routing.score.x_choose_clusters__mutmut_1"], 66.7),  # a timeout counts as killed
    ("tokeniser", 1, 1, [], 100.0),
    ("canary checks", 4, 2, ["canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1",
                             "canaries.cases.x\u01c1Case\u01c1expectations__mutmut_2"], 50.0),
    ("citation gate", 1, 1, [], 100.0),
])
def test_targets_tally_killed_and_not_killed(mutation, target, mutants, killed, survived, rate):
    summary = mutation.summarise(mutation.parse_results(RESULTS), goal=50)
    tally = summary["targets"][target]
    assert (tally["mutants"], tally["killed"], tally["survived"], tally["kill_rate"]) == (mutants, killed, survived, rate)
    assert tally["unexplained"] == survived  # no reasons given: every survivor is unexplained


REASONS = {"router.routing.score.x_choose_clusters__mutmut_1": "argued equivalent",
           "canaries.runner.x\u01c1CaseResult\u01c1to_dict__mutmut_1": "argued equivalent",
           "canaries.cases.x\u01c1Case\u01c1expectations__mutmut_2": "argued equivalent"}


@pytest.mark.parametrize("goal, reasons, ok", [
    (50, REASONS, True),
    (66.7, REASONS, False),                                            # the canary checks kill 50%
    (50, dict(REASONS, **{"router.routing.score.x_choose_clusters__mutmut_1": None}), False),  # one unexplained
    (50, {}, False),
])
def test_goal_fails_on_a_low_rate_or_an_unexplained_survivor(mutation, goal, reasons, ok):
    summary = mutation.summarise(mutation.parse_results(RESULTS), reasons, goal=goal)
    assert summary["ok"] is ok


def test_kill_rate_of_killable_leaves_out_the_equivalent(mutation):
    summary = mutation.summarise(mutation.parse_results(RESULTS), REASONS, goal=50)
    scorer = summary["targets"]["scorer"]
    assert scorer["equivalent"] == ["router.routing.score.x_choose_clusters__mutmut_1"]
    assert (scorer["kill_rate"], scorer["kill_rate_of_killable"]) == (66.7, 100.0)


def test_a_subset_of_targets_is_summarised_alone(mutation):
    rows = [row for row in mutation.parse_results(RESULTS) if row[1] == "router.tokens"]
    summary = mutation.summarise(rows, targets={"tokeniser": ("router.tokens",)})
    assert list(summary["targets"]) == ["tokeniser"] and summary["ok"]


@pytest.mark.parametrize("module, diff, known", [
    ("router.routing.score", ONLY_LINE_DIFF, True),
    ("router.tokens", ONLY_LINE_DIFF, False),                                   # the same change elsewhere
    ("router.routing.score", ONLY_LINE_DIFF.replace(">= line_cap", "> line_cap + 1"), False),
    ("router.routing.score", "", False),
])
def test_equivalent_mutants_are_known_by_module_and_diff(mutation, module, diff, known):
    assert (mutation.explain(module, diff) is not None) is known


def test_every_equivalent_entry_names_a_target_module(mutation):
    modules = {module for modules in mutation.TARGETS.values() for module in modules}
    assert {module for module, _removed, _added in mutation.EQUIVALENT} <= modules
    assert all(removed != added for _module, removed, added in mutation.EQUIVALENT)


@pytest.mark.parametrize("text, message", [
    (RESULTS + "    harness.cli.x_main__mutmut_1: killed\n", "outside the targets: harness.cli"),
    ("    router.routing.score.x_f__mutmut_1: killed\n", "no mutants for target 'tokeniser'"),
    ("    weird_name__mutmut_1: killed\n", "cannot tell the module"),
])
def test_unexpected_results_are_refused(mutation, text, message):
    with pytest.raises(ValueError, match=message):
        mutation.summarise(mutation.parse_results(text))


def test_targets_are_what_pyproject_mutates_and_the_selected_tests_exist(mutation):
    """[tool.mutmut] only_mutate and TARGETS name the same modules; every test path selected exists
    (pytest would stop the whole run on a missing one)."""
    import tomllib

    root = SCRIPT.parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    mutated = {path[:-len(".py")].replace("/", ".") for path in config["only_mutate"]}
    assert mutated == {module for modules in mutation.TARGETS.values() for module in modules}
    selection = config["pytest_add_cli_args_test_selection"]
    paths = [arg.split("::")[0] for arg in selection if not arg.startswith("-")]
    assert paths and all((root / path).is_file() for path in paths), [p for p in paths if not (root / p).is_file()]
