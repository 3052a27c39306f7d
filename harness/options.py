"""The command-line options several commands share, each defined once (the shape of pip's
``cmdoptions``): a command's face adds one with ``options.json_output(parser)`` and so on, so the
same flag means the same thing, with the same help, in every command that takes it.

Where a default depends on the command (which memory directory, which cluster file), the help
says it in the command's words through the one parameter each function takes.
"""

CLUSTERS_DEFAULT = ("$MEMORY_ROUTER_CLUSTERS, the config file, brain/memory-layer1-clusters.md, else the bundled "
                    "example store")
CONFIG_DEFAULT = ("memory-router.toml or [tool.memory-router] in pyproject.toml, in $CLAUDE_PROJECT_DIR or the "
                  "current directory")
# harness.project.resolve_memory_dir's policy, as the help says it.
MEMORY_DIR_FROM_CONFIG = "memory_dir in the config file"
MEMORY_DIR_GUESSED = MEMORY_DIR_FROM_CONFIG + ", else Claude Code's ~/.claude/projects/<project>/memory"


def json_output(parser):
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def clusters(parser, default=CLUSTERS_DEFAULT, what="cluster file (.md or .tsv)"):
    parser.add_argument("--clusters", metavar="FILE", help=f"{what}; default: {default}")


def config(parser, what="config file"):
    parser.add_argument("--config", metavar="FILE", help=f"{what} (default: {CONFIG_DEFAULT})")


def clusters_and_config(parser):
    """``--clusters`` and ``--config``, found as the hook finds them (``harness.context``)."""
    clusters(parser)
    config(parser)


def memory_dir(parser, default=MEMORY_DIR_FROM_CONFIG, what="memory directory"):
    """``--memory-dir``; ``default`` names the rest of the policy the command applies
    (``MEMORY_DIR_GUESSED`` for the commands that only read)."""
    parser.add_argument("--memory-dir", metavar="DIR", help=f"{what} (default: {default})")


def project(parser, what="project directory"):
    parser.add_argument("--project", metavar="DIR", help=f"{what} (default: the current directory)")


def dry_run(parser, what="print the diff; change nothing"):
    parser.add_argument("--dry-run", action="store_true", help=what)
