"""Reading a config file: ``memory-router.toml`` or the ``[tool.memory-router]`` table of a
pyproject.toml, validated by ``router.configcheck.validate_config``.

Apart from ``router.config`` because it imports ``tomllib`` (~9 ms): the hook imports this module
only inside the function it caches, so a prompt with a current cache never pays for it. The
import contract in pyproject.toml names that one edge as its only exception.
"""

import os
import re
import tomllib

from router.config import config_candidates, project_dirs
from router.configcheck import validate_config
from router.errors import ConfigError, InputError
from router.safeio import read_regular_bytes


def parse_config_file(path):
    """Parse ``memory-router.toml`` or the ``[tool.memory-router]`` table of a pyproject.toml.

    Returns ``None`` for a pyproject.toml without that table.
    """
    try:
        raw = read_regular_bytes(path)
    except OSError as err:
        raise ConfigError(f"cannot read config file: {err.strerror or err}", path=path) from None
    is_pyproject = os.path.basename(path) == "pyproject.toml"
    if is_pyproject and b"memory-router" not in raw:
        # Not ours, whatever else it holds: someone's broken pyproject.toml must not stop routing.
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError("config file is not valid UTF-8", path=path, line=raw[: err.start].count(b"\n") + 1,
                          fix="save the file as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        # Python 3.11's TOMLDecodeError has no lineno attribute; the position is in the text.
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(err))
        line, col = (int(found.group(1)), int(found.group(2))) if found else (None, None)
        message = str(err).split(" (at line")[0]
        raise ConfigError(f"invalid TOML: {message}", path=path, line=line, column=col,
                          fix="correct the TOML syntax") from None
    if is_pyproject:
        tool = data.get("tool")
        table = tool.get("memory-router") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError("tool.memory-router must be a table", path=path,
                              fix="write it as a [tool.memory-router] section")
        return validate_config(table, path)
    return validate_config(data, path, text)


def find_config(dirs):
    """The first config file found among ``dirs`` (memory-router.toml before pyproject)."""
    for project_dir in dirs:
        if not project_dir:
            continue
        for candidate in config_candidates(project_dir):
            if os.path.isfile(candidate):
                config = parse_config_file(candidate)
                if config is not None:
                    return config
    return None


def load_config(explicit_config=None, dirs=None):
    """The config a command uses: ``explicit_config``, else the first found in ``dirs`` (default:
    $CLAUDE_PROJECT_DIR, then the current directory); ``None`` when there is none."""
    if explicit_config:
        config = parse_config_file(explicit_config)
        if config is None:
            raise InputError("no [tool.memory-router] table in this pyproject.toml", path=explicit_config,
                             fix="add the table, or pass a memory-router.toml")
        return config
    return find_config(project_dirs() if dirs is None else dirs)
