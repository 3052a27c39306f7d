"""router.store.memorystore: the memory directory's location and slugs, standard library only."""

import pytest

from router.store import memorystore as ms


@pytest.mark.parametrize("text, slug", [
    ("feedback_x", "feedback_x"), ("Project-Hot-Strip", "project_hot_strip"), ("a.b c", "a_b_c"),
    ("__x__", "x"), ("!!!", "memory"),
])
def test_normalise_slug(text, slug):
    assert ms.normalise_slug(text) == slug


@pytest.mark.parametrize("name, index", [
    ("MEMORY.md", True), ("MEMORY.archive-20260101.md", True), ("MEMORY-1.md", True), ("memory.md", False),
    ("feedback_x.md", False),
])
def test_is_index_file(name, index):
    assert ms.is_index_file(name) is index


def test_claude_config_dir():
    assert ms.claude_config_dir({"CLAUDE_CONFIG_DIR": "/cfg"}) == "/cfg"
    assert ms.claude_config_dir({"HOME": "/home/u"}) == "/home/u/.claude"


def test_project_key_matches_claude_code():
    assert ms.project_key("/home/dev/code/demo") == "-home-dev-code-demo"
    assert ms.project_key("/a/\U0001F600b") == "-a---b"


def test_default_memory_dir_uses_the_git_root(tmp_path):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    expected = str(tmp_path / "cfg" / "projects" / ms.project_key(tmp_path / "repo") / "memory")
    assert ms.default_memory_dir(str(tmp_path / "repo" / "sub"), env) == expected
    (tmp_path / "plain").mkdir()
    assert ms.default_memory_dir(str(tmp_path / "plain"), env).endswith(ms.project_key(tmp_path / "plain") + "/memory")


def test_memory_dir_slugs(tmp_path):
    for name in ("feedback_a.md", "Project-B.md", "MEMORY.md", "MEMORY.archive-1.md", "notes.txt"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    (tmp_path / "dir.md").mkdir()
    assert ms.memory_dir_slugs(str(tmp_path)) == {"feedback_a", "project_b"}


def test_memory_dir_slugs_raises_for_a_missing_dir(tmp_path):
    with pytest.raises(OSError):
        ms.memory_dir_slugs(str(tmp_path / "missing"))
