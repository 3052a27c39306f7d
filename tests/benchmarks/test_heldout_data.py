"""benchmarks/heldout_data.py: both held-out data directories are valid, and the checker catches
each breakage in either."""

import importlib.util
import pathlib
import re
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "heldout_data.py"

# What the breakages below edit in each directory: a memory that some case injects (its type and
# a piece of its hook that occurs once in MEMORY.md), a hot-strip slug, and layer1_01's size.
# ``minimums`` are the per-kind counts a directory was written to hold above the checker's own.
DATA_DIRS = {
    "heldout": {
        "path": REPO / "benchmarks" / "heldout", "suite": "heldout.yaml",
        "slug": "env_udp_port_range", "type": "env", "hook": "27015-27030", "hook_edited": "27015-27031",
        "hot": "feedback_lfs_lock_scenes", "first_size": 5, "minimums": {},
    },
    "heldout2": {
        "path": REPO / "benchmarks" / "heldout2", "suite": "heldout2.yaml",
        "slug": "env_override_cycles_umi", "type": "env", "hook": "Y151;I8U9;I8;Y151",
        "hook_edited": "Y151;I8U9;I8;Y150", "hot": "feedback_always_resume", "first_size": 5,
        "minimums": {"paraphrase": 40, "near-miss": 30},
    },
}


@pytest.fixture(scope="module")
def heldout():
    spec = importlib.util.spec_from_file_location("heldout_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=sorted(DATA_DIRS))
def facts(request):
    return DATA_DIRS[request.param]


@pytest.fixture
def data_copy(tmp_path, facts):
    target = tmp_path / facts["path"].name
    shutil.copytree(facts["path"], target)
    return target


def test_the_shipped_data_is_valid(heldout, facts):
    problems, counts = heldout.check(str(facts["path"]))
    assert problems == []
    assert sum(counts.values()) >= heldout.MIN_CASES
    for kind, minimum in heldout.KIND_MINIMUMS.items():
        assert counts[kind] >= max(minimum, facts["minimums"].get(kind, 0)), kind


def test_main_exits_0_and_prints_the_counts(heldout, facts, capsys):
    assert heldout.main([str(facts["path"])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ")
    assert "paraphrase" in out and "near-miss" in out


def test_dir_option_names_the_directory(heldout, facts, capsys):
    assert heldout.main(["--dir", str(facts["path"])]) == 0
    assert capsys.readouterr().out.startswith("ok: ")


def test_a_relative_directory_is_checked_like_an_absolute_one(heldout, facts, monkeypatch):
    monkeypatch.chdir(REPO)
    problems, _ = heldout.check(str(facts["path"].relative_to(REPO)))
    assert problems == []


def test_the_directory_is_given_once(heldout, facts, capsys):
    with pytest.raises(SystemExit) as exit_info:
        heldout.main([str(facts["path"]), "--dir", str(facts["path"])])
    assert exit_info.value.code == 2
    assert "give the data directory once" in capsys.readouterr().err


def test_without_arguments_it_checks_the_first_store(heldout):
    assert pathlib.Path(heldout.DEFAULT_DIR) == DATA_DIRS["heldout"]["path"]


def _edit(path, old, new, count=1):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= count, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _drop_cases(path, id_pattern):
    text = path.read_text(encoding="utf-8")
    kept, removed = re.subn(r"  - id: " + id_pattern + r".*?\n\n", "", text, flags=re.S)
    assert removed
    path.write_text(kept, encoding="utf-8")


def _delete_memory_file(root, facts):
    (root / "memory" / f"{facts['slug']}.md").unlink()


def _add_unindexed_memory(root, facts):
    (root / "memory" / "feedback_orphan.md").write_text(
        "---\nname: feedback_orphan\ndescription: an orphan\ntype: feedback\n---\nan orphan\n", encoding="utf-8")


def _break_cluster_size(root, facts):
    size = facts["first_size"]
    _edit(root / "clusters.md", f"- layer1_01 \u00b7 {size} \u00b7", f"- layer1_01 \u00b7 {size + 1} \u00b7")


def _unknown_slug_in_suite(root, facts):
    _edit(root / facts["suite"], f"injects: [{facts['slug']}]", "injects: [env_no_such_memory]")


def _too_few_paraphrases(root, facts):
    _drop_cases(root / facts["suite"], r"paraphrase-[0-3]\d-")


def _too_few_cases(root, facts):
    _drop_cases(root / facts["suite"], r"(?:direct|member)-")


def _neutral_expecting_a_route(root, facts):
    _edit(root / facts["suite"], '    silent: true\n    tags: [neutral]', "    routes_to: layer1_01\n    tags: [neutral]")


def _case_without_kind(root, facts):
    _edit(root / facts["suite"], "tags: [neutral]", "tags: [smalltalk]")


def _member_case_without_injects(root, facts):
    _edit(root / facts["suite"], f"    injects: [{facts['slug']}]\n", "")


def _short_session(root, facts):
    path = root / "session-60.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")


def _blank_session_line(root, facts):
    _edit(root / "session-200.txt", "\n", "\n\n")


def _type_mismatch(root, facts):
    _edit(root / "memory" / f"{facts['slug']}.md", f"type: {facts['type']}", "type: project")


def _hook_mismatch(root, facts):
    _edit(root / "memory" / "MEMORY.md", facts["hook"], facts["hook_edited"])


def _unknown_hot_slug(root, facts):
    _edit(root / "memory-router.toml", f'"{facts["hot"]}",', f'"{facts["hot"][:-1]}",')


def _front_matter_without_description(root, facts):
    _edit(root / "memory" / f"{facts['slug']}.md", "description: ", "summary: ")


def _second_suite_file(root, facts):
    shutil.copy(root / facts["suite"], root / "copy.yaml")


def _no_suite_file(root, facts):
    (root / facts["suite"]).unlink()


# Expected messages are format strings over the directory's facts.
@pytest.mark.parametrize("breakage, expected", [
    (_delete_memory_file, "{slug} is listed but has no memory file"),
    (_add_unindexed_memory, "memory file feedback_orphan.md is not listed in MEMORY.md"),
    (_add_unindexed_memory, "memory feedback_orphan is in no cluster"),
    (_break_cluster_size, "cluster layer1_01 declares size {size_plus_one} but has {first_size} member lines"),
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
    (_unknown_hot_slug, "hot_strip names {hot_cut}"),
    (_front_matter_without_description, "front matter has no description"),
    (_second_suite_file, "expected exactly one .yaml suite file, found copy.yaml, {suite}"),
    (_no_suite_file, "expected exactly one .yaml suite file, found none"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else None)
def test_each_breakage_is_reported(heldout, facts, data_copy, breakage, expected, capsys):
    expected = expected.format(size_plus_one=facts["first_size"] + 1, hot_cut=facts["hot"][:-1], **facts)
    breakage(data_copy, facts)
    problems, _ = heldout.check(str(data_copy))
    assert any(expected in problem for problem in problems), problems
    assert heldout.main([str(data_copy)]) == 1
    assert expected in capsys.readouterr().out
