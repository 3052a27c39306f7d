"""Validating a config file's table: the keys ``router.config`` names, checked for type and range,
unknown keys refused by name (and line), paths made absolute. Called by ``router.configfile`` after it
parses a file, and by the commands that write a config (init, canary fit) before they do; the hook
imports it only on a cache miss, with ``router.configfile``.
"""

import os

from router.config import (
    CHOICES,
    CITATION_DEFAULTS,
    DEFAULTS,
    LEARNING_DEFAULTS,
    OTHER_KEYS,
    RANGES,
    default_settings,
)
from router.errors import ConfigError


def _check_citation_key(key, value, path, base):
    default = CITATION_DEFAULTS[key]
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(item, str) and item.strip() for item in value):
            raise ConfigError(f"{key} must be a list of non-empty strings", path=path, fix=f"set {key} = {default!r}")
        if key == "citation_ledgers" and any(os.path.isabs(item) for item in value):
            raise ConfigError(f"{key} holds file names looked for in each directory, not absolute paths",
                              path=path, fix=f"set {key} = {default!r}")
        return list(value)
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string", path=path, fix=f"set {key} = {default!r}")
    if key == "citation_id_pattern":
        import re

        try:
            compiled = re.compile(value)
        except re.error as err:
            raise ConfigError(f"{key} is not a valid regular expression: {err}", path=path,
                              fix=f"set {key} = {default!r}") from None
        if not value or compiled.match(""):
            raise ConfigError(f"{key} matches the empty string", path=path, fix=f"set {key} = {default!r}")
        return value
    # citation_fixtures_dir: "" means none; a path is relative to the config file.
    return os.path.normpath(os.path.join(base, os.path.expanduser(value))) if value else ""



def _check_provider(value, path):
    from router.providername import BUILTINS, ProviderError, parse_provider_name

    if not isinstance(value, str) or not value:
        raise ConfigError(f"provider must be a string, got {value!r}", path=path,
                          fix=f'set provider = "{DEFAULTS["provider"]}"')
    if value not in BUILTINS:
        try:
            parse_provider_name(value)
        except ProviderError as err:
            raise ConfigError(str(err), path=path, fix=f"use one of {', '.join(BUILTINS)} or "
                                                        '"package.module:factory"') from None
    return value



def _key_line(text, key):
    """The 1-based line of ``key = ...`` in a TOML ``text`` (None if not found as written)."""
    if not text:
        return None
    import re

    found = re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _check_type(key, value, path, line=None):
    expected = type(DEFAULTS[key])
    if key == "provider":
        return _check_provider(value, path)
    if key in CHOICES:
        if value not in CHOICES[key]:
            raise ConfigError(f"{key} must be one of {', '.join(CHOICES[key])}, got {value!r}", path=path,
                              line=line, fix=f'set {key} = "{DEFAULTS[key]}"')
        return value
    if expected is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}", path=path,
                              fix=f"set {key} = {str(DEFAULTS[key]).lower()}")
        return value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, expected):
        raise ConfigError(f"{key} must be {'a number' if expected is float else 'an integer'}, got {value!r}",
                          path=path, line=line, fix=f"set {key} = {DEFAULTS[key]!r}")
    low, high, why = RANGES.get(key, (0, None, "it counts or weighs something"))
    # ``not (low <= value)`` rather than ``value < low``: NaN fails every comparison.
    if not (low <= value) or (high is not None and not (value <= high)):
        span = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{key} = {value!r} is out of range: it must be {span} ({why})", path=path, line=line,
                          fix=f"set {key} = {DEFAULTS[key]!r}")
    return value


def validate_config(table, path, text=None):
    """Turn a parsed TOML table into the config dict, refusing unknown keys and unusable values by
    name (and by line, given the file's ``text``)."""
    # Imported here, not at the top: the hook imports this module on every prompt and reads a config
    # file only on a cache miss, and the enrich keys (with their regular expression) are never its own.
    from router.enrichconfig import ENRICH_DEFAULTS, check_enrich_key

    settings = default_settings()
    config = {"settings": settings, "clusters": None, "memory_dir": None, "hot_strip": [], "source": path,
              **LEARNING_DEFAULTS, **ENRICH_DEFAULTS}
    base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
    for key, value in table.items():
        line = _key_line(text, key)
        if key in DEFAULTS:
            settings[key] = _check_type(key, value, path, line)
        elif key in ("clusters", "memory_dir"):
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{key} must be a path string", path=path, line=line, fix=f'set {key} = "path"')
            config[key] = os.path.normpath(os.path.join(base, os.path.expanduser(value)))
        elif key == "hot_strip":
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise ConfigError("hot_strip must be a list of slugs", path=path, line=line,
                                  fix='set hot_strip = ["slug_one", "slug_two"]')
            config["hot_strip"] = list(value)
        elif key == "learning":
            if not isinstance(value, bool):
                raise ConfigError(f"learning must be true or false, got {value!r}", path=path,
                                  fix="set learning = true (or false)")
            config[key] = value
        elif key == "learned_cap":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"learned_cap must be a positive integer, got {value!r}", path=path,
                                  fix=f"set learned_cap = {LEARNING_DEFAULTS['learned_cap']}")
            config[key] = value
        elif key in ENRICH_DEFAULTS:
            config[key] = check_enrich_key(key, value, path, line)
        elif key in CITATION_DEFAULTS:
            config.setdefault("citation", {})[key] = _check_citation_key(key, value, path, base)
        else:
            known = ", ".join(sorted(list(DEFAULTS) + list(LEARNING_DEFAULTS) + list(OTHER_KEYS)
                                     + list(CITATION_DEFAULTS) + list(ENRICH_DEFAULTS)))
            raise ConfigError(f"unknown config key {key!r}", path=path, line=line, fix=f"use one of: {known}")
    if settings["tag_weight"] == 0 and settings["member_weight"] == 0:
        raise ConfigError("tag_weight and member_weight are both 0, so no cluster can ever score", path=path,
                          line=_key_line(text, "tag_weight"), fix=f"set tag_weight = {DEFAULTS['tag_weight']}")
    return config


