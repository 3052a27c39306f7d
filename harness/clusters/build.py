"""``memory-router clusters build``: a cluster file from a Claude Code memory directory or a flat
MEMORY.md. The clustering itself is pure (harness/builder.py); this module reads the inputs,
writes both forms atomically and prints the summary."""

import os
import sys

DEFAULT_OUT = os.path.join("brain", "memory-layer1-clusters.md")


def register_build(clusters_subparsers):
    build = clusters_subparsers.add_parser(
        "build", help="build a cluster file from a Claude Code memory directory or a flat MEMORY.md",
        description="Clusters the memories of a memory directory (MEMORY.md plus one file per memory) or "
                    "of a flat index alone by lexical similarity (zero-AI, deterministic), tags each "
                    "cluster with the words that set it apart, keeps the ids of an existing cluster file "
                    "wherever membership carries over, and writes the .md and .tsv forms atomically. "
                    "Prints cluster sizes, tags, what changed and a self-routing check (each member's own "
                    "hook routed against the new file). Exit 0 on success, 1 when a write was refused, "
                    "2 for invalid input.")
    source = build.add_mutually_exclusive_group()
    source.add_argument("--memory-dir", metavar="DIR",
                        help="Claude Code memory directory (default: memory_dir from the config file)")
    source.add_argument("--index", metavar="FILE",
                        help="a flat MEMORY.md alone ('- [Title](file.md) — hook' or '- slug — hook' lines)")
    build.add_argument("--out", metavar="FILE", default=None,
                       help=f"cluster file to write (.md; the .tsv goes beside it; default: {DEFAULT_OUT})")
    build.add_argument("--clusters", metavar="N", type=int, default=None,
                       help="target number of clusters (default: about one per five memories)")
    build.add_argument("--max-size", metavar="N", type=int, default=None,
                       help="size ceiling: no cluster grows past it, one at it is flagged [RETIER] (default: 12)")
    build.add_argument("--labels", metavar="FILE",
                       help="labels file (YAML): pins, extra tags, aliases and labels by cluster id")
    build.add_argument("--previous", metavar="FILE",
                       help="cluster file whose ids to carry over (default: the existing --out file)")
    build.add_argument("--keep-clusters", action="store_true",
                       help="keep every previous cluster's members together under its id and only place new "
                            "memories (default: cluster from scratch, carry ids over by overlap)")
    build.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    build.add_argument("--config", metavar="FILE", help="config file (memory-router.toml or pyproject.toml)")
    build.add_argument("--json", action="store_true", help="machine-readable output")
    build.set_defaults(handler=cmd_clusters_build)


def output_paths(out):
    """``(md_path, tsv_path)``: the Markdown form at ``out`` and the TSV beside it."""
    stem, ext = os.path.splitext(out)
    if ext.lower() == ".tsv":
        return stem + ".md", out
    return out, stem + ".tsv"


def read_memories(args, config):
    """``(memories, source dict, warnings)`` from --memory-dir, --index or the config's memory_dir."""
    from harness import memorydir
    from router.errors import InputError, read_utf8

    if args.index:
        index_path = args.index
        text = read_utf8(index_path, "index", "pass a flat MEMORY.md")
        _refuse_slim_index(text, index_path)
        entries = memorydir.parse_index_text(text)
        memories = memorydir.memories_from_index(entries, index_path)
        source = {"kind": "index", "path": os.path.abspath(index_path)}
        if not memories:
            raise InputError("no memory lines found", path=index_path,
                             fix="each memory needs a line '- [Title](file.md) \u2014 hook' or '- slug \u2014 hook'")
    else:
        directory = args.memory_dir or config.get("memory_dir")
        if not directory:
            raise InputError("no memories to build from",
                             fix="pass --memory-dir DIR or --index FILE, or set memory_dir in memory-router.toml")
        if not os.path.isdir(directory):
            raise InputError("memory directory does not exist" if not os.path.exists(directory)
                         else "is a file, not a memory directory", path=directory,
                         fix="pass your Claude Code memory directory (the one holding MEMORY.md)")
        index_path = os.path.join(directory, "MEMORY.md")
        entries = []
        if os.path.exists(index_path):  # a FIFO or folder here is refused by read_utf8, not skipped
            entries = memorydir.parse_index_text(read_utf8(index_path, "index", "repair MEMORY.md"))
        memories = memorydir.merge_memories(entries, memorydir.read_memory_files(directory), index_path)
        source = {"kind": "memory_dir", "path": os.path.abspath(directory)}
        if not memories:
            raise InputError("no memories found (no memory files and no index lines)", path=directory,
                             fix="pass the directory that holds MEMORY.md and the memory files")
    warnings = [
        f"{index_path}:{lines[1]}: {slug} is listed again (first on line {lines[0]}); the first line is used"
        for slug, lines in sorted(memorydir.duplicate_index_slugs(entries).items())
    ]
    return memories, source, warnings


def _refuse_slim_index(text, path):
    from router.errors import InputError

    try:
        from canaries.memoryindex import is_slim_index
    except ImportError:  # the slim render is optional for building
        return
    if is_slim_index(text):
        raise InputError("this MEMORY.md is a slim index (cluster router lines, not one line per memory)",
                         path=path, fix="build from --memory-dir, or from the archived flat MEMORY.md")


def read_labels(path):
    from harness.clusters.labels import parse_labels_text
    from router.errors import read_utf8

    return parse_labels_text(read_utf8(path, "labels file", "pass an existing YAML labels file"), path)


def cmd_clusters_build(args):
    from harness.clusters import builder
    from harness.archives import write_archive
    from harness.clusters.clustering import DEFAULT_MAX_SIZE
    from harness.fileops import Snapshot
    from router.clusterfile import load_cluster_file, parse_cluster_text, render_markdown, render_tsv
    from router.configfile import load_config
    from router.config import settings_of
    from router.errors import InputError, decode_utf8

    config = load_config(args.config)
    settings = settings_of(config)
    memories, source, warnings = read_memories(args, config or {})
    labels = read_labels(args.labels) if args.labels else None

    md_path, tsv_path = output_paths(args.out or DEFAULT_OUT)
    for path in (md_path, tsv_path):
        if os.path.isdir(path):
            raise InputError("the output is a directory", path=path,
                             fix="pass --out with a file name, e.g. brain/memory-layer1-clusters.md")
    try:
        md_snapshot, tsv_snapshot = Snapshot(md_path), Snapshot(tsv_path)
    except OSError as err:
        raise InputError(f"cannot read the existing cluster file: {err.strerror or err}", path=err.filename,
                         fix="fix its permissions or pass another --out") from None
    previous, previous_path = None, None
    if args.previous:
        previous, previous_path = load_cluster_file(args.previous), args.previous
    elif md_snapshot.exists or tsv_snapshot.exists:
        snapshot = md_snapshot if md_snapshot.exists else tsv_snapshot
        text = decode_utf8(snapshot.data, snapshot.path, "the existing cluster file (nothing was written)",
                           fix="repair it or move it aside, then build again")
        try:
            previous = parse_cluster_text(text, snapshot.path)
        except InputError as err:
            raise InputError(f"cannot read the existing cluster file to keep its ids: {err.message}; "
                             "nothing was written", path=snapshot.path, line=err.line, column=err.column,
                             fix="repair it (memory-router clusters check) or move it aside") from None
        previous_path = snapshot.path

    result = builder.build_clusters(
        memories, target=args.clusters,
        max_size=DEFAULT_MAX_SIZE if args.max_size is None else args.max_size,
        labels=labels, previous=previous, keep_clusters=args.keep_clusters)
    index = result.index
    md_text = render_markdown(index).encode("utf-8")
    tsv_text = render_tsv(index).encode("utf-8")
    changes = builder.compare_builds(previous, index)
    check = builder.self_routing(index, settings)
    warnings = list(warnings) + list(result.warnings)
    if args.keep_clusters and previous is None:
        warnings.append("--keep-clusters has no previous cluster file to keep; clustered from scratch")

    unchanged = md_snapshot.data == md_text and tsv_snapshot.data == tsv_text and md_snapshot.exists \
        and tsv_snapshot.exists
    written, archived = False, []
    if not args.dry_run and not unchanged:
        archived = write_outputs(((md_snapshot, md_text, ".md"), (tsv_snapshot, tsv_text, ".tsv")),
                                 write_archive)
        written = True

    summary = {
        "source": source,
        "out": {"md": os.path.abspath(md_path), "tsv": os.path.abspath(tsv_path)},
        "previous": os.path.abspath(previous_path) if previous_path else None,
        "labels": os.path.abspath(args.labels) if args.labels else None,
        "dry_run": bool(args.dry_run),
        "written": written,
        "unchanged": bool(unchanged),
        "archived": archived,
        "memories": len(index.members),
        "target_clusters": result.target,
        "max_size": result.max_size,
        "keep_clusters": bool(args.keep_clusters),
        "clusters": [
            {"cluster_id": c.cluster_id, "size": c.size, "retier": c.retier, "tags": list(c.tags),
             "label": c.label, "carried_over": result.carried.get(c.cluster_id),
             "members": [m.slug for m in c.members]}
            for c in index.clusters
        ],
        "self_routing": check,
        "changes": changes,
        "warnings": warnings,
    }
    if args.json:
        from harness.output import print_json

        print_json(summary)
    else:
        print_summary(summary)
    return 0


def write_outputs(outputs, write_archive):
    """Archive each existing file that will change, then replace it atomically; refuse (exit 1,
    nothing written) if any of them changed since it was read. Returns the archive paths."""
    from router.errors import RefusedError

    for snapshot, _data, _suffix in outputs:
        snapshot.require_unchanged()
    archived, written = [], []
    try:
        os.makedirs(os.path.dirname(os.path.abspath(outputs[0][0].path)), exist_ok=True)
        for snapshot, data, suffix in outputs:
            if snapshot.exists and snapshot.data != data:
                directory = os.path.dirname(os.path.abspath(snapshot.path))
                stem = os.path.splitext(os.path.basename(snapshot.path))[0] + ".archive"
                archived.append(write_archive(directory, stem, suffix, snapshot.data))
        for snapshot, data, _suffix in outputs:
            snapshot.replace(data)
            written.append(snapshot.path)
    except RefusedError as err:
        if not written:
            raise
        raise _partly_written(err.message.replace("; nothing was written", ""), outputs, written, archived) from None
    except OSError as err:
        reason = f"cannot write the cluster file: {err.strerror or err}"
        if written:
            raise _partly_written(reason, outputs, written, archived) from None
        raise RefusedError(reason, path=getattr(err, "filename", None) or outputs[0][0].path,
                           fix="check the directory exists and is writable") from None
    return archived


def _partly_written(reason, outputs, written, archived):
    """The .md may already be replaced when the .tsv cannot be: say so, and where the old ones are."""
    from router.errors import RefusedError

    pending = [snapshot.path for snapshot, _data, _suffix in outputs if snapshot.path not in written]
    reason += f"; wrote {', '.join(written)} but not {', '.join(pending)}, so the two forms now differ"
    if archived:
        reason += f"; the previous files are kept in {', '.join(archived)}"
    return RefusedError(reason, fix="fix the cause, then build again (a build rewrites both forms)")


def print_summary(summary):
    from harness.output import console, table

    out = console()
    rows = []
    for c in summary["clusters"]:
        carried = c["carried_over"]
        origin = "new" if carried is None else f"kept (overlap {carried:.2f})"
        rows.append((c["cluster_id"], c["size"], "RETIER" if c["retier"] else "", ", ".join(c["tags"]),
                     c["label"] or "-", origin))
    out.print(table(f"{len(summary['clusters'])} clusters from {summary['memories']} memories "
                    f"(target {summary['target_clusters']}, size ceiling {summary['max_size']})",
                    ["cluster", "size", "", "tags", "label", "id"], rows))
    check = summary["self_routing"]
    out.print(f"self-routing: {check['reached']} of {check['total']} members ({check['share']:.0%}) reach their "
              f"own cluster from their own hook text", markup=False)
    if check["misses"]:
        out.print(table("members their own hook does not route home",
                        ["slug", "its cluster", "status", "routed to", "top score", "own score"],
                        [(m["slug"], m["cluster_id"], m["status"], ", ".join(m["routed"]) or "-",
                          m["top_score"], m["own_score"]) for m in check["misses"]]))
    changes = summary["changes"]
    if changes["previous"]:
        out.print(f"changes against {summary['previous']}: {len(changes['kept'])} ids kept, "
                  f"{len(changes['new'])} new, {len(changes['removed'])} removed, {len(changes['split'])} split, "
                  f"{len(changes['merged'])} merged, {len(changes['moved'])} members moved, "
                  f"{len(changes['added'])} added, {len(changes['dropped'])} dropped", markup=False)
        detail = []
        detail += [("new cluster", cid, "") for cid in changes["new"]]
        detail += [("removed cluster", cid, "") for cid in changes["removed"]]
        detail += [("split", s["cluster_id"], "into " + ", ".join(s["into"])) for s in changes["split"]]
        detail += [("merged", m["cluster_id"], "from " + ", ".join(m["from"])) for m in changes["merged"]]
        detail += [("moved", m["slug"], f"{m['from']} -> {m['to']}") for m in changes["moved"]]
        detail += [("added", slug, "") for slug in changes["added"]]
        detail += [("dropped", slug, "") for slug in changes["dropped"]]
        if detail:
            out.print(table("what changed", ["change", "what", "detail"], detail))
    for warning in summary["warnings"]:
        out.print(f"warning: {warning}", markup=False, style="yellow")
    if summary["dry_run"]:
        out.print(f"dry run: nothing written (would write {summary['out']['md']} and {summary['out']['tsv']})",
                  markup=False)
    elif summary["unchanged"]:
        out.print(f"unchanged: {summary['out']['md']} and its .tsv already hold this build", markup=False)
    else:
        for path in summary["archived"]:
            out.print(f"archived the previous file to {path}", markup=False)
        out.print(f"wrote {summary['out']['md']} and {summary['out']['tsv']}", markup=False)
    sys.stdout.flush()
