"""benchmarks/mcp_latency.py: the target check, on passing and failing figures."""

import importlib.util
import pathlib
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "mcp_latency.py"


@pytest.fixture(scope="module")
def latency():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("mcp_latency", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("route_ms, ok", [([4.0, 5.0, 6.0], True), ([7.9, 8.0, 8.1], True),
                                          ([8.0, 8.1, 8.2], False)])
def test_a_tool_over_the_target_ratio_fails_the_run(latency, route_ms, ok):
    result = latency.summarise({"noop": [3.0, 4.0, 5.0], "route": route_ms, "get_memory": [4.0]}, 2.0)
    assert result["ok"] is ok
    assert result["noop_median_ms"] == 4.0 and result["tools"]["route"]["ratio"] == round(route_ms[1] / 4.0, 2)
