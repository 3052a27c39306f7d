import pytest

from router import config as config_mod
from router.errors import ConfigError


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_spec_constants():
    assert config_mod.DEFAULTS["score_floor"] == 3
    assert config_mod.DEFAULTS["tag_weight"] == 3
    assert config_mod.DEFAULTS["member_weight"] == 1
    assert config_mod.DEFAULTS["line_cap"] == 12
    assert set(config_mod.DOCS) == set(config_mod.DEFAULTS)


def test_memory_router_toml(tmp_path):
    (tmp_path / "brain").mkdir()
    path = write(tmp_path / "memory-router.toml",
                 'clusters = "brain/c.md"\nscore_floor = 4\nsecond_ratio = 1\nhot_strip = ["a_b"]\n')
    config = config_mod.parse_config_file(str(path))
    assert config["settings"]["score_floor"] == 4
    assert config["settings"]["second_ratio"] == 1.0
    assert config["settings"]["tag_weight"] == 3
    assert config["clusters"] == str(tmp_path / "brain" / "c.md")
    assert config["hot_strip"] == ["a_b"]


def test_provider_keys(tmp_path):
    path = write(tmp_path / "memory-router.toml",
                 'provider = "acme.routing:make"\nprovider_timeout_ms = 40\nintent_gate = false\nweighted_floor = 5\n')
    settings = config_mod.parse_config_file(str(path))["settings"]
    assert (settings["provider"], settings["provider_timeout_ms"], settings["intent_gate"]) == (
        "acme.routing:make", 40, False)
    assert settings["weighted_floor"] == 5.0 and isinstance(settings["weighted_floor"], float)
    assert config_mod.DEFAULTS["provider"] in ("spec", "weighted")


def test_pyproject_table_and_absence(tmp_path):
    path = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.memory-router]\nline_cap = 8\n')
    assert config_mod.parse_config_file(str(path))["settings"]["line_cap"] == 8
    write(path, '[project]\nname = "x"\n')
    assert config_mod.parse_config_file(str(path)) is None


@pytest.mark.parametrize(
    "text, needle",
    [
        ("scor_floor = 3\n", "unknown config key 'scor_floor'"),
        ('score_floor = "3"\n', "score_floor must be an integer"),
        ("tag_weight = true\n", "tag_weight must be an integer"),
        ("line_cap = -1\n", "must not be negative"),
        ("hot_strip = 'x'\n", "hot_strip must be a list"),
        ("clusters = 3\n", "clusters must be a path"),
        ("max_context_chars = 10001\n", "max_context_chars must be at most 10000"),
        ("provider = 3\n", "provider must be a string"),
        ('provider = "bm25"\n', "neither a built-in"),
        ('provider = "my-pkg:make"\n', "dotted Python names"),
        ("intent_gate = 1\n", "intent_gate must be true or false"),
        ("min_confidence = 1.5\n", "min_confidence must be between 0 and 1"),
        ('weighted_floor = "high"\n', "weighted_floor must be a number"),
    ],
)
def test_bad_config_names_the_key(tmp_path, text, needle):
    path = write(tmp_path / "memory-router.toml", text)
    with pytest.raises(ConfigError) as info:
        config_mod.parse_config_file(str(path))
    assert needle in str(info.value)
    assert str(path) in str(info.value)
    assert info.value.exit_code == 2


def test_invalid_toml_points_at_line(tmp_path):
    path = write(tmp_path / "memory-router.toml", "score_floor = 3\nline_cap = = 4\n")
    with pytest.raises(ConfigError) as info:
        config_mod.parse_config_file(str(path))
    assert f"{path}:2:" in str(info.value)


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


def test_memory_router_toml_wins_over_pyproject(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.memory-router]\nline_cap = 8\n")
    write(tmp_path / "memory-router.toml", "line_cap = 5\n")
    assert config_mod.find_config([str(tmp_path)])["settings"]["line_cap"] == 5


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('[project\nname = "x"\n', id="broken TOML that is not ours"),
        pytest.param("tool = 5\n", id="tool is not a table"),
        pytest.param('[tool]\nblack = "x"\n', id="other tools only"),
        pytest.param(b'[project]\nname = "caf\xe9"\n', id="not UTF-8 and not ours"),
    ],
)
def test_pyproject_without_our_table_is_not_a_config(tmp_path, text):
    path = tmp_path / "pyproject.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        write(path, text)
    assert config_mod.parse_config_file(str(path)) is None
    assert config_mod.find_config([str(tmp_path)]) is None


@pytest.mark.parametrize(
    "name, data, needle, line",
    [
        ("pyproject.toml", b"[tool]\nmemory-router = 5\n", "tool.memory-router must be a table", None),
        ("pyproject.toml", b"[tool.memory-router]\nline_cap = = 3\n", "invalid TOML", 2),
        ("memory-router.toml", b"score_floor = 3\n# caf\xe9\n", "not valid UTF-8", 2),
    ],
)
def test_broken_config_of_ours_is_an_input_error_not_a_crash(tmp_path, name, data, needle, line):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        config_mod.parse_config_file(str(path))
    assert needle in str(info.value)
    assert info.value.exit_code == 2
    assert info.value.line == line


def test_settings_of_gives_a_fresh_dict(tmp_path):
    assert config_mod.settings_of(None) == config_mod.DEFAULTS
    path = write(tmp_path / "memory-router.toml", "line_cap = 5\n")
    config = config_mod.parse_config_file(str(path))
    settings = config_mod.settings_of(config)
    settings["line_cap"] = 99  # a caller tuning its copy (canary fit does) must not change the config
    assert settings_of_again(config) == 5


def settings_of_again(config):
    return config_mod.settings_of(config)["line_cap"]
