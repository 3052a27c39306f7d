"""The config keys of ``memory-router clusters enrich`` (docs/enrich.md): who writes utterances.

Not routing settings: the hook never reads them. ``router.configcheck.validate_config`` puts them in
the config dict as top-level keys (``config["enrich_engine"]`` ...), defaults present when the
file lacks them; harness/clusters/enrich_cli reads them with ``config.get`` and its command-line
options win. The engine registry lives in harness (plugins may add engines), so here an engine is
only checked to be a name; harness refuses an unknown one with the list.
"""

import re

from router.errors import ConfigError

ENRICH_DEFAULTS = {
    "enrich_engine": "claude",
    "enrich_command": "",
    "enrich_model": "",
}

ENRICH_DOCS = {
    "enrich_engine": "who writes utterances for clusters enrich / clusters build --engine: claude (your Claude "
                     "Code CLI, headless), anthropic (the SDK, pip install 'memory-router[enrich]'), command",
    "enrich_command": "for enrich_engine = \"command\": a program reading one JSON request on stdin and printing "
                      "one JSON answer (docs/enrich.md); split like a shell command line",
    "enrich_model": "model the engine uses (empty: the engine's small default)",
}

ENGINE_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def check_enrich_key(key, value, path, line=None):
    """``value`` if it is usable for ``key``, else a ``ConfigError`` naming the fix."""
    default = ENRICH_DEFAULTS[key]
    fix = f'set {key} = "{default}"'
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string, got {value!r}", path=path, line=line, fix=fix)
    if key == "enrich_engine" and not ENGINE_NAME.fullmatch(value):
        raise ConfigError(f"enrich_engine = {value!r} is not an engine name (lower case letters, digits, - and _, "
                          "starting with a letter)", path=path, line=line,
                          fix='set enrich_engine = "claude" (or "anthropic", "command")')
    if key == "enrich_model" and value != "".join(value.split()):
        raise ConfigError(f"enrich_model = {value!r} holds whitespace; a model name has none", path=path, line=line,
                          fix='set enrich_model = "" (the engine\'s small default) or a model name')
    return value
