import pytest

from router import configfile
from router.errors import ConfigError, InputError


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_memory_router_toml(tmp_path):
    (tmp_path / "brain").mkdir()
    path = write(tmp_path / "memory-router.toml",
                 'clusters = "brain/c.md"\nscore_floor = 4\nsecond_ratio = 1\nhot_strip = ["a_b"]\n')
    config = configfile.parse_config_file(str(path))
    assert config["settings"]["score_floor"] == 4
    assert config["settings"]["second_ratio"] == 1.0
    assert config["settings"]["tag_weight"] == 3
    assert config["clusters"] == str(tmp_path / "brain" / "c.md")
    assert config["hot_strip"] == ["a_b"]


@pytest.mark.parametrize("text, learning, cap", [
    ("", False, 24),
    ("learning = true\n", True, 24),
    ("learning = true\nlearned_cap = 5\n", True, 5),
])
def test_learning_is_off_unless_the_config_turns_it_on(tmp_path, text, learning, cap):
    config = configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", text)))
    assert (config["learning"], config["learned_cap"]) == (learning, cap)
    assert "learned_cap" not in config["settings"]


def test_provider_keys(tmp_path):
    from router import config as config_mod

    path = write(tmp_path / "memory-router.toml",
                 'provider = "acme.routing:make"\nprovider_timeout_ms = 40\nintent_gate = false\nweighted_floor = 5\n')
    settings = configfile.parse_config_file(str(path))["settings"]
    assert (settings["provider"], settings["provider_timeout_ms"], settings["intent_gate"]) == (
        "acme.routing:make", 40, False)
    assert settings["weighted_floor"] == 5.0 and isinstance(settings["weighted_floor"], float)
    assert config_mod.DEFAULTS["provider"] in ("spec", "weighted")


def test_pyproject_table_and_absence(tmp_path):
    path = write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[tool.memory-router]\nline_cap = 8\n')
    assert configfile.parse_config_file(str(path))["settings"]["line_cap"] == 8
    write(path, '[project]\nname = "x"\n')
    assert configfile.parse_config_file(str(path)) is None


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
        ('learning = "yes"\n', "learning must be true or false"),
        ("learning = 1\n", "learning must be true or false"),
        ("learned_cap = 0\n", "learned_cap must be a positive integer"),
        ("learned_cap = true\n", "learned_cap must be a positive integer"),
        ("provider = 3\n", "provider must be a string"),
        ('provider = "bm25"\n', "neither a built-in"),
        ('provider = "my-pkg:make"\n', "dotted Python names"),
        ("intent_gate = 1\n", "intent_gate must be true or false"),
        ("min_confidence = 1.5\n", "min_confidence must be between 0 and 1"),
        ('weighted_floor = "high"\n', "weighted_floor must be a number"),
        ("learned_cap = 2.5\n", "learned_cap must be a positive integer"),
    ],
)
def test_bad_config_names_the_key(tmp_path, text, needle):
    path = write(tmp_path / "memory-router.toml", text)
    with pytest.raises(ConfigError) as info:
        configfile.parse_config_file(str(path))
    assert needle in str(info.value)
    assert str(path) in str(info.value)
    assert info.value.exit_code == 2


def test_invalid_toml_points_at_line(tmp_path):
    path = write(tmp_path / "memory-router.toml", "score_floor = 3\nline_cap = = 4\n")
    with pytest.raises(ConfigError) as info:
        configfile.parse_config_file(str(path))
    assert f"{path}:2:" in str(info.value)


def test_memory_router_toml_wins_over_pyproject(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.memory-router]\nline_cap = 8\n")
    write(tmp_path / "memory-router.toml", "line_cap = 5\n")
    assert configfile.find_config([str(tmp_path)])["settings"]["line_cap"] == 5


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
    assert configfile.parse_config_file(str(path)) is None
    assert configfile.find_config([str(tmp_path)]) is None


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
        configfile.parse_config_file(str(path))
    assert needle in str(info.value)
    assert info.value.exit_code == 2
    assert info.value.line == line


def test_load_config_explicit_pyproject_without_our_table_is_an_input_error(tmp_path):
    path = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n# memory-router elsewhere\n")
    with pytest.raises(InputError, match=r"no \[tool.memory-router\] table") as err:
        configfile.load_config(str(path))
    assert err.value.fix == "add the table, or pass a memory-router.toml"


def test_load_config_finds_the_first_config_in_dirs(tmp_path):
    write(tmp_path / "memory-router.toml", "line_cap = 4\n")
    assert configfile.load_config(dirs=[str(tmp_path / "missing"), str(tmp_path)])["settings"]["line_cap"] == 4
    assert configfile.load_config(dirs=[str(tmp_path / "missing")]) is None
