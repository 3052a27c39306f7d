"""Configuration: one file, documented defaults, unknown keys refused.

The file is ``memory-router.toml`` in the project (top-level keys) or the
``[tool.memory-router]`` table of the project's ``pyproject.toml``. This module holds the
settings, their defaults and validation, and where files are looked for; reading a config file
(``tomllib``, ~9 ms to import) is in ``router.configfile``, which the hook imports only when its
cache misses.
"""

import os

from router.errors import ConfigError

# The spec's constants (spec §10) plus the knobs this implementation adds. Every one is shown
# in --help through ``describe_defaults``.
DEFAULTS = {
    "score_floor": 3,
    "tag_weight": 3,
    "member_weight": 1,
    "line_cap": 12,
    "second_ratio": 0.75,
    "max_context_chars": 9500,
    "max_prompt_chars": 20000,
}

# Claude Code replaces hook output over this many characters with a preview and a file path.
CLAUDE_CODE_OUTPUT_CAP = 10_000

DOCS = {
    "score_floor": "a cluster fires only at or above this score",
    "tag_weight": "points per prompt token found among a cluster's tag words",
    "member_weight": "points per prompt token found in its member slugs/hooks (minus tag words)",
    "line_cap": "most member lines injected per prompt",
    "second_ratio": "a second cluster joins only if it scores at least this share of the top one "
                    "and strictly more than the third",
    "max_context_chars": "injected text stays under this (Claude Code previews output over 10,000)",
    "max_prompt_chars": "longest prompt scored in full; longer ones score their first and last halves",
}

# Keys that are not routing settings.
OTHER_KEYS = {
    "clusters": "path of the cluster file (.md or .tsv), relative to the config file",
    "memory_dir": "the Claude Code memory directory holding MEMORY.md",
    "hot_strip": "slugs always loaded in the slim MEMORY.md (confabulation catchers)",
}

CONFIG_FILENAME = "memory-router.toml"
DEFAULT_CLUSTER_RELPATHS = (
    os.path.join("brain", "memory-layer1-clusters.md"),
    os.path.join("brain", "memory-layer1-clusters.tsv"),
)


def describe_defaults():
    """One line per setting, for --help epilogs."""
    return "\n".join(f"  {key} = {value!r}: {DOCS[key]}" for key, value in DEFAULTS.items())


def default_settings():
    return dict(DEFAULTS)


def settings_of(config):
    """The routing settings of a parsed config (a fresh dict), or the defaults when there is none."""
    return dict(config["settings"]) if config else default_settings()


# The range each setting must lie in, and why: a value outside it cannot route sensibly (a
# line_cap of 0 injects a bare header, a NaN ratio compares false with everything, a prompt cap
# of 1 scored the whole prompt).
RANGES = {
    "score_floor": (1, None, "a floor of 0 would fire on any single shared word"),
    "tag_weight": (0, None, "a weight is points per shared word"),
    "member_weight": (0, None, "a weight is points per shared word"),
    "line_cap": (1, None, "a cap of 0 injects a header without a single member line"),
    "second_ratio": (0.0, 1.0, "it is the share of the top score a second cluster needs"),
    "max_context_chars": (200, CLAUDE_CODE_OUTPUT_CAP, "below 200 no header and member line fit; above "
                          f"{CLAUDE_CODE_OUTPUT_CAP:,} Claude Code replaces hook output with a preview"),
    "max_prompt_chars": (200, 1_000_000, "a long prompt is scored on its first and last halves of this; "
                         "past a million characters the hook is no longer fast"),
}


def _key_line(text, key):
    """The 1-based line of ``key = ...`` in a TOML ``text`` (None if not found as written)."""
    if not text:
        return None
    import re

    found = re.search(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _check_type(key, value, path, line=None):
    expected = type(DEFAULTS[key])
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, expected):
        raise ConfigError(f"{key} must be {'a number' if expected is float else 'an integer'}, got {value!r}",
                          path=path, line=line, fix=f"set {key} = {DEFAULTS[key]!r}")
    low, high, why = RANGES[key]
    # ``not (low <= value)`` rather than ``value < low``: NaN fails every comparison.
    if not (low <= value) or (high is not None and not (value <= high)):
        span = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{key} = {value!r} is out of range: it must be {span} ({why})", path=path, line=line,
                          fix=f"set {key} = {DEFAULTS[key]!r}")
    return value


def validate_config(table, path, text=None):
    """Turn a parsed TOML table into the config dict, refusing unknown keys and unusable values by
    name (and by line, given the file's ``text``)."""
    settings = default_settings()
    config = {"settings": settings, "clusters": None, "memory_dir": None, "hot_strip": [], "source": path}
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
        else:
            known = ", ".join(sorted(list(DEFAULTS) + list(OTHER_KEYS)))
            raise ConfigError(f"unknown config key {key!r}", path=path, line=line, fix=f"use one of: {known}")
    if settings["tag_weight"] == 0 and settings["member_weight"] == 0:
        raise ConfigError("tag_weight and member_weight are both 0, so no cluster can ever score", path=path,
                          line=_key_line(text, "tag_weight"), fix=f"set tag_weight = {DEFAULTS['tag_weight']}")
    return config


def config_candidates(project_dir):
    """Config files to look for in ``project_dir``, in order."""
    return (os.path.join(project_dir, CONFIG_FILENAME), os.path.join(project_dir, "pyproject.toml"))


def project_dirs(cwd=None):
    """Where a project's config and brain/ directory are looked for: $CLAUDE_PROJECT_DIR, then cwd."""
    dirs = []
    env_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if env_dir:
        dirs.append(env_dir)
    dirs.append(cwd or os.getcwd())
    return dirs


def find_default_cluster_file(dirs):
    for project_dir in dirs:
        if not project_dir:
            continue
        for rel in DEFAULT_CLUSTER_RELPATHS:
            candidate = os.path.join(project_dir, rel)
            if os.path.isfile(candidate):
                return candidate
    return None


def resolve_cluster_path(explicit=None, config=None, dirs=()):
    """The cluster file by the documented order: --clusters, $MEMORY_ROUTER_CLUSTERS, the config
    file, then brain/memory-layer1-clusters.md (or .tsv) under each project dir. ``None`` if none."""
    if explicit:
        return explicit
    env_path = os.environ.get("MEMORY_ROUTER_CLUSTERS")
    if env_path:
        return env_path
    if config and config.get("clusters"):
        return config["clusters"]
    return find_default_cluster_file(dirs)


def bundled_example_dir():
    return os.path.join(os.path.dirname(__file__), "data", "example")


def bundled_cluster_file():
    """The bundled example store's cluster file (package data)."""
    return os.path.join(bundled_example_dir(), "memory-layer1-clusters.md")


def bundled_flat_index():
    """The bundled example store's flat MEMORY.md."""
    return os.path.join(bundled_example_dir(), "MEMORY.md")
