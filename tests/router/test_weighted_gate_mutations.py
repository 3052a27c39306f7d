"""Mutation self-check for the weighted provider: each rule of router/routing/weightedscore.py and
router/routing/weighted.py (and of its table, router/routing/weightedtable.py, and of routing on utterances,
router/routing/utterscore.py), broken in a
mutant copy compiled from the real source, must turn the bundled canary suites red when they
run under ``provider = "weighted"`` (as the spec scorer's rules are checked in
test_gate_mutations.py).

The bundled example store ships its utterances, so the suites route through router/routing/utterscore.py;
each mutant is also run with ``utterances = false`` (the path of a store without them), where it
must fail a case the real provider passes there."""

import pathlib
import sys
import types

import pytest

from canaries.runner import run_cases
from canaries.suite import bundled_suites, load_suite
from router.config import default_settings
from router.providers.provider import build_table

ROUTER = pathlib.Path(__file__).resolve().parents[2] / "router"
# Where a mutation's anchor lives when it is not router/routing/weightedscore.py (the scoring parts).
MODULE_OF = {"intent gate off": "weighted", "spelling repairs need no corroboration": "wordmatch", "near-miss gate off": "utterscore", "veto off": "utterscore",
             "utterance words are not their member's words": "utterscore",
             "intent gate off (utterances)": "utterscore"}
# Modules that bind names of another router module when imported: forgotten around a mutant, so
# they are imported again against it (or are it).
DEPENDENTS = ("router.routing.weighted", "router.routing.weightedtable", "router.routing.utterscore", "router.routing.uttertable")

MUTATIONS = [
    ("rows[0][1] < floor or", "rows[0][1] < floor - 3 or", "floor lowered"),
    ("cluster_part.get(position, 0.0) + weight * tag_boost", "cluster_part.get(position, 0.0) + weight",
     "tag boost ignored"),
    ("key = token if \"_\" in token else stem(token)", "key = token", "prompt words not stemmed"),
    ("found = _corroborated(_match(words, table))", "found = _match(words, table)",
     "spelling repairs need no corroboration"),
    ("if settings[\"rare_word_rule\"] and rare is not None", "if False and rare is not None", "rare-word rule off"),
    ("if chosen and settings[\"intent_gate\"]", "if False and settings[\"intent_gate\"]", "intent gate off"),
    ("return log(1 + (documents - df + 0.5) / (df + 0.5))", "return 1.0", "no idf: every word weighs the same"),
    ("return (-member_weight.get((row[1], row[2]), 0.0), row[0], row[2])", "return (row[0], row[2])",
     "line cap keeps file order instead of prompt weight"),
    ("share < settings[\"utterance_coverage\"]", "share < 0", "near-miss gate off"),
    ("        if veto[\"vetoed\"]:", "        if False:", "veto off"),
    ("view = member_view(table)", "view = table", "utterance words are not their member's words"),
    # No mutation of select_by_evidence's order or share: with the shipped utterance_line_limit = 0
    # (line_cap) the session stage (lines_per_injection, line_evidence_share) chooses the lines
    # sent, and no bundled canary tells those mutants apart; tests/router/test_utterances_routing.py
    # checks the rule with a limit set.
    ("if chosen and settings[\"intent_gate\"]:", "if False:", "intent gate off (utterances)"),
]


def _failures(settings):
    failures = set()
    for path in bundled_suites():
        suite = load_suite(path)
        for result in run_cases(suite.cases, build_table(suite.index), settings):
            if result.failed:
                failures.add(result.case.id)
    return failures


ON = dict(default_settings(), provider="weighted")
OFF = dict(ON, utterances=False)


def _gate_failures(monkeypatch, original=None, mutant=None, module_name="weightedscore"):
    """The cases a mutant fails: with the shipped utterances, and without them (beyond those the
    real provider fails without them: the suites' marks are the shipped provider's)."""
    baseline_off = _failures(OFF)
    path = ROUTER / "routing" / f"{module_name}.py"
    source = path.read_text(encoding="utf-8")
    if original is not None:
        assert source.count(original) == 1, f"mutation anchor not found once in {path.name}: {original!r}"
        source = source.replace(original, mutant)
    module = types.ModuleType(f"router.routing.{module_name}")
    module.__file__ = str(path)
    for dependent in DEPENDENTS:
        monkeypatch.delitem(sys.modules, dependent, raising=False)
    monkeypatch.setitem(sys.modules, f"router.routing.{module_name}", module)
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return sorted(_failures(ON) | (_failures(OFF) - baseline_off))


def test_the_real_weighted_provider_passes_the_gate(monkeypatch):
    assert _gate_failures(monkeypatch) == []


@pytest.mark.parametrize("original, mutant, breaks", MUTATIONS, ids=[m[2] for m in MUTATIONS])
def test_each_mutation_turns_the_gate_red(monkeypatch, original, mutant, breaks):
    assert _gate_failures(monkeypatch, original, mutant, MODULE_OF.get(breaks, "weightedscore")), \
        f"no bundled canary catches: {breaks}"
