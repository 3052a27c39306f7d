"""harness.project: where a project's files are, and the one memory-dir resolution with its policy
(--memory-dir, the config's memory_dir, a memory/ beside the input, Claude Code's default for a
project that reads, else an error)."""

import os

import pytest

from harness import project as proj
from router.errors import InputError
from router.store.memorystore import project_key


def test_project_dir_defaults_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert proj.project_dir() == str(tmp_path)
    assert proj.project_dir("~") == os.path.expanduser("~")


def test_settings_locations_in_claude_codes_order(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert proj.settings_locations(tmp_path / "p") == [
        ("project", str(tmp_path / "p" / ".claude" / "settings.json")),
        ("project local", str(tmp_path / "p" / ".claude" / "settings.local.json")),
        ("user", str(tmp_path / "cfg" / "settings.json")),
    ]
    assert proj.project_state_dir(tmp_path / "p") == str(tmp_path / "p" / ".claude" / "memory-router")


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    (tmp_path / "beside").mkdir()
    return tmp_path


@pytest.mark.parametrize("explicit, config, beside, project, expected, how", [
    ("given", {"memory_dir": "cfg-dir", "source": "t.toml"}, "beside", "p", "given", "--memory-dir"),
    (None, {"memory_dir": "cfg-dir", "source": "t.toml"}, "beside", "p", "cfg-dir", "memory_dir in t.toml"),
    (None, None, "beside", "p", "beside", "beside the transcript"),
    (None, None, "missing", "p", "default", "Claude Code's default location"),   # a memory/ that is not there
    (None, {"source": "t.toml"}, None, "p", "default", "Claude Code's default location"),
])
def test_resolve_memory_dir_policy_in_order(dirs, explicit, config, beside, project, expected, how):
    if config and "memory_dir" in config:
        config = dict(config, memory_dir=str(dirs / config["memory_dir"]))
    found, said = proj.resolve_memory_dir(str(dirs / explicit) if explicit else None, config,
                                          str(dirs / project) if project else None,
                                          beside=str(dirs / beside) if beside else None)
    want = {"given": dirs / "given", "cfg-dir": dirs / "cfg-dir", "beside": dirs / "beside",
            "default": dirs / "cfg" / "projects" / project_key(str(dirs / "p")) / "memory"}[expected]
    assert (found, said) == (str(want), how)


def test_a_writer_never_guesses_a_memory_dir():
    with pytest.raises(InputError, match="no memory directory given") as err:
        proj.resolve_memory_dir(None, {"source": "t.toml"})
    assert "--memory-dir" in err.value.fix
    assert proj.resolve_memory_dir(None, None, required=False) == (None, "unknown")


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    for name in ("a", "b"):
        (tmp_path / name / "brain").mkdir(parents=True)
        (tmp_path / name / "brain" / "memory-layer1-clusters.md").write_text("x")
    (tmp_path / "env.md").write_text("x")
    return tmp_path


@pytest.mark.parametrize("explicit, env, config, dirs, bundled, expected, how", [
    ("given.md", "env.md", "cfg.md", ["a"], True, "given.md", "--clusters"),
    (None, "env.md", "cfg.md", ["a"], True, "env.md", "$MEMORY_ROUTER_CLUSTERS"),
    (None, None, "cfg.md", ["a"], True, "cfg.md", "clusters in t.toml"),
    (None, None, None, ["a", "b"], True, "a/brain/memory-layer1-clusters.md", "brain/ under {a}"),
    (None, None, None, ["none", "b"], True, "b/brain/memory-layer1-clusters.md", "brain/ under {b}"),
    (None, None, None, ["none"], True, "bundled", "the bundled example store"),
    (None, None, None, ["none"], False, None, "no cluster file found"),
])
def test_resolve_cluster_file_policy_in_order(stores, monkeypatch, explicit, env, config, dirs, bundled, expected,
                                              how):
    from router.config import bundled_cluster_file

    if env:
        monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", str(stores / env))
    config = {"clusters": str(stores / config), "source": "t.toml"} if config else None
    found, said = proj.resolve_cluster_file(str(stores / explicit) if explicit else None, config,
                                            [str(stores / d) for d in dirs], bundled=bundled)
    want = {None: None, "bundled": bundled_cluster_file()}.get(expected, str(stores / expected) if expected else None)
    assert (found, said) == (want, how.format(a=stores / "a", b=stores / "b"))


def test_resolve_store_says_which_files_a_command_read(stores):
    config = {"memory_dir": str(stores / "mem"), "source": str(stores / "memory-router.toml")}
    store = proj.resolve_store(config=config, directory=str(stores / "a"))
    assert store.to_json() == {
        "cluster_file": str(stores / "a" / "brain" / "memory-layer1-clusters.md"),
        "cluster_file_from": f"brain/ under {stores / 'a'}",
        "memory_dir": str(stores / "mem"), "memory_dir_from": f"memory_dir in {stores / 'memory-router.toml'}",
        "config_file": str(stores / "memory-router.toml")}
    assert store.lines()[0].startswith("cluster file: " + str(stores / "a" / "brain"))
    # a writer never guesses the memory directory; a reader may look in Claude Code's default place
    assert proj.resolve_store(directory=str(stores / "b"), guess_memory_dir=False).memory_dir is None
    guessed = proj.resolve_store(directory=str(stores / "b"))
    assert guessed.memory_from == "Claude Code's default location"
    assert guessed.memory_dir == str(stores / "cfg" / "projects" / project_key(str(stores / "b")) / "memory")
    bundled = proj.resolve_store(dirs=[str(stores / "none")], bundled=True)
    assert bundled.bundled and not proj.resolve_store(directory=str(stores / "a")).bundled
