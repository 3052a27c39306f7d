"""The files both hooks read before they decide: the config file (found and parsed through the
cache) and the size limit each file must stay under.

One module for ``router.hooks.hook`` (UserPromptSubmit) and ``router.gate.gate`` (PreToolUse), so the two
find the same config the same way and refuse the same oversized files; the gate used to reach
into the hook's private helpers for this.

Standard library only: this is on the hook's path. The config parser (``router.configfile``,
which imports ``tomllib``) is imported only inside ``parse_config``, which ``router.cache.cached``
runs on a miss.
"""

import os

from router import config as config_mod
from router.cache import cached

# A 10,000-member store is ~1.5 MB; anything far larger would make the first prompt wait for
# the parse (Claude Code's 30 s timeout discards the context anyway), so the hook refuses it.
MAX_CLUSTER_FILE_BYTES = 16 * 1024 * 1024
MAX_CONFIG_FILE_BYTES = 1024 * 1024


def check_size(path, limit, what):
    """Refuse, before it is parsed, a file over ``limit`` bytes.

    What is not a regular file (a FIFO would block the open until a writer comes) is refused
    by the read itself: the cluster file and config readers open through ``router.safeio``."""
    size = os.stat(path).st_size
    if size > limit:
        raise ValueError(f"{what} {path} is {size} bytes, over the hook's limit of {limit}")


def parse_config(path):
    """The config file at ``path`` (``None``: a pyproject.toml without our table); what
    ``cached`` runs on a miss."""
    from router.configfile import parse_config_file

    check_size(path, MAX_CONFIG_FILE_BYTES, "config file")
    return parse_config_file(path)


def find_config(dirs):
    """The first config file among ``dirs`` (memory-router.toml before pyproject.toml), or ``None``."""
    for project_dir in dirs:
        if not project_dir:
            continue
        for candidate in config_mod.config_candidates(project_dir):
            if os.path.isfile(candidate):
                found = cached(candidate, "config", parse_config)
                if found is not None:
                    return found
    return None


def hook_config(explicit, dirs):
    """The config a hook uses: the file ``--config`` named (``explicit``), else ``find_config(dirs)``."""
    if explicit:
        return cached(explicit, "config", parse_config)
    return find_config(dirs)
