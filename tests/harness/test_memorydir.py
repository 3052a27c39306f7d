"""Reading a Claude Code memory directory: index lines, front matter in both shapes, merging."""

import pytest

from harness import memorydir
from router.store.clusterfile import load_cluster_file
from router.errors import InputError


@pytest.mark.parametrize("line, expected", [
    ("- [Prefers bun](prefers-bun.md) \u2014 use bun, never npm",
     ("prefers_bun", "use bun, never npm", "Prefers bun", "prefers-bun.md")),
    ("- [User role](user_role.md) \u2013 solo developer",
     ("user_role", "solo developer", "User role", "user_role.md")),
    ("- [Env](sub/env_x.md): setx never reaches Bash", ("env_x", "setx never reaches Bash", "Env", "sub/env_x.md")),
    ("* [Title](feedback_y.md) - keep diffs small", ("feedback_y", "keep diffs small", "Title", "feedback_y.md")),
    ("- [No hook](project_z.md)", ("project_z", "", "No hook", "project_z.md")),
    ("- env_bash_tool_env_var_caching \u2014 setx vars never reach the Bash tool",
     ("env_bash_tool_env_var_caching", "setx vars never reach the Bash tool", "", "")),
    ("- `feedback_small_diffs` - keep diffs small", ("feedback_small_diffs", "keep diffs small", "", "")),
    ("  - Kebab-Name \u2014 mixed case", ("kebab_name", "mixed case", "", "")),
])
def test_parse_index_line_accepts_both_shapes(line, expected):
    assert memorydir.parse_index_line(line) == expected


@pytest.mark.parametrize("line", [
    "# Memory Index",
    "_Format: - <slug> \u2014 <one-line hook>; one line per memory_",
    "",
    "## User",
    "plain prose - with a dash",
    "- layer1_02 (5) \u2014 tidepool, wrangler \u2014 tidepool web app",  # a slim index's router line
])
def test_parse_index_line_ignores_other_lines(line):
    assert memorydir.parse_index_line(line) is None


def test_parse_index_text_keeps_line_numbers():
    text = "# Memory Index\n\n- a_one \u2014 first\nprose\n- [B](b_two.md) \u2014 second\n"
    entries = memorydir.parse_index_text(text)
    assert [(e.slug, e.line) for e in entries] == [("a_one", 3), ("b_two", 5)]


def test_duplicate_index_slugs_names_every_line():
    entries = memorydir.parse_index_text("- a_x \u2014 one\n- b_y \u2014 two\n- a_x \u2014 three\n")
    assert memorydir.duplicate_index_slugs(entries) == {"a_x": [1, 3]}
    assert memorydir.duplicate_index_slugs(entries[:2]) == {}


@pytest.mark.parametrize("slug, expected", [
    ("env_bash_tool", "env"),
    ("feedback_small_diffs", "feedback"),
    ("project_x", "project"),
    ("reference_grafana", "reference"),
    ("user_role", "user"),
    ("prefers_bun", "project"),
    ("feedback", "project"),          # a bare type word is not a prefix
    ("environment_notes", "project"),
])
def test_infer_type_from_slug_prefix(slug, expected):
    assert memorydir.infer_type(slug) == expected


OLD_SHAPE = """---
name: Bash env caching
description: setx vars never reach the Bash tool
type: env
---
Body text.
"""

NEW_SHAPE = """---
name: bash-env-caching
description: setx vars never reach the Bash tool
metadata:
  type: env
  hot: true
modified: 2026-08-01T10:00:00Z
---
Body text.
"""

NOT_YAML = """---
name: bash env: caching
description: setx: vars never reach the Bash tool
type: Env
hot: yes
---
Body text.
"""


@pytest.mark.parametrize("text, hot", [(OLD_SHAPE, False), (NEW_SHAPE, True), (NOT_YAML, True)])
def test_memory_from_text_reads_both_front_matter_shapes(text, hot):
    found = memorydir.memory_from_text("/m/env_bash_env_caching.md", text)
    assert found.slug == "env_bash_env_caching"
    assert found.type == "env"
    assert "never reach the Bash tool" in found.description
    assert found.hot is hot
    assert found.body == "Body text.\n"


@pytest.mark.parametrize("text, expected_type", [
    ("no front matter at all\n", ""),
    ("---\ndescription: d\ntype: 42\n---\n", ""),          # not a word: left for inference
    ("---\ndescription: d\nmetadata: plain\n---\n", ""),
    ("---\ndescription: d\ntype: Feedback\n---\n", "feedback"),
])
def test_memory_from_text_type_edge_cases(text, expected_type):
    assert memorydir.memory_from_text("/m/x.md", text).type == expected_type


def test_parse_front_matter_without_front_matter_returns_text():
    assert memorydir.parse_front_matter("plain\n") == ({}, "plain\n")


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_memory_dir_merges_index_and_files(tmp_path):
    _write(tmp_path / "MEMORY.md", "# Memory Index\n\n- [B](feedback_b.md) \u2014 index hook wins\n"
                                   "- c_only_in_index \u2014 no file\n- [B again](feedback_b.md) \u2014 ignored\n")
    _write(tmp_path / "feedback_b.md", "---\ndescription: file description\ntype: feedback\n---\n")
    _write(tmp_path / "a_unindexed.md", "---\ndescription: from the file\nmetadata:\n  type: reference\n---\n")
    _write(tmp_path / "env_no_type.md", "---\ndescription: typed by its prefix\n---\n")
    _write(tmp_path / "MEMORY.archive-2026-07-22T05-25-01-376Z.md", "- old_line \u2014 archived\n")
    _write(tmp_path / "MEMORY-2026.md", "- old_line \u2014 archived\n")
    (tmp_path / "notes.txt").write_text("not a memory")
    (tmp_path / "sub").mkdir()
    memories = memorydir.read_memory_dir(str(tmp_path))
    assert [(m.slug, m.type, m.hook) for m in memories] == [
        ("feedback_b", "feedback", "index hook wins"),
        ("c_only_in_index", "project", "no file"),
        ("a_unindexed", "reference", "from the file"),
        ("env_no_type", "env", "typed by its prefix"),
    ]
    assert memories[1].source.endswith("MEMORY.md:4")


def test_read_memory_dir_without_index_uses_descriptions_then_names(tmp_path):
    _write(tmp_path / "user_role.md", "---\nname: User role\ndescription: ''\n---\nbody\n")
    (memory,) = memorydir.read_memory_dir(str(tmp_path))
    assert (memory.slug, memory.type, memory.hook) == ("user_role", "user", "User role")


def test_read_memory_dir_rejects_a_missing_directory(tmp_path):
    with pytest.raises(InputError) as err:
        memorydir.read_memory_dir(str(tmp_path / "nope"))
    assert err.value.exit_code == 2 and "nope" in str(err.value)


def test_read_index_reports_bad_utf8_with_its_line(tmp_path):
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"- a_x \xe2\x80\x94 fine\n- b_y \xff broken\n")
    with pytest.raises(InputError) as err:
        memorydir.read_index(str(path))
    assert err.value.line == 2 and "UTF-8" in str(err.value)


def test_read_flat_index_infers_types_and_falls_back_to_titles(tmp_path):
    path = _write(tmp_path / "MEMORY.md", "- [Role](user_role.md)\n- feedback_x \u2014 hook\n")
    memories = memorydir.read_flat_index(str(path))
    assert [(m.slug, m.type, m.hook) for m in memories] == [("user_role", "user", "Role"),
                                                             ("feedback_x", "feedback", "hook")]


def test_bundled_flat_index_reads_every_member_with_its_type(example_cluster_file, example_flat_index):
    index = load_cluster_file(example_cluster_file)
    memories = memorydir.read_flat_index(str(example_flat_index))
    assert {(m.slug, m.type, m.hook) for m in memories} == {(m.slug, m.type, m.hook) for m in index.members}


def test_hot_slugs_reads_both_places(tmp_path):
    _write(tmp_path / "a_top.md", "---\nhot: true\n---\n")
    _write(tmp_path / "b_nested.md", "---\nmetadata:\n  hot: true\n---\n")
    _write(tmp_path / "c_cold.md", "---\nhot: false\n---\n")
    assert memorydir.hot_slugs(str(tmp_path)) == ["a_top", "b_nested"]
    assert memorydir.hot_slugs(str(tmp_path / "missing")) == []
    assert memorydir.hot_slugs(None) == []


def test_memory_file_with_invalid_utf8_is_an_error_naming_file_and_line(tmp_path):
    from harness.memorydir import read_memory_files
    from router.errors import InputError

    (tmp_path / "good.md").write_text("---\nname: good\ndescription: fine\ntype: user\n---\nbody\n")
    (tmp_path / "bad.md").write_bytes(b"---\nname: bad\ndescription: caf\xe9\n---\n")
    with pytest.raises(InputError) as info:
        read_memory_files(tmp_path)
    assert f"{tmp_path / 'bad.md'}:3" in str(info.value) and "UTF-8" in str(info.value)


def test_two_files_normalising_to_one_slug_are_refused(tmp_path):
    from harness.memorydir import read_memory_files
    from router.errors import InputError

    for name in ("prefers-bun.md", "prefers_bun.md"):
        (tmp_path / name).write_text(f"---\nname: {name}\ndescription: d\ntype: user\n---\n")
    with pytest.raises(InputError) as info:
        read_memory_files(tmp_path)
    assert "both become slug 'prefers_bun'" in str(info.value)


def test_front_matter_alias_bomb_is_read_as_plain_lines_not_expanded():
    # ``name: *i`` of a nine-level bomb: str() of the loaded value would be 9**9 items long.
    anchors = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    anchors += [f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]" for prev, name in zip("abcdefgh", "bcdefghi")]
    text = "---\n" + "\n".join(anchors) + "\nname: *i\ndescription: short\n---\nbody\n"
    memory = memorydir.memory_from_text("/m/bomb_note.md", text)
    assert memory.slug == "bomb_note" and memory.description == "short" and len(memory.name) < 100


def test_index_path_and_read_memory_index(tmp_path):
    from harness.memorydir import index_path, read_memory_index

    assert index_path(str(tmp_path)) == str(tmp_path / "MEMORY.md")
    assert read_memory_index(str(tmp_path)) == (str(tmp_path / "MEMORY.md"), None)
    (tmp_path / "MEMORY.md").write_bytes(b"- a \xe2\x80\x94 hook \xff\n")
    assert read_memory_index(str(tmp_path))[1] == "- a \u2014 hook \ufffd\n"


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "memory directory does not exist"),
    (lambda p: p.write_text("x"), "is a file, not a memory directory"),
])
def test_require_memory_dir_refuses_what_is_not_a_directory(tmp_path, make, message):
    from harness.memorydir import require_memory_dir

    target = tmp_path / "memory"
    make(target)
    with pytest.raises(InputError, match=message):
        require_memory_dir(str(target))
    target.unlink(missing_ok=True)
    target.mkdir()
    assert require_memory_dir(str(target)) == str(target)
