import pytest

from router import config as config_mod
from router import configfile, enrichconfig
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


# --- citation gate keys -------------------------------------------------------------------------

def test_citation_defaults_when_unset(tmp_path):
    assert config_mod.citation_settings_of(None) == config_mod.CITATION_DEFAULTS
    config = configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", "line_cap = 5\n")))
    assert config_mod.citation_settings_of(config) == config_mod.CITATION_DEFAULTS
    fresh = config_mod.citation_settings_of(None)
    fresh["citation_ledgers"].append("X.md")
    assert config_mod.CITATION_DEFAULTS["citation_ledgers"] == [".wolf/decisions.md", "DECISIONS.md"]


def test_citation_keys_are_read_and_the_fixtures_dir_is_relative_to_the_config(tmp_path):
    path = write(tmp_path / "memory-router.toml",
                 'citation_id_pattern = "ADR-\\\\d{4}"\ncitation_ledgers = ["docs/ADR.md"]\n'
                 'citation_dead_words = ["VOID"]\ncitation_fixtures_dir = "tests/fixtures"\n')
    settings = config_mod.citation_settings_of(configfile.parse_config_file(str(path)))
    assert settings == {"citation_id_pattern": r"ADR-\d{4}", "citation_ledgers": ["docs/ADR.md"],
                        "citation_dead_words": ["VOID"],
                        "citation_fixtures_dir": str(tmp_path / "tests" / "fixtures")}


def test_empty_fixtures_dir_means_none(tmp_path):
    config = configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", 'citation_fixtures_dir = ""\n')))
    assert config_mod.citation_settings_of(config)["citation_fixtures_dir"] == ""


def test_citation_defaults_are_described():
    text = config_mod.describe_citation_defaults()
    for key, value in config_mod.CITATION_DEFAULTS.items():
        assert f"{key} = {value!r}" in text


def test_utterance_keys_are_documented_and_in_the_help_text():
    text = config_mod.describe_defaults()
    assert "utterances = True:" in text and "utterances.tsv" in text
    for key in ("utterance_weight", "utterance_coverage", "utterance_strong",
                "utterance_line_share", "utterance_line_limit"):
        assert f"  {key} = " in text


def test_utterances_can_be_turned_off(tmp_path):
    path = write(tmp_path / "memory-router.toml", "utterances = false\n")
    assert config_mod.settings_of(configfile.parse_config_file(str(path)))["utterances"] is False


def test_enrich_keys_default_when_unset(tmp_path):
    config = configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", "line_cap = 4\n")))
    assert {key: config[key] for key in enrichconfig.ENRICH_DEFAULTS} == \
        {"enrich_engine": "claude", "enrich_command": "", "enrich_model": ""}
    assert set(enrichconfig.ENRICH_DOCS) == set(enrichconfig.ENRICH_DEFAULTS)
    assert "enrich_engine" not in config["settings"]  # not a routing setting: the hook never reads it


def test_enrich_keys_are_read_as_top_level_keys(tmp_path):
    path = write(tmp_path / "memory-router.toml", 'enrich_engine = "command"\n'
                 "enrich_command = \"ollama-enrich --model 'llama 3'\"\nenrich_model = \"qwen2.5:3b\"\n")
    config = configfile.parse_config_file(str(path))
    assert config["enrich_engine"] == "command"
    assert config["enrich_command"] == "ollama-enrich --model 'llama 3'"
    assert config["enrich_model"] == "qwen2.5:3b"


@pytest.mark.parametrize("key, says", [
    ("score_floor", "spec provider"),
    ("citation_ledgers", "outermost git work tree or project directory"),
])
def test_docs_say_where_a_setting_applies(key, says):
    assert says in {**config_mod.DOCS, **config_mod.CITATION_DOCS}[key]
