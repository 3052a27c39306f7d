"""The doctor's provider check, fed each way a provider can fail."""

import itertools
import textwrap

import pytest

from harness.doctor.provider import check_provider, measure_import
from router.store.clusterfile import load_cluster_file
from router.config import default_settings
from router.providers.provider import build_table

_names = itertools.count()

GOOD = """
def make(settings):
    def provider(request):
        cluster_id, _tags, _label, members = request["table"]["clusters"][0]
        slug, _type, hook = members[0]
        return {"clusters": [cluster_id], "lines": [{"cluster_id": cluster_id, "slug": slug, "hook": hook}],
                "confidence": 0.8, "explanation": "always the first"}
    return provider
"""


@pytest.fixture
def table(example_cluster_file):
    return build_table(load_cluster_file(example_cluster_file))


@pytest.fixture
def module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the child interpreter that times the import

    def write(source):
        name = f"checked_provider_{next(_names)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        return f"{name}:make"

    return write


def settings(**overrides):
    return dict(default_settings(), **overrides)


@pytest.mark.parametrize("name", ["null", "spec", "weighted"])
def test_builtins_are_ok(table, name):
    report = check_provider(settings(provider=name), table)
    assert (report["status"], report["builtin"], report["import_ms"]) == ("ok", True, None)
    assert report["probe"]["explanation"]


def test_custom_provider_ok_with_its_import_cost(table, module):
    name = module(GOOD)
    report = check_provider(settings(provider=name, provider_timeout_ms=5000), table)
    assert report["status"] == "ok" and report["builtin"] is False
    assert 0 <= report["import_ms"] < 5000
    assert report["probe"]["routed"] == ["layer1_project_memory_router"]
    assert report["probe"]["explanation"] == "always the first"


@pytest.mark.parametrize("source, budget, status, needle", [
    (None, 5000, "fail", "No module named"),
    ("raise RuntimeError('boom at import')\n", 5000, "fail", "RuntimeError: boom at import"),
    ("import time\ntime.sleep(0.5)\n" + GOOD, 200, "fail", "over provider_timeout_ms (200)"),
    ("import time\ntime.sleep(0.3)\n" + GOOD, 500, "warn", "of the 500 ms budget"),
    ("def make(settings):\n    return lambda request: {'clusters': []}\n", 5000, "fail", "decision lacks"),
    ("def make(settings):\n    raise KeyError('api_key')\n", 5000, "fail", "raised KeyError"),
])
def test_custom_provider_problems(table, module, source, budget, status, needle):
    name = "no_such_module_for_doctor:make" if source is None else module(source)
    report = check_provider(settings(provider=name, provider_timeout_ms=budget), table)
    assert report["status"] == status
    assert needle in report["problem"]


def test_malformed_name_fails_without_importing():
    report = check_provider(settings(provider="not a provider"))
    assert report["status"] == "fail" and "package.module:factory" in report["problem"]


def test_measure_import_of_the_stdlib():
    elapsed, problem = measure_import("json")
    assert problem is None and elapsed >= 0


@pytest.mark.parametrize("budget_ms, hook_timeout_s, status", [
    (4000, 5, "ok"), (4500, 5, "fail"), (4500, 10, "ok"), (4500, None, "ok"),
])
def test_the_budget_is_checked_against_the_installed_hooks_timeout(budget_ms, hook_timeout_s, status):
    settings = dict(default_settings(), provider_timeout_ms=budget_ms)
    report = check_provider(settings, hook_timeout_s=hook_timeout_s)
    assert report["status"] == status
    if status == "fail":
        assert "does not fit the hook's 5 s timeout" in report["problem"] and "at most 4000" in report["problem"]
