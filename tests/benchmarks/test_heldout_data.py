"""benchmarks/heldout_data.py: the held-out data is valid, and the checker catches each breakage."""

import importlib.util
import pathlib
import re
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "heldout_data.py"
DATA = REPO / "benchmarks" / "heldout"


@pytest.fixture(scope="module")
def heldout():
    spec = importlib.util.spec_from_file_location("heldout_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def data_copy(tmp_path):
    target = tmp_path / "heldout"
    shutil.copytree(DATA, target)
    return target


def test_the_shipped_data_is_valid(heldout):
    problems, counts = heldout.check(str(DATA))
    assert problems == []
    assert sum(counts.values()) >= heldout.MIN_CASES
    for kind, minimum in heldout.KIND_MINIMUMS.items():
        assert counts[kind] >= minimum, kind


def test_main_exits_0_and_prints_the_counts(heldout, capsys):
    assert heldout.main([str(DATA)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ")
    assert "paraphrase" in out and "near-miss" in out


def _edit(path, old, new, count=1):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _drop_cases(path, id_pattern):
    text = path.read_text(encoding="utf-8")
    kept, removed = re.subn(r"  - id: " + id_pattern + r".*?\n\n", "", text, flags=re.S)
    assert removed
    path.write_text(kept, encoding="utf-8")


def _delete_memory_file(root):
    (root / "memory" / "env_udp_port_range.md").unlink()


def _add_unindexed_memory(root):
    (root / "memory" / "feedback_orphan.md").write_text(
        "---\nname: feedback_orphan\ndescription: an orphan\ntype: feedback\n---\nan orphan\n", encoding="utf-8")


def _break_cluster_size(root):
    _edit(root / "clusters.md", "- layer1_01 \u00b7 5 \u00b7", "- layer1_01 \u00b7 6 \u00b7")


def _unknown_slug_in_suite(root):
    _edit(root / "heldout.yaml", "injects: [env_udp_port_range]", "injects: [env_no_such_memory]")


def _too_few_paraphrases(root):
    _drop_cases(root / "heldout.yaml", r"paraphrase-0\d-")


def _too_few_cases(root):
    _drop_cases(root / "heldout.yaml", r"(?:direct|member)-")


def _neutral_expecting_a_route(root):
    _edit(root / "heldout.yaml", '    silent: true\n    tags: [neutral]', "    routes_to: layer1_01\n    tags: [neutral]")


def _case_without_kind(root):
    _edit(root / "heldout.yaml", "tags: [neutral]", "tags: [smalltalk]")


def _member_case_without_injects(root):
    _edit(root / "heldout.yaml", "    injects: [env_udp_port_range]\n", "")


def _short_session(root):
    path = root / "session-60.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")


def _blank_session_line(root):
    _edit(root / "session-200.txt", "\n", "\n\n")


def _type_mismatch(root):
    _edit(root / "memory" / "env_udp_port_range.md", "type: env", "type: project")


def _hook_mismatch(root):
    _edit(root / "memory" / "MEMORY.md", "27015-27030", "27015-27031")


def _unknown_hot_slug(root):
    _edit(root / "memory-router.toml", '"feedback_lfs_lock_scenes",', '"feedback_lfs_lock_scene",')


def _front_matter_without_description(root):
    _edit(root / "memory" / "env_udp_port_range.md", "description: ", "summary: ")


@pytest.mark.parametrize("breakage, expected", [
    (_delete_memory_file, "env_udp_port_range is listed but has no memory file"),
    (_add_unindexed_memory, "memory file feedback_orphan.md is not listed in MEMORY.md"),
    (_add_unindexed_memory, "memory feedback_orphan is in no cluster"),
    (_break_cluster_size, "cluster layer1_01 declares size 6 but has 5 member lines"),
    (_unknown_slug_in_suite, "env_no_such_memory"),
    (_too_few_paraphrases, "paraphrase cases, at least 30 needed"),
    (_too_few_cases, "cases, at least 200 needed"),
    (_neutral_expecting_a_route, "must expect silence"),
    (_case_without_kind, "first tag must be its kind"),
    (_member_case_without_injects, "must name its memory in injects"),
    (_short_session, "59 prompts, expected 60"),
    (_blank_session_line, "empty line"),
    (_type_mismatch, "its memory file says project"),
    (_hook_mismatch, "hook differs"),
    (_unknown_hot_slug, "hot_strip names feedback_lfs_lock_scene"),
    (_front_matter_without_description, "front matter has no description"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else None)
def test_each_breakage_is_reported(heldout, data_copy, breakage, expected, capsys):
    breakage(data_copy)
    problems, _ = heldout.check(str(data_copy))
    assert any(expected in problem for problem in problems), problems
    assert heldout.main([str(data_copy)]) == 1
    assert expected in capsys.readouterr().out
