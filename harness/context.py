"""What every command shares to find the cluster file and the settings, so each one resolves
them the same way as the hook: the ``--clusters``/``--config`` options, the config lookup and the
router context (index, routing table, settings) of one invocation."""

import sys

from router import config as config_mod
from router.clusterfile import load_cluster_file
from router.configfile import load_config
from router.provider import build_table
from router.session import route_fresh


def add_clusters_option(parser):
    parser.add_argument(
        "--clusters", metavar="FILE",
        help="cluster file (.md or .tsv); default: $MEMORY_ROUTER_CLUSTERS, the config file, "
             "brain/memory-layer1-clusters.md, else the bundled example store")
    parser.add_argument("--config", metavar="FILE",
                        help="config file (default: memory-router.toml or [tool.memory-router] in "
                             "pyproject.toml, in $CLAUDE_PROJECT_DIR or the current directory)")


def resolve_cli_clusters(explicit=None, config=None, quiet=False):
    """The cluster file a CLI command uses: the hook's order, then the bundled example store."""
    path = config_mod.resolve_cluster_path(explicit, config, config_mod.project_dirs())
    if path is None:
        path = config_mod.bundled_cluster_file()
        if not quiet:
            print(f"memory-router: using the bundled example store ({path})", file=sys.stderr)
    return path


class RouterContext:
    """Index, routing table and settings for one CLI invocation."""

    def __init__(self, cluster_path, settings, config=None):
        self.cluster_path = cluster_path
        self.settings = settings
        self.config = config
        self.index = load_cluster_file(cluster_path)
        # The hook's table: with learning on, the learned terms beside the cluster file join it
        # (a damaged learned file is an error here, exit 2; the hook routes without it).
        learned = None
        if config and config.get("learning"):
            from router.learned import learned_terms_for

            learned = learned_terms_for(cluster_path)
        self.table = build_table(self.index, learned_terms=learned)

    def route(self, prompt):
        import os

        return route_fresh(prompt, self.table, self.settings, cwd=os.getcwd(), cluster_file=self.cluster_path,
                           log_as="route")


def context_from_args(args, quiet=False):
    config = load_config(getattr(args, "config", None))
    settings = config_mod.settings_of(config)
    path = resolve_cli_clusters(getattr(args, "clusters", None), config, quiet=quiet)
    return RouterContext(path, settings, config)


def require_valid_config(args):
    """Raise the ``ConfigError`` (exit 2) of a broken config this invocation could read: its
    ``--config``, else the one found in $CLAUDE_PROJECT_DIR, the current directory or ``--project``.

    Run by ``harness.cli.main`` before every command, so a broken ``memory-router.toml`` stops
    each one the same way (the README's promise), not only those that happen to route."""
    import os

    from router.configfile import find_config

    explicit = getattr(args, "config", None)
    if explicit:
        load_config(explicit)
        return
    dirs = config_mod.project_dirs()
    project = getattr(args, "project", None)
    if isinstance(project, str) and project:
        dirs.append(os.path.abspath(os.path.expanduser(project)))
    for directory in dirs:
        find_config([directory])
