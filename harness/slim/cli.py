"""``memory-router slim render`` and ``memory-router slim rollback``: the only commands that write
the live MEMORY.md. Both archive before they write, write atomically, and refuse (exit 1,
nothing written) when the file changed since it was read. Neither ever runs automatically.
"""

import os
import sys

from canaries.memoryindex import is_slim_index
from harness.slim import index as slim
from router.errors import InputError, RefusedError

# harness.fileops and harness.archives (hashlib, tempfile) are imported where they are used, so
# `memory-router --help` does not pay for them.

MEMORY_FILENAME = "MEMORY.md"


# --------------------------------------------------------------------------- shared


def _resolve_memory_dir(args, config):
    directory = args.memory_dir or (config or {}).get("memory_dir")
    if not directory:
        raise InputError("no memory directory given",
                         fix="pass --memory-dir DIR or set memory_dir in memory-router.toml")
    directory = os.path.abspath(os.path.expanduser(directory))
    if not os.path.isdir(directory):
        raise InputError("memory directory does not exist", path=directory,
                         fix="pass the directory that holds your MEMORY.md")
    return directory


def _archive(directory, stem, data):
    from harness import archives

    # Recorded (size, sha256): rollback checks an archive against its record before restoring it.
    return archives.write_archive(directory, stem, ".md", data, record=True)


def _replace_live(snapshot, data, archive_path):
    """Re-check the snapshot, then write ``data`` atomically over the live file and read it back."""
    snapshot.replace(data, note=f"; the archive {archive_path} is kept" if archive_path else "")


def _decode(data, path):
    from router.errors import decode_utf8

    return decode_utf8(data, path, "MEMORY.md")


def live_memory_path(memory_dir):
    """<DIR>/MEMORY.md (a symlink is written through by ``atomic_write``, which keeps the link)."""
    return os.path.join(memory_dir, MEMORY_FILENAME)


def _warn(message):
    print(f"memory-router: warning: {message}", file=sys.stderr)


# --------------------------------------------------------------------------- render


def plan_render(args):
    """Read everything and build the slim text; raises before anything could be written."""
    from harness.memorydir import parse_index_text, read_memory_files
    from router import config as config_mod
    from router.configfile import load_config
    from router.clusterfile import load_cluster_file

    config = load_config(args.config)
    memory_dir = _resolve_memory_dir(args, config)
    # No fallback to the bundled example store here: its router must never land in a live file.
    cluster_path = config_mod.resolve_cluster_path(args.clusters, config, config_mod.project_dirs())
    if cluster_path is None:
        raise InputError("no cluster file found", fix="pass --clusters FILE or set clusters in memory-router.toml")
    index = load_cluster_file(cluster_path)

    from harness.fileops import Snapshot

    live_path = live_memory_path(memory_dir)
    snapshot = Snapshot(live_path, "MEMORY.md")
    if not snapshot.exists:
        raise InputError("no MEMORY.md to slim", path=live_path, fix="pass the memory directory that holds MEMORY.md")
    before = _decode(snapshot.data, live_path)

    if args.hot:
        sources = [("--hot", args.hot)]
    else:
        config_label = f"hot_strip in {config['source']}" if config and config.get("source") else "hot_strip"
        # One source per memory file, so an unknown slug's error names the file to fix.
        sources = [(config_label, (config or {}).get("hot_strip") or [])]
        sources += [(f"hot: true in {found.path}", [found.slug]) for found in read_memory_files(memory_dir)
                    if found.hot]
    hot, origin = slim.merge_hot_slugs(*sources)
    strip = slim.build_hot_strip(index, hot, origin)
    router = slim.render_layer0_router(index)
    after = slim.assemble_slim_index(strip, router)

    flat_slugs = [entry.slug for entry in parse_index_text(before)]
    return {
        "memory_dir": memory_dir,
        "live_path": live_path,
        "cluster_path": os.path.abspath(cluster_path),
        "index": index,
        "snapshot": snapshot,
        "before": before,
        "after": after,
        "hot": hot,
        "origin": origin,
        "unrouted": slim.unrouted_slugs(flat_slugs, index, hot),
        "already_slim": is_slim_index(before),
    }


def apply_render(plan):
    """Archive the live file, then replace it with the slim text. Returns the archive path."""
    snapshot = plan["snapshot"]
    if not snapshot.unchanged():
        raise RefusedError(f"{snapshot.path} changed since it was read; nothing was written",
                           fix="look at the change, then run the command again")
    from harness.fileops import require_not_read_only

    require_not_read_only(snapshot.path, "MEMORY.md")
    archive_path = _archive(plan["memory_dir"], slim.ARCHIVE_STEM, snapshot.data)
    _replace_live(snapshot, plan["after"].encode("utf-8"), archive_path)
    return archive_path


def cmd_slim_render(args):
    from harness.fileops import sha256_bytes
    from harness.output import console, print_json, table

    plan = plan_render(args)
    summary = slim.size_summary(plan["snapshot"].data, plan["after"])
    after_bytes = plan["after"].encode("utf-8")
    result = {
        "memory_file": plan["live_path"],
        "cluster_file": plan["cluster_path"],
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
    }
    if plan["unrouted"]:
        result["warnings"].append(
            f"{len(plan['unrouted'])} slug(s) of the current index are in no cluster and not in the hot strip, "
            "so nothing would surface them after the render: " + ", ".join(plan["unrouted"]))
    unchanged = plan["snapshot"].data == after_bytes

    if args.dry_run:
        diff = slim.unified_diff(plan["before"], plan["after"], f"{plan['live_path']} (current)",
                                 f"{plan['live_path']} (slim)")
        result["status"] = "dry-run"
        if args.json:
            result["diff"] = diff
            print_json(result)
        else:
            sys.stdout.write(diff)
            print(f"dry run: nothing written ({summary['bytes_before']} -> {summary['bytes_after']} bytes, "
                  f"{summary['lines_before']} -> {summary['lines_after']} lines)", file=sys.stderr)
            for warning in result["warnings"]:
                _warn(warning)
        return 0

    if unchanged:
        result["status"] = "up-to-date"
    else:
        if plan["already_slim"] and not args.force:
            raise RefusedError(
                f"{plan['live_path']} is already a slim index; rendering over it would make the newest archive "
                "a slim file, so a later rollback would not bring back the flat index; nothing was written",
                fix="run 'memory-router slim rollback' first, or pass --force to re-render (the slim file is "
                    "archived too)")
        result["archive"] = apply_render(plan)
        result["written"] = True
        result["status"] = "written"

    if args.json:
        print_json(result)
        return 0
    out = console()
    if result["status"] == "up-to-date":
        out.print(f"{plan['live_path']} already holds this slim index; nothing written.")
    rows = [
        ("bytes", summary["bytes_before"], summary["bytes_after"], f"{summary['cut_percent']}%"),
        ("lines", summary["lines_before"], summary["lines_after"],
         f"{_percent(summary['lines_before'], summary['lines_after'])}%"),
    ]
    out.print(table("slim render", ["", "before", "after", "cut"], rows))
    # Paths are printed plainly so a terminal never wraps them into something uncopyable.
    print(f"memory file: {plan['live_path']}")
    print(f"clusters in router: {result['clusters']}; hot strip: {len(plan['hot'])} slug(s)")
    if result["written"]:
        print(f"archived the previous index to {result['archive']}")
        print(f"wrote the slim index (sha256 {result['sha256_after']})")
        print(f"undo with: memory-router slim rollback --memory-dir {plan['memory_dir']}")
    for warning in result["warnings"]:
        _warn(warning)
    return 0


def _percent(before, after):
    return round(100.0 * (before - after) / before, 1) if before else 0.0


# --------------------------------------------------------------------------- rollback


def _resolve_archive(explicit, memory_dir, live_path):
    if explicit:
        candidates = [explicit]
        if not os.path.isabs(explicit):
            candidates.append(os.path.join(memory_dir, explicit))
        for candidate in candidates:
            # exists, not isfile: a FIFO or directory named here gets the reader's message.
            if os.path.exists(candidate):
                path = os.path.abspath(candidate)
                break
        else:
            raise InputError("archive not found", path=explicit,
                             fix="pass an existing archive file (e.g. MEMORY.archive-<stamp>.md)")
        if os.path.exists(live_path) and os.path.samefile(path, live_path):
            raise InputError("the archive named is the live MEMORY.md itself", path=path,
                             fix="pass an archive file")
        return path
    name = slim.newest_archive(os.listdir(memory_dir))
    if name is None:
        raise RefusedError(f"no {slim.ARCHIVE_STEM}-<UTC stamp>.md archive in {memory_dir}; nothing was written",
                           fix="pass --archive FILE")
    return os.path.join(memory_dir, name)


def cmd_slim_rollback(args):
    from harness.archives import ARCHIVE_RECORD_SUFFIX
    from harness.fileops import Snapshot, sha256_bytes
    from harness.output import print_json
    from router.configfile import load_config

    config = load_config(args.config) if args.config or not args.memory_dir else None
    memory_dir = _resolve_memory_dir(args, config)
    live_path = live_memory_path(memory_dir)
    archive_path = _resolve_archive(args.archive, memory_dir, live_path)
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
        diff = slim.unified_diff(snapshot.data.decode("utf-8", "replace"), restored.decode("utf-8", "replace"),
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
            result["pre_rollback_archive"] = _archive(memory_dir, slim.PRE_ROLLBACK_STEM, snapshot.data)
        _replace_live(snapshot, restored, result["pre_rollback_archive"])
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
    print(f"restored {live_path} from {archive_path}"
          + ("" if verified else " (no integrity record: restored as named, unchecked)"))
    print(f"{result['bytes_before']} -> {result['bytes_after']} bytes, "
          f"{result['lines_before']} -> {result['lines_after']} lines; sha256 {result['sha256_archive']}")
    if dropped:
        _warn(f"{len(dropped)} index line(s) of the MEMORY.md just replaced are not in the restored file (added "
              "after the render?): " + ", ".join(f"line {line}: {slug}" for line, slug in dropped)
              + f"; they are kept only in {result['pre_rollback_archive']}: copy them back by hand")
    return 0


# --------------------------------------------------------------------------- argparse


def register(subparsers):
    parser = subparsers.add_parser(
        "slim", help="render a slim MEMORY.md (hot strip + cluster router), or roll it back",
        description="Phase 2 (spec §5, §11): replace the flat MEMORY.md with a slim index, or restore the "
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
                    "or a file that is already slim (unless --force).")
    render.add_argument("--memory-dir", metavar="DIR", help="the memory directory holding MEMORY.md "
                        "(default: memory_dir from the config file)")
    render.add_argument("--clusters", metavar="FILE",
                        help="cluster file (.md or .tsv); default: $MEMORY_ROUTER_CLUSTERS, the config file, "
                             "brain/memory-layer1-clusters.md; never the bundled example store")
    render.add_argument("--config", metavar="FILE", help="config file (memory-router.toml or pyproject.toml)")
    render.add_argument("--hot", metavar="SLUG", action="append",
                        help="a hot-strip slug (repeatable); replaces hot_strip and hot: true for this run")
    render.add_argument("--dry-run", action="store_true", help="print the unified diff only; write nothing")
    render.add_argument("--force", action="store_true",
                        help="render even if MEMORY.md is already a slim index (it is archived first)")
    render.add_argument("--json", action="store_true", help="machine-readable output")
    render.set_defaults(handler=cmd_slim_render)

    rollback = sub.add_parser(
        "rollback", help="restore MEMORY.md from the newest (or a named) archive, byte for byte",
        description="Archives the current MEMORY.md as MEMORY.pre-rollback-<UTC stamp>.md, then restores the "
                    "newest MEMORY.archive-<UTC stamp>.md (by the stamp in its name) or the --archive file "
                    "byte for byte. Refuses (exit 1) if MEMORY.md changed while it ran or no archive exists.")
    rollback.add_argument("--memory-dir", metavar="DIR", help="the memory directory holding MEMORY.md "
                          "(default: memory_dir from the config file)")
    rollback.add_argument("--archive", metavar="FILE",
                          help="the archive to restore (default: the newest render archive)")
    rollback.add_argument("--config", metavar="FILE", help="config file, for memory_dir")
    rollback.add_argument("--dry-run", action="store_true", help="print the unified diff only; write nothing")
    rollback.add_argument("--json", action="store_true", help="machine-readable output")
    rollback.set_defaults(handler=cmd_slim_rollback)
