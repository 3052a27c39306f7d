from router import config as config_mod
from router import configfile


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_spec_constants():
    assert config_mod.DEFAULTS["score_floor"] == 3
    assert config_mod.DEFAULTS["tag_weight"] == 3
    assert config_mod.DEFAULTS["member_weight"] == 1
    assert config_mod.DEFAULTS["line_cap"] == 12
    assert set(config_mod.DOCS) == set(config_mod.DEFAULTS)


def test_resolution_order(tmp_path, monkeypatch):
    project = tmp_path / "p"
    (project / "brain").mkdir(parents=True)
    default = project / "brain" / "memory-layer1-clusters.md"
    default.write_text("x")
    dirs = [str(project)]
    assert config_mod.resolve_cluster_path(None, None, dirs) == str(default)
    config = {"clusters": "/from/config.md"}
    assert config_mod.resolve_cluster_path(None, config, dirs) == "/from/config.md"
    monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", "/from/env.md")
    assert config_mod.resolve_cluster_path(None, config, dirs) == "/from/env.md"
    assert config_mod.resolve_cluster_path("/explicit.md", config, dirs) == "/explicit.md"
    monkeypatch.delenv("MEMORY_ROUTER_CLUSTERS")
    assert config_mod.resolve_cluster_path(None, None, [str(tmp_path / "empty")]) is None


def test_project_dirs_prefers_claude_project_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert config_mod.project_dirs("/payload/cwd") == [str(tmp_path), "/payload/cwd"]


def test_settings_of_gives_a_fresh_dict(tmp_path):
    assert config_mod.settings_of(None) == config_mod.DEFAULTS
    path = write(tmp_path / "memory-router.toml", "line_cap = 5\n")
    config = configfile.parse_config_file(str(path))
    settings = config_mod.settings_of(config)
    settings["line_cap"] = 99  # a caller tuning its copy (canary fit does) must not change the config
    assert settings_of_again(config) == 5


def settings_of_again(config):
    return config_mod.settings_of(config)["line_cap"]


def test_learning_defaults_are_in_the_help_text():
    text = config_mod.describe_defaults()
    assert "learning = false:" in text and "learned_cap = 24:" in text
