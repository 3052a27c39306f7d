"""The located YAML loader: what it refuses before converting (alias bombs, recursive anchors,
deep nesting), each as a problem on a line, bounded in time and memory."""

import resource

import pytest

from canaries.yamllines import MAX_ALIAS_EXPANSION, MAX_DEPTH, compose_located


def nine_level_bomb(tail="cases: *i\n"):
    """Nine anchors, each a list of nine aliases of the one before: 9**9 values once expanded."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for previous, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n" + tail


def test_nine_level_alias_bomb_is_a_problem_on_its_line():
    problems = []
    assert compose_located(nine_level_bomb(), problems) is None
    (problem,) = problems
    # f: &f is the first value whose expansion passes the bound (9**6 = 531,441 > 100,000 + distinct)
    assert problem.line == 6 and "anchors and aliases expand" in problem.message and problem.fix


@pytest.mark.parametrize("text,line", [
    ("a: &a [1, *a]\n", 1),
    ("cases: &top\n  - id: x\n    more: *top\n", 1),
])
def test_recursive_alias_is_a_problem(text, line):
    problems = []
    assert compose_located(text, problems) is None
    assert [p.line for p in problems] == [line] and "refers to the anchor that contains it" in problems[0].message


def test_nesting_past_the_bound_is_a_problem():
    deep = "x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    problems = []
    assert compose_located(deep, problems) is None
    assert problems[0].line == 1 and f"nested more than {MAX_DEPTH} levels" in problems[0].message


def test_aliases_below_the_bound_still_expand():
    # A shared list used many times is legitimate: 1,000 uses of a 50-item list stays under the bound.
    shared = "shared: &s [" + ",".join(["w"] * 50) + "]\n"
    uses = "uses:\n" + "".join("  - *s\n" for _ in range(1000))
    assert 1000 * 51 < MAX_ALIAS_EXPANSION
    problems = []
    data = compose_located(shared + uses, problems)
    assert problems == [] and len(data["uses"]) == 1000 and data["uses"][999] == ["w"] * 50


def _limit_memory():
    limit = 1024 * 1024 * 1024  # 1 GiB: the bomb took 5 GB before the bound
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_canary_run_on_a_bomb_exits_2_with_file_and_line_in_bounded_time_and_memory(tmp_path):
    import subprocess

    from conftest import memory_router_exe

    suite = tmp_path / "bomb.yaml"
    suite.write_text(nine_level_bomb())
    result = subprocess.run([memory_router_exe(), "canary", "run", str(suite)], capture_output=True,
                            timeout=60, preexec_fn=_limit_memory)
    assert result.returncode == 2, result.stderr
    err = result.stderr.decode()
    assert f"{suite}:6:" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_located_yaml_records_lines_and_merges_anchors():
    problems = []
    data = compose_located("base: &b\n  x: 1\nother:\n  <<: *b\n  y:\n    - 1\n    - 2\n", problems)
    assert problems == []
    assert data.key_lines == {"base": 1, "other": 3}
    assert dict(data["other"]) == {"x": 1, "y": [1, 2]}
    assert data["other"]["y"].item_lines == [6, 7]
