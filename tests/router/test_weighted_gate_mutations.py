"""Mutation self-check for the weighted provider: each rule of router/weighted.py (and of its
table, router/weightedtable.py), broken in a
mutant copy compiled from the real source, must turn the bundled canary suites red when they
run under ``provider = "weighted"`` (as the spec scorer's rules are checked in
test_gate_mutations.py)."""

import pathlib
import sys
import types

import pytest

from canaries.runner import run_cases
from canaries.suite import bundled_suites, load_suite
from router.config import default_settings
from router.provider import build_table

ROUTER = pathlib.Path(__file__).resolve().parents[2] / "router"
# Where a mutation's anchor lives when it is not router/weighted.py.
MODULE_OF = {"no idf: every word weighs the same": "weightedtable"}

MUTATIONS = [
    ("rows[0][1] < floor or", "rows[0][1] < floor - 3 or", "floor lowered"),
    ("cluster_part.get(position, 0.0) + weight * tag_boost", "cluster_part.get(position, 0.0) + weight",
     "tag boost ignored"),
    ("    out = {token if \"_\" in token else stem(token) for token in tokens}", "    out = set(tokens)",
     "prompt words not stemmed"),
    ("found = _corroborated(_match(words, table))", "found = _match(words, table)",
     "spelling repairs need no corroboration"),
    ("if settings[\"rare_word_rule\"] and rare is not None", "if False and rare is not None", "rare-word rule off"),
    ("if chosen and settings[\"intent_gate\"]", "if False and settings[\"intent_gate\"]", "intent gate off"),
    ("return log(1 + (documents - df + 0.5) / (df + 0.5))", "return 1.0", "no idf: every word weighs the same"),
    ("return (-member_weight.get((row[1], row[2]), 0.0), row[0], row[2])", "return (row[0], row[2])",
     "line cap keeps file order instead of prompt weight"),
]


def _gate_failures(monkeypatch, original=None, mutant=None, module_name="weighted"):
    path = ROUTER / f"{module_name}.py"
    source = path.read_text(encoding="utf-8")
    if original is not None:
        assert source.count(original) == 1, f"mutation anchor not found once in {path.name}: {original!r}"
        source = source.replace(original, mutant)
    module = types.ModuleType(f"router.{module_name}")
    module.__file__ = str(path)
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, f"router.{module_name}", module)
    settings = dict(default_settings(), provider="weighted")
    failures = []
    for path in bundled_suites():
        suite = load_suite(path)
        for result in run_cases(suite.cases, build_table(suite.index), settings):
            if result.failed:
                failures.append(result.case.id)
    return failures


def test_the_real_weighted_provider_passes_the_gate(monkeypatch):
    assert _gate_failures(monkeypatch) == []


@pytest.mark.parametrize("original, mutant, breaks", MUTATIONS, ids=[m[2] for m in MUTATIONS])
def test_each_mutation_turns_the_gate_red(monkeypatch, original, mutant, breaks):
    assert _gate_failures(monkeypatch, original, mutant, MODULE_OF.get(breaks, "weighted")), \
        f"no bundled canary catches: {breaks}"
