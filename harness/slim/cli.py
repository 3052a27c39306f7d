"""``memory-router slim render`` and ``memory-router slim rollback``: the only commands that write
the live MEMORY.md. Both archive before they write, write atomically, and refuse (exit 1,
nothing written) when the file changed since it was read. Neither ever runs automatically.
The reading, planning and writing are ``harness.slim.live``; the format ``harness.slim.index``.
"""

import os
import sys

from harness import options, printedcommands
from harness.memorydir import index_path
from harness.output import unified_diff
from harness.project import project_dir
from harness.slim import index as slim
from harness.slim import live
from router.errors import InputError, RefusedError


def _warn(message):
    print(f"memory-router: warning: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- render


def cmd_slim_render(args):
    from harness.fileops import sha256_bytes
    from harness.output import console, print_json, table

    plan = live.plan_render(args.memory_dir, args.clusters, args.config, args.hot)
    summary = slim.size_summary(plan["snapshot"].data, plan["after"])
    after_bytes = plan["after"].encode("utf-8")
    result = {
        "memory_file": plan["live_path"],
        "cluster_file": plan["cluster_path"],
        "store": plan["store"].to_json(),
        "dry_run": bool(args.dry_run),
        "written": False,
        "archive": None,
        "status": None,
        "clusters": len(plan["index"]),
        "hot_strip": plan["hot"],
        "hot_strip_sources": plan["origin"],
        **summary,
        "unrouted_slugs": plan["unrouted"],
        "sha256_before": sha256_bytes(plan["snapshot"].data),
        "sha256_after": sha256_bytes(after_bytes),
        "always_loaded": {name: slim.loaded_view(text, lambda slug: memory_type(plan, slug))
                          for name, text in (("before", plan["before"]), ("after", plan["after"]))},
    }
    if not plan["hot"]:
        result["warnings"].append(slim.empty_hot_strip_warning(result["always_loaded"]["before"]["memory_lines"]))
    if plan["unrouted"]:
        result["warnings"].append(
            f"{len(plan['unrouted'])} slug(s) of the current index are in no cluster and not in the hot strip, "
            "so nothing would surface them after the render: " + ", ".join(plan["unrouted"]))
    unchanged = plan["snapshot"].data == after_bytes
    profile = live.profile_leaving(plan, lambda slug: memory_type(plan, slug))
    result["user_memories_leaving"] = profile
    if profile:
        result["warnings"].append(profile_warning(profile, plan["config_source"]))
    # Every memory line that leaves the index is reached only through the router: without one that
    # runs, a slim index strands them (issue 29), so the render needs a router and says which.
    verdict = live.router_verdict(project_dir(args.project))
    result["router"] = verdict
    moved = result["always_loaded"]["before"]["memory_lines"] - result["always_loaded"]["after"]["memory_lines"]
    refuse_why = None if verdict["ok"] or unchanged else (
        f"{verdict['message']}; after the render {max(moved, 0)} memory line(s) would be in no always-loaded index "
        "and no router would send them")

    if args.dry_run:
        diff = unified_diff(plan["before"], plan["after"], f"{plan['live_path']} (current)",
                                 f"{plan['live_path']} (slim)")
        result["status"] = "dry-run"
        result["would_refuse"] = refuse_why
        if args.json:
            result["diff"] = diff
            print_json(result)
            return 0
        print_dry_run(result, plan, summary, moved, refuse_why, diff if args.verbose else None)
        return 0

    if refuse_why and not args.force:
        raise RefusedError(f"{refuse_why}; nothing was written", fix=NO_ROUTER_FIX)
    if refuse_why:
        result["warnings"].append(f"--force: rendering without a router: {refuse_why}; until a router hook runs "
                                  f"for this project ({NO_ROUTER_FIX}) those memories reach no prompt; "
                                  f"memory-router slim rollback brings the flat index back")
    if unchanged:
        result["status"] = "up-to-date"
    else:
        if plan["already_slim"] and not args.force:
            raise RefusedError(
                f"{plan['live_path']} is already a slim index; rendering over it would make the newest archive "
                "a slim file, so a later rollback would not bring back the flat index; nothing was written",
                fix="run 'memory-router slim rollback' first, or pass --force to re-render (the slim file is "
                    "archived too)")
        result["archive"] = live.apply_render(plan)
        result["written"] = True
        result["status"] = "written"

    if args.json:
        print_json(result)
        return 0
    out = console()
    if result["status"] == "up-to-date":
        out.print(f"{plan['live_path']} already holds this slim index; nothing written.")
    print_before_after(out, result["always_loaded"], summary)
    # Paths are printed plainly so a terminal never wraps them into something uncopyable.
    print(f"memory file: {plan['live_path']}")
    for line in plan["store"].lines():
        print(line)
    print(f"router: {verdict['message'] if verdict['ok'] else 'none that runs (--force)'}")
    print(f"hot strip: {len(plan['hot'])} slug(s) always loaded")
    print(f"routed on demand: {max(moved, 0)} memory line(s) leave the index, reached through "
          f"{result['clusters']} cluster(s)")
    if result["written"]:
        print(f"archived the previous index to {result['archive']}")
        print(f"wrote the slim index (sha256 {result['sha256_after']})")
        print("undo with: " + printedcommands.memory_router("slim", "rollback", "--memory-dir", plan["memory_dir"]))
    for warning in result["warnings"]:
        _warn(warning)
    return 0


NO_ROUTER_FIX = ("install the router hook first (memory-router install, or memory-router init), or enable the "
                 "memory-router plugin; --force renders anyway")


def profile_warning(slugs, config_source=None):
    # Not "--hot SLUG": --hot replaces the whole strip for the run, so following that advice would
    # drop the strip init proposed and the user confirmed (issue 36 item 3).
    return (f"{len(slugs)} user memor{'y' if len(slugs) == 1 else 'ies'} (your profile: who you are, how you "
            f"want answers, your team) {'leaves' if len(slugs) == 1 else 'leave'} the always-loaded index and "
            "reach a prompt only when the router sends them: "
            + ", ".join(slugs) + f"; to keep one loaded, add its slug to hot_strip in "
            f"{config_source or 'memory-router.toml'} (--hot replaces the whole strip for one run)")


def print_dry_run(result, plan, summary, moved, refuse_why, diff):
    """The verdict and the sizes first; the diff only with -v."""
    verdict = (f"would refuse: {refuse_why}" if refuse_why else
               "would write the slim index" if result["sha256_before"] != result["sha256_after"] else
               "MEMORY.md already holds this slim index")
    print(f"slim render (dry run, nothing written): {verdict}")
    print(f"{plan['live_path']}: {summary['bytes_before']} -> {summary['bytes_after']} bytes "
          f"({summary['cut_percent']}% cut), {summary['lines_before']} -> {summary['lines_after']} lines")
    print(f"hot strip: {len(plan['hot'])} slug(s) always loaded; routed on demand: {max(moved, 0)} memory line(s) "
          f"through {result['clusters']} cluster(s)")
    print(f"router: {result['router']['message']}")
    for warning in result["warnings"]:
        _warn(warning)
    if diff is None:
        print("-v shows the diff")
    else:
        sys.stdout.write(diff)


def memory_type(plan, slug):
    """A memory's type: its file's front matter, else its cluster member line's, else its slug's."""
    found = plan["index"].find_member(slug)
    return plan["types"].get(slug) or (found[1].type if found else None)


def print_before_after(out, views, summary):
    """The always-loaded index before and after: memory lines by type, router lines, lines, bytes."""
    from harness.output import table

    before, after = views["before"], views["after"]
    rows = [("memory lines", before["memory_lines"], after["memory_lines"],
             f"{_percent(before['memory_lines'], after['memory_lines'])}%")]
    for kind in sorted(set(before["by_type"]) | set(after["by_type"])):
        rows.append((f"  {kind}", before["by_type"].get(kind, 0), after["by_type"].get(kind, 0), ""))
    rows += [
        ("cluster router lines", before["cluster_lines"], after["cluster_lines"], ""),
        ("lines", summary["lines_before"], summary["lines_after"],
         f"{_percent(summary['lines_before'], summary['lines_after'])}%"),
        ("bytes", summary["bytes_before"], summary["bytes_after"], f"{summary['cut_percent']}%"),
    ]
    truncated = [name for name, view in views.items() if view["truncated"]]
    note = f"; Claude Code cuts the {' and '.join(truncated)} file at 200 lines / 25,000 characters" if truncated else ""
    out.print(table(f"slim render: what MEMORY.md loads on every API call, before and after{note}",
                    ["", "before", "after", "cut"], rows, no_wrap=("before", "after", "cut")))


def _percent(before, after):
    return round(100.0 * (before - after) / before, 1) if before else 0.0


# --------------------------------------------------------------------------- rollback


def cmd_slim_rollback(args):
    from harness.archives import ARCHIVE_RECORD_SUFFIX
    from harness.fileops import Snapshot, sha256_bytes
    from harness.output import print_json
    from router.configfile import load_config

    config = load_config(args.config) if args.config or not args.memory_dir else None
    memory_dir, store = live.resolve_live_store(args.memory_dir, config)
    live_path = index_path(memory_dir)
    archive_path = live.resolve_archive(args.archive, memory_dir, live_path)
    from harness.archives import read_verified_archive

    try:
        restored, verified = read_verified_archive(archive_path)
    except OSError as err:
        raise InputError(f"cannot read archive: {err.strerror or err}", path=archive_path) from None
    if not verified and not args.archive and not args.dry_run:
        # The newest archive by name, never checked by anyone: an archive left truncated by a
        # killed render of an older version would be written over MEMORY.md.
        raise RefusedError(f"archive {archive_path} has no integrity record (.<name>{ARCHIVE_RECORD_SUFFIX}: it was "
                           "written by hand or by an older memory-router), so it cannot be checked; nothing "
                           "was written", fix=f"look at it, then pass --archive {archive_path}")
    snapshot = Snapshot(live_path, "MEMORY.md")
    result = {
        "memory_file": live_path,
        "store": store.to_json(),
        "restored_from": archive_path,
        "dry_run": bool(args.dry_run),
        "written": False,
        "pre_rollback_archive": None,
        "status": None,
        "sha256_archive": sha256_bytes(restored),
        "archive_verified": verified,
        "sha256_before": sha256_bytes(snapshot.data) if snapshot.exists else None,
        **slim.size_summary(snapshot.data, restored),
    }
    # A rollback usually grows the file; a "cut" of -388% would only confuse.
    result.pop("warnings")
    result.pop("cut_percent")
    if args.dry_run:
        result["status"] = "dry-run"
        diff = unified_diff(snapshot.data.decode("utf-8", "replace"), restored.decode("utf-8", "replace"),
                                 f"{live_path} (current)", archive_path)
        if args.json:
            result["diff"] = diff
            print_json(result)
        else:
            sys.stdout.write(diff)
            print("dry run: nothing written", file=sys.stderr)
        return 0
    dropped = slim.index_lines_not_in(snapshot.data.decode("utf-8", "replace"), restored.decode("utf-8", "replace"))
    result["dropped_index_lines"] = [{"line": line, "slug": slug} for line, slug in dropped]
    if snapshot.exists and snapshot.data == restored:
        result["status"] = "up-to-date"
    else:
        from harness.fileops import require_not_read_only

        require_not_read_only(live_path, "MEMORY.md")
        if snapshot.exists:
            result["pre_rollback_archive"] = live.archive(memory_dir, slim.PRE_ROLLBACK_STEM, snapshot.data)
        live.replace_live(snapshot, restored, result["pre_rollback_archive"])
        result["written"] = True
        result["status"] = "restored"
    result["sha256_after"] = result["sha256_archive"]
    if args.json:
        print_json(result)
        return 0
    if result["status"] == "up-to-date":
        print(f"{live_path} already equals {archive_path}; nothing written.")
        return 0
    if result["pre_rollback_archive"]:
        print(f"archived the current index to {result['pre_rollback_archive']}")
    print(store.lines()[1])
    print(f"restored {live_path} from {archive_path}"
          + ("" if verified else " (no integrity record: restored as named, unchecked)"))
    print(f"{result['bytes_before']} -> {result['bytes_after']} bytes, "
          f"{result['lines_before']} -> {result['lines_after']} lines; sha256 {result['sha256_archive']}")
    if dropped:
        _warn(f"{len(dropped)} index line(s) of the MEMORY.md just replaced are not in the restored file (added "
              "after the render?): " + ", ".join(f"line {line}: {slug}" for line, slug in dropped)
              + f"; they are kept only in {result['pre_rollback_archive']}: copy them back by hand")
    return 0


# --------------------------------------------------------------------------- prune


def cmd_slim_prune(args):
    from harness.output import print_json
    from router.configfile import load_config

    if args.keep < 1:
        raise InputError("--keep must be at least 1: the newest render archive is what rollback restores",
                         fix="pass --keep 1 or more")
    config = load_config(args.config) if args.config or not args.memory_dir else None
    memory_dir = live.resolve_live_dir(args.memory_dir, config)
    doomed = live.plan_prune(memory_dir, args.keep)
    # named like an archive but not a regular file: never deleted, named, and the run goes on
    skipped = live.prune_strays(memory_dir, doomed)
    deleted = [] if args.dry_run else live.apply_prune(doomed, skipped)
    from harness.archives import list_archives

    kept = {stem: list_archives(memory_dir, stem, ".md") for stem in (slim.ARCHIVE_STEM, slim.PRE_ROLLBACK_STEM)}
    if args.json:
        print_json({"memory_dir": memory_dir, "keep": args.keep, "dry_run": bool(args.dry_run),
                    "to_delete": [{"archive": path, "record": record} for path, record in doomed],
                    "deleted": deleted, "kept": kept,
                    "skipped": [{"path": path, "kind": kind} for path, kind in skipped]})
        return 0
    verb = "would delete" if args.dry_run else "deleted"
    for path, record in doomed:
        if args.dry_run or path in deleted:
            print(f"{verb} {path}" + (f" (and its record {os.path.basename(record)})" if record else ""))
    for path, kind in skipped:
        print(f"skipped {path}: {kind}, not a file slim render or rollback wrote (left as it is)")
    for stem, names in kept.items():
        if not args.dry_run:
            print(f"kept {len(names)} {stem}-<stamp>.md" + (f", newest {names[-1]}" if names else ""))
    if not doomed:
        print(f"nothing to prune: at most {args.keep} archive(s) of each kind in {memory_dir}")
    elif args.dry_run:
        print("dry run: nothing deleted", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- argparse


def register(subparsers):
    parser = subparsers.add_parser(
        "slim", help="render a slim MEMORY.md (hot strip + cluster router), roll it back, or prune old archives",
        description="Phase 2: replace the flat MEMORY.md with a slim index, or restore the "
                    "flat one. Both commands archive the current file first, write atomically and refuse "
                    "(exit 1, nothing written) if the file changed while they ran.")
    sub = parser.add_subparsers(dest="slim_command", metavar="ACTION", required=True)

    render = sub.add_parser(
        "render", help="archive MEMORY.md, then write the slim index in its place",
        description="Reads <DIR>/MEMORY.md, writes MEMORY.archive-<UTC stamp>.md beside it, then writes the slim "
                    "index: '# Memory Index', a _Format:_ line, '## Always-loaded (confabulation catchers)' with "
                    "the hot strip ('- <slug> \u2014 <hook>'), and '## Cluster router (routed on demand)' with one "
                    "'- <cluster_id> (<size>) \u2014 <2 tags> \u2014 <label>' line per cluster. Hot-strip slugs: "
                    "--hot, else the config's hot_strip followed by memory files with 'hot: true'. Warns over "
                    f"{slim.SLIM_TARGET_BYTES} bytes and over Claude Code's 200-line / 25 KB load limit. Refuses "
                    "(exit 1) an unknown hot slug, an archive it cannot write, a file that changed while it ran, "
                    "a file that is already slim, or a project where no router hook runs (a memory-router prompt "
                    "hook in the local, project or user settings, or an enabled plugin's, which it trial-runs): "
                    "the memories leaving the index would reach no prompt (both unless --force). --dry-run says "
                    "the verdict and the sizes; -v adds the diff.")
    options.memory_dir(render, what="the memory directory holding MEMORY.md")
    render.add_argument("--clusters", metavar="FILE",
                        help="cluster file (.md or .tsv); default: $MEMORY_ROUTER_CLUSTERS, the config file, "
                             "brain/memory-layer1-clusters.md; never the bundled example store")
    render.add_argument("--config", metavar="FILE", help="config file (memory-router.toml or pyproject.toml)")
    render.add_argument("--hot", metavar="SLUG", action="append",
                        help="a hot-strip slug (repeatable); replaces hot_strip and hot: true for this run")
    options.project(render, what="the project whose router hooks are looked for")
    options.dry_run(render, "say what would be written, the sizes and the router; write nothing")
    render.add_argument("-v", "--verbose", action="store_true", help="with --dry-run: also print the unified diff")
    render.add_argument("--force", action="store_true",
                        help="render even if MEMORY.md is already a slim index (it is archived first), or with no "
                             "router hook that runs for the project (the memories leaving the index then reach no "
                             "prompt until one is installed)")
    options.json_output(render)
    render.set_defaults(handler=cmd_slim_render)

    rollback = sub.add_parser(
        "rollback", help="restore MEMORY.md from the newest (or a named) archive, byte for byte",
        description="Archives the current MEMORY.md as MEMORY.pre-rollback-<UTC stamp>.md, then restores the "
                    "newest MEMORY.archive-<UTC stamp>.md (by the stamp in its name) or the --archive file "
                    "byte for byte. Refuses (exit 1) if MEMORY.md changed while it ran or no archive exists.")
    options.memory_dir(rollback, what="the memory directory holding MEMORY.md")
    rollback.add_argument("--archive", metavar="FILE",
                          help="the archive to restore (default: the newest render archive)")
    rollback.add_argument("--config", metavar="FILE", help="config file, for memory_dir")
    options.dry_run(rollback, "print the unified diff only; write nothing")
    options.json_output(rollback)
    rollback.set_defaults(handler=cmd_slim_rollback)

    prune = sub.add_parser(
        "prune", help="delete old MEMORY.archive-* and MEMORY.pre-rollback-* copies, keeping the newest N",
        description="Every render and rollback keeps a copy of the MEMORY.md it replaced (with a hidden "
                    ".<name>.sha256.json integrity record). prune deletes all but the --keep newest of each kind, "
                    "by the stamp in their names, with their records; the newest render archive, the one "
                    "rollback restores, is always kept. Nothing else in the directory is touched.")
    options.memory_dir(prune, what="the memory directory holding MEMORY.md and its archives")
    prune.add_argument("--keep", metavar="N", type=int, required=True,
                       help="archives of each kind to keep, the newest by stamp (at least 1)")
    prune.add_argument("--config", metavar="FILE", help="config file, for memory_dir")
    options.dry_run(prune, "list what would be deleted; delete nothing")
    options.json_output(prune)
    prune.set_defaults(handler=cmd_slim_prune)
