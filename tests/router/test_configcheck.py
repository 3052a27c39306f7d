"""router.configcheck: a parsed config table checked against the keys, refused by key, line and fix."""

import pytest

from router import config as config_mod
from router import configfile
from router.configcheck import validate_config
from router.errors import ConfigError


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, needle", [
    ("citation_id_pattern = 3\n", "citation_id_pattern must be a string"),
    ('citation_id_pattern = "D-("\n', "citation_id_pattern is not a valid regular expression"),
    ('citation_id_pattern = ""\n', "citation_id_pattern matches the empty string"),
    ('citation_id_pattern = "D-\\\\d*|x?"\n', "citation_id_pattern matches the empty string"),
    ('citation_ledgers = "DECISIONS.md"\n', "citation_ledgers must be a list of non-empty strings"),
    ('citation_ledgers = [""]\n', "citation_ledgers must be a list of non-empty strings"),
    ('citation_ledgers = ["/abs/DECISIONS.md"]\n', "not absolute paths"),
    ("citation_dead_words = [1]\n", "citation_dead_words must be a list of non-empty strings"),
    ("citation_fixtures_dir = []\n", "citation_fixtures_dir must be a string"),
    ("citation_typo = 1\n", "citation_id_pattern"),
])
def test_bad_citation_keys_are_refused(tmp_path, text, needle):
    with pytest.raises(ConfigError) as info:
        configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", text)))
    assert needle in str(info.value)
    assert "fix:" in str(info.value)


@pytest.mark.parametrize("text, needle", [
    ("utterances = \"yes\"\n", "utterances must be true or false"),
    ("utterance_coverage = 1.5\n", "utterance_coverage = 1.5 is out of range"),
    ("utterance_line_share = -0.1\n", "utterance_line_share = -0.1 is out of range"),
    ("utterance_line_limit = 1.5\n", "utterance_line_limit must be an integer"),
    ("utterance_weight = -1\n", "utterance_weight = -1.0 is out of range"),
])
def test_bad_utterance_keys_are_refused(tmp_path, text, needle):
    path = write(tmp_path / "memory-router.toml", text)
    with pytest.raises(ConfigError) as err:
        configfile.parse_config_file(str(path))
    assert needle in str(err.value)


@pytest.mark.parametrize("text, needle", [
    ("enrich_engine = 3\n", "enrich_engine must be a string"),
    ('enrich_engine = "Claude Code"\n', "is not an engine name"),
    ('enrich_engine = ""\n', "is not an engine name"),
    ("enrich_command = [\"ollama\"]\n", "enrich_command must be a string"),
    ('enrich_model = "claude haiku"\n', "holds whitespace"),
    ("enrich_model = true\n", "enrich_model must be a string"),
])
def test_bad_enrich_keys_are_refused_with_their_line(tmp_path, text, needle):
    path = write(tmp_path / "memory-router.toml", "line_cap = 4\n" + text)
    with pytest.raises(ConfigError) as err:
        configfile.parse_config_file(str(path))
    assert needle in str(err.value) and ":2" in err.value.format()


def test_provider_timeout_stops_where_the_installed_hook_timeout_would_kill_the_hook(tmp_path):
    from harness.install.hookcommand import HOOK_TIMEOUT_SECONDS
    from router.providerbudget import max_provider_budget_ms

    assert config_mod.INSTALLED_HOOK_TIMEOUT_S == HOOK_TIMEOUT_SECONDS
    assert config_mod.RANGES["provider_timeout_ms"][1] == max_provider_budget_ms(HOOK_TIMEOUT_SECONDS) == 4000
    fits = configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", "provider_timeout_ms = 4000\n")))
    assert fits["settings"]["provider_timeout_ms"] == 4000
    with pytest.raises(ConfigError) as err:
        configfile.parse_config_file(str(write(tmp_path / "memory-router.toml", "provider_timeout_ms = 4001\n")))
    assert "provider_timeout_ms = 4001 is out of range: it must be between 1 and 4000" in str(err.value)


def test_validate_config_refuses_an_unknown_key_naming_the_known_ones():
    with pytest.raises(ConfigError) as err:
        validate_config({"line_cpa": 4}, "memory-router.toml", "line_cpa = 4\n")
    assert "unknown config key 'line_cpa'" in str(err.value) and "line_cap" in str(err.value)
    assert ":1" in err.value.format()
