"""harness.init.setup: what init reads before it writes, the config it writes, and the scope it picks."""

import os
import shutil

import pytest

from harness.init import setup
from router.errors import InputError, RefusedError

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "router", "data", "example")


@pytest.fixture
def store(tmp_path):
    """A project and a memory directory (the example store's flat index and one topic file)."""
    project = tmp_path / "project"
    project.mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    shutil.copy(os.path.join(EXAMPLE, "MEMORY.md"), memory / "MEMORY.md")
    return project, memory


@pytest.mark.parametrize("relative, expected", [
    ("project/brain/c.md", "brain/c.md"),
    ("home/.claude/projects/k/memory", "~/.claude/projects/k/memory"),
    ("elsewhere/memory", "{tmp}/elsewhere/memory"),
])
def test_config_word(tmp_path, monkeypatch, relative, expected):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert setup.config_word(str(tmp_path / relative), str(tmp_path / "project")) == expected.format(tmp=tmp_path)


def test_no_memory_directory_is_an_error_naming_where_it_looked_and_the_fix(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    with pytest.raises(InputError) as err:
        setup.plan_init(str(project))
    assert "Claude Code's default location" in err.value.message and "auto memory" in err.value.fix
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="holds no memories"):
        setup.plan_init(str(project), str(empty))


def test_plan_then_config_sets_only_what_is_missing(store):
    project, memory = store
    plan = setup.plan_init(str(project), str(memory))
    assert plan["cluster_how"] == "to be built" and not plan["cluster_exists"] and plan["hot_strip"] is None
    changes = setup.config_changes(plan, ["a_slug"])
    assert changes == {"memory_dir": str(memory), "clusters": "brain/memory-layer1-clusters.md", "hot_strip": ["a_slug"]}
    assert setup.write_config(plan, changes)[0] == "created"
    text = (project / "memory-router.toml").read_text()
    assert text.startswith(setup.CONFIG_HEADER)
    again = setup.plan_init(str(project))
    assert again["memory_how"].startswith("memory_dir in ") and again["hot_strip"] == ["a_slug"]
    assert setup.config_changes(again, None) == {}
    assert setup.write_config(again, {}) == ("unchanged", "")


def test_a_hand_edited_config_keeps_its_lines_and_its_choices(store, tmp_path):
    project, memory = store
    (project / "memory-router.toml").write_text("# mine\nscore_floor = 4  # tuned\nhot_strip = []\n")
    plan = setup.plan_init(str(project), str(memory))
    assert plan["hot_strip"] == []           # an empty strip is a choice, kept
    changes = setup.config_changes(plan, ["ignored"])
    assert set(changes) == {"memory_dir", "clusters"}
    action, diff = setup.write_config(plan, changes, dry_run=True)
    assert action == "dry-run" and "+clusters = 'brain/memory-layer1-clusters.md'" in diff
    assert (project / "memory-router.toml").read_text() == "# mine\nscore_floor = 4  # tuned\nhot_strip = []\n"
    setup.write_config(plan, changes)
    assert (project / "memory-router.toml").read_text().startswith("# mine\nscore_floor = 4  # tuned\n")
    other = tmp_path / "other-memory"
    shutil.copytree(memory, other)
    moved = setup.plan_init(str(project), str(other))
    assert setup.config_changes(moved, None, explicit_memory_dir=True) == {"memory_dir": str(other)}


def test_a_pyproject_table_is_never_edited(store):
    project, memory = store
    (project / "pyproject.toml").write_text('[tool.memory-router]\nscore_floor = 4\n')
    plan = setup.plan_init(str(project), str(memory))
    with pytest.raises(RefusedError) as err:
        setup.write_config(plan, setup.config_changes(plan, []))
    assert "refusing to edit" in err.value.message and "clusters = 'brain/memory-layer1-clusters.md'" in err.value.fix
    assert (project / "pyproject.toml").read_text() == '[tool.memory-router]\nscore_floor = 4\n'


def test_default_scope(tmp_path, monkeypatch):
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert setup.default_scope(str(project))[0] == "local"
    exe_dir = os.path.dirname(shutil.which("memory-router", path=os.path.dirname(os.sys.executable)))
    monkeypatch.setenv("PATH", exe_dir)
    assert setup.default_scope(str(project))[0] == "project"
    (project / ".claude" / "settings.local.json").write_text(
        '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", '
        '"command": "/x/memory-router hook # memory-router install"}]}]}}')
    assert setup.default_scope(str(project)) == ("local", "the hook is already installed in the local scope")


def test_the_proposal_holds_only_members_of_the_cluster_file(store, example_cluster_file):
    project, memory = store
    (project / "brain").mkdir()
    shutil.copy(example_cluster_file, project / "brain" / "memory-layer1-clusters.md")
    plan = setup.plan_init(str(project), str(memory))
    from router.store.clusterfile import load_cluster_file

    index = load_cluster_file(plan["cluster_path"])
    proposal = setup.propose_hot_strip(plan)
    assert proposal and all(index.find_member(slug) for slug in proposal)
    assert setup.next_commands([])[0].startswith("memory-router route ")
