"""Subcommands over the router core: ``route`` (explain one prompt) and ``clusters`` (check,
convert, build). Also the CLI-side helpers other subcommand modules share to find the cluster
file and the settings, so every command resolves them the same way as the hook."""

import os
import sys

from router import config as config_mod
from router.clusterfile import (
    load_cluster_file,
    read_text,
    render_cluster_file,
    scan_cluster_text,
)
from router.errors import InputError
from router.provider import build_table, route
from router.score import hook_output


def add_clusters_option(parser):
    parser.add_argument(
        "--clusters", metavar="FILE",
        help="cluster file (.md or .tsv); default: $MEMORY_ROUTER_CLUSTERS, the config file, "
             "brain/memory-layer1-clusters.md, else the bundled example store")
    parser.add_argument("--config", metavar="FILE",
                        help="config file (default: memory-router.toml or [tool.memory-router] in "
                             "pyproject.toml, in $CLAUDE_PROJECT_DIR or the current directory)")


def load_cli_config(explicit_config=None, dirs=None):
    """The config a command uses: ``explicit_config``, else the first found in ``dirs`` (default:
    $CLAUDE_PROJECT_DIR, then the current directory); ``None`` when there is none."""
    if explicit_config:
        config = config_mod.parse_config_file(explicit_config)
        if config is None:
            raise InputError("no [tool.memory-router] table in this pyproject.toml", path=explicit_config,
                             fix="add the table, or pass a memory-router.toml")
        return config
    return config_mod.find_config(config_mod.project_dirs() if dirs is None else dirs)


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
        self.table = build_table(self.index)

    def route(self, prompt):
        return route(prompt, self.table, self.settings, cwd=os.getcwd(), cluster_file=self.cluster_path,
                     log_as="route")


def context_from_args(args, quiet=False):
    config = load_cli_config(getattr(args, "config", None))
    settings = config_mod.settings_of(config)
    path = resolve_cli_clusters(getattr(args, "clusters", None), config, quiet=quiet)
    return RouterContext(path, settings, config)


# --------------------------------------------------------------------------- route


def cmd_route(args):
    from harness.report import console, print_json, table

    ctx = context_from_args(args, quiet=args.json)
    decision = ctx.route(args.prompt)
    if args.json:
        result = dict(decision)
        result["cluster_file"] = os.path.abspath(ctx.cluster_path)
        result["settings"] = ctx.settings
        text = decision["additional_context"]
        result["hook_output"] = hook_output(text) if text is not None else None
        print_json(result)
        return 0
    out = console()
    rows = [
        (d["cluster_id"], d["score"], ", ".join(d["tag_hits"]) or "-", ", ".join(d["member_hits"]) or "-",
         "routed" if d["cluster_id"] in decision["routed"] else "")
        for d in decision["scores"]
    ]
    out.print(table(f"Scores (floor {decision['floor']}, {len(ctx.index)} clusters, "
                    f"{len(decision['scores'])} scored above 0)",
                    ["cluster", "score", "tag hits", "member hits", ""], rows))
    out.print(f"provider: {decision['provider']}; confidence {decision['confidence']:.2f}; "
              f"{decision['explanation']}", markup=False)
    out.print(f"prompt tokens: {', '.join(decision['prompt_tokens']) or '(none)'}")
    out.print(f"top {decision['top_score']}, second {decision['second_score']}, "
              f"margin over floor {decision['margin_over_floor']}, lead over second {decision['lead_over_second']}")
    if decision["additional_context"] is None:
        out.print("routed: nothing (the hook would print nothing)")
    else:
        out.print(f"routed: {', '.join(decision['routed'])}")
        out.print("additionalContext the hook would emit:", style="bold")
        out.print(decision["additional_context"], markup=False)
    return 0


# --------------------------------------------------------------------------- clusters


def cmd_clusters_check(args):
    from harness.report import print_json

    text = read_text(args.file)
    index, violations = scan_cluster_text(text, args.file)
    if args.json:
        print_json({
            "file": args.file, "ok": not violations, "clusters": len(index), "members": len(index.members),
            "violations": [v._asdict() for v in violations],
        })
    else:
        for v in violations:
            print(f"{args.file}:{v.line}:{v.column}: {v.message} (fix: {v.fix})")
        if not violations:
            print(f"{args.file}: ok ({len(index)} clusters, {len(index.members)} members)")
        else:
            print(f"{len(violations)} problem(s) in {args.file}", file=sys.stderr)
    return 1 if violations else 0


def cmd_clusters_convert(args):
    from harness.fileops import Snapshot, write_archive

    index = load_cluster_file(args.file)
    text = render_cluster_file(index, args.to)
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = args.out or os.path.splitext(args.file)[0] + "." + args.to
    if os.path.abspath(out) == os.path.abspath(args.file):
        raise InputError("refusing to convert a file onto itself", path=args.file, fix="pass --out")
    data = text.encode("utf-8")
    snapshot = Snapshot(out)
    if snapshot.exists and snapshot.data != data:
        # The default output is the .md/.tsv sibling, which may be a hand-edited file of its own.
        stem, suffix = os.path.splitext(os.path.basename(out))
        archived = write_archive(os.path.dirname(os.path.abspath(out)), stem, suffix, snapshot.data)
        print(f"archived the previous {out} as {archived}")
    snapshot.replace(data)
    print(f"wrote {out} ({len(index)} clusters, {len(index.members)} members)")
    return 0


def register(subparsers):
    route = subparsers.add_parser(
        "route", help="explain how one prompt is scored and what the hook would inject",
        description="Scores PROMPT against every cluster: each cluster's score with its matched tag and "
                    "member tokens, the floor, the margins, the chosen clusters and the exact "
                    "additionalContext the hook would emit. --json gives the stable shape in the README.")
    route.add_argument("prompt", metavar="PROMPT")
    add_clusters_option(route)
    route.add_argument("--json", action="store_true", help="machine-readable output")
    route.set_defaults(handler=cmd_route)

    clusters = subparsers.add_parser("clusters", help="check, convert or build cluster files")
    sub = clusters.add_subparsers(dest="clusters_command", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="list every violation of the cluster format, with line numbers (exit 1)")
    check.add_argument("file", metavar="FILE")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.set_defaults(handler=cmd_clusters_check)
    convert = sub.add_parser("convert", help="write the other form (md <-> tsv) of a cluster file",
                             description="Writes the other form of FILE. An existing, different output file "
                                         "is archived first, beside it, as <name>-<UTC stamp>.<ext>.")
    convert.add_argument("file", metavar="FILE")
    convert.add_argument("--to", choices=("md", "tsv"), required=True, help="the form to write")
    convert.add_argument("--out", metavar="FILE",
                         help="output path (default: FILE with the new extension; - for stdout)")
    convert.set_defaults(handler=cmd_clusters_convert)
    try:
        from harness.builder_cli import register_build
    except ModuleNotFoundError as err:
        if err.name != "harness.builder_cli":
            raise
    else:
        register_build(sub)
