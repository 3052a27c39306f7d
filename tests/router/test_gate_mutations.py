"""Mutation self-check: the routing gate must be able to fail.

Each mutation below breaks one rule of the router (the floor, the weights, the clear-second
rule, the caps, the tokeniser). For each, a mutant copy of the router core is compiled from the
real source with that one change, and the bundled canary suites are evaluated against it. The
gate must turn red on at least one case, or the suites do not guard that rule.
"""

import pathlib
import sys
import types

import pytest

from canaries.runner import evaluate
from canaries.suite import bundled_suites, load_suite
from router.store.clusterfile import load_cluster_file
from router.config import default_settings

ROUTER_DIR = pathlib.Path(__file__).resolve().parents[2] / "router"

# (module, original text, mutant text, what the mutation breaks)
MUTATIONS = [
    ("score", "scored[0][1] < floor", "scored[0][1] < floor + 1", "floor off by one"),
    ("score", "tag_weight * len(tags)", "member_weight * len(tags)", "tag weight ignored"),
    ("score", "member_weight * len(members)", "tag_weight * len(members)", "member weight = tag weight"),
    ("score", "and (third is None or second > third)", "", "clear second ignores the third"),
    ("score", "second >= settings[\"second_ratio\"] * top", "True", "second-ratio rule dropped"),
    ("score", "if len(scored) > 1:", "if False:", "never a second cluster"),
    ("score", "if total > line_cap:", "if False:", "line cap ignored"),
    ("score", "return (-len(prompt_tokens & words), row[0], row[2])", "return (row[0], row[2])",
     "line cap keeps file order instead of relevance"),
    ("score", "member_tokens -= tag_tokens", "pass", "member words not minus tag words"),
    ("score", "member_tokens |= tokenize(member.hook)", "pass", "hook text not scored"),
    ("tokens", "STOPWORDS = _load_stopwords()", "STOPWORDS = frozenset()", "stopwords scored"),
    ("tokens", "return word[:-1]", "return word", "plurals not folded"),
    ("tokens", "for part in word.split(\"_\"):", "for part in ():", "identifiers not split"),
]


# where each mutated module lives under router/
MODULE_PATHS = {"tokens": ("tokens",), "score": ("routing", "score")}


def _path(name):
    *folders, stem = MODULE_PATHS[name]
    return ROUTER_DIR.joinpath(*folders, f"{stem}.py")


def _compile(name, source, monkeypatch):
    dotted = "router." + ".".join(MODULE_PATHS[name])
    module = types.ModuleType(dotted)
    module.__file__ = str(_path(name))
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, dotted, module)
    return module


def _mutant_router(target, original, mutant, monkeypatch):
    sources = {name: _path(name).read_text(encoding="utf-8") for name in ("tokens", "score")}
    assert sources[target].count(original) == 1, f"mutation anchor not found once in {target}.py: {original!r}"
    sources[target] = sources[target].replace(original, mutant)
    _compile("tokens", sources["tokens"], monkeypatch)
    return _compile("score", sources["score"], monkeypatch)


def _gate_failures(score_module):
    failures = []
    settings = dict(default_settings(), provider="spec")
    for path in bundled_suites():
        suite = load_suite(path)
        table = score_module.build_routing_table(load_cluster_file(suite.cluster_path))
        for case in suite.cases:
            decision = score_module.route_prompt(case.prompt, table, settings)
            result = evaluate(case, dict(decision, provider="spec"))
            if result.failed:
                failures.append(case.id)
    return failures


def test_the_real_router_passes_the_gate(monkeypatch):
    score = _mutant_router("score", "def route_prompt(", "def route_prompt(", monkeypatch)
    assert _gate_failures(score) == []


@pytest.mark.parametrize("target, original, mutant, breaks", MUTATIONS, ids=[m[3] for m in MUTATIONS])
def test_each_mutation_turns_the_gate_red(monkeypatch, target, original, mutant, breaks):
    score = _mutant_router(target, original, mutant, monkeypatch)
    assert _gate_failures(score), f"no bundled canary catches: {breaks}"
