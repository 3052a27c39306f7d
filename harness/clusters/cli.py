"""``memory-router clusters check|convert|build``: the face of the clusters package (the build's
model is ``harness.clusters.build`` over ``builder``, ``clustering`` and ``labels``)."""

import os
import sys

from harness import options
from harness.clusters.build import DEFAULT_OUT
from router.store.clusterfile import load_cluster_file, read_text, render_cluster_file, scan_cluster_text
from router.errors import InputError


def check_one(path):
    """``(exit code, report, lines)`` for one cluster file: 0 clean, 1 with violations, 2 unreadable."""
    try:
        text = read_text(path)
    except InputError as err:
        return 2, {"file": path, "ok": False, "error": err.format()}, []
    index, violations = scan_cluster_text(text, path)
    report = {"file": path, "ok": not violations, "clusters": len(index), "members": len(index.members),
              "violations": [v._asdict() for v in violations]}
    lines = [f"{path}:{v.line}:{v.column}: {v.message} (fix: {v.fix})" for v in violations]
    if not violations:
        lines.append(f"{path}: ok ({len(index)} clusters, {len(index.members)} members)")
    return (1 if violations else 0), report, lines


def cmd_clusters_check(args):
    """Every file is checked, even after one fails (pre-commit passes several); the exit code is the
    worst one's. ``--json``: one file gives its report object as before, several a list of them."""
    from harness.output import print_json

    results = [check_one(path) for path in args.files]
    worst = max(code for code, _report, _lines in results)
    if args.json:
        reports = [report for _code, report, _lines in results]
        print_json(reports[0] if len(reports) == 1 else {"ok": worst == 0, "files": reports})
    else:
        for _code, report, lines in results:
            if "error" in report:
                print(f"memory-router: error: {report['error']}", file=sys.stderr)
            for line in lines:
                print(line)
        problems = sum(len(report.get("violations", ())) for _code, report, _lines in results)
        unreadable = sum(1 for code, _report, _lines in results if code == 2)
        if problems or len(results) > 1 and worst:
            print(f"{problems} problem(s), {unreadable} unreadable file(s) in {len(results)} file(s)",
                  file=sys.stderr)
    return worst


def cmd_clusters_convert(args):
    from harness.archives import write_archive
    from harness.fileops import Snapshot

    index = load_cluster_file(args.file)
    text = render_cluster_file(index, args.to)
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = args.out or os.path.splitext(args.file)[0] + "." + args.to
    if os.path.abspath(out) == os.path.abspath(args.file):
        raise InputError("refusing to convert a file onto itself", path=args.file, fix="pass --out")
    if os.path.isdir(out):
        raise InputError("--out names a directory, not a file", path=out,
                         fix=f"pass a file path, such as {os.path.join(out, os.path.basename(os.path.splitext(args.file)[0]))}.{args.to}")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        # Creating it would hide a typo in the path; the user creates it once, on purpose.
        raise InputError("the directory of --out does not exist; nothing was written", path=parent,
                         fix=f"create it first (mkdir -p {parent}) or pass another --out")
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
    clusters = subparsers.add_parser(
        "clusters", help="check, convert or build cluster files",
        description="The cluster file the hook routes with (brain/memory-layer1-clusters.md, or its .tsv form; "
                    "format in docs/router.md): 'check' lists every violation with its line, 'convert' "
                    "writes the other form, 'build' makes one from a Claude Code memory directory.")
    # file operands: a committed file named like an option is refused by name, never obeyed
    sub = clusters.add_subparsers(dest="clusters_command", metavar="ACTION", required=True,
                                  parser_class=options.file_operand_parser())
    check = sub.add_parser(
        "check", help="list every violation of the cluster format, with line numbers (exit 1; 2: unreadable)",
        description="Reads FILE (.md or .tsv) and prints every violation of the cluster format as "
                    "FILE:LINE:COLUMN: message (fix: ...), or 'ok' with the cluster and member counts.",
        epilog="exit codes: 0 no violation; 1 violations listed; 2 FILE cannot be read")
    check.add_argument("files", metavar="FILE", nargs="+",
                       help="the cluster files to check (.md or .tsv); all are checked, the worst exit code wins; "
                            "after --, every argument is a file, even one named like an option")
    options.json_output(check)
    check.set_defaults(handler=cmd_clusters_check)
    convert = sub.add_parser("convert", help="write the other form (md <-> tsv) of a cluster file",
                             description="Writes the other form of FILE. An existing, different output file "
                                         "is archived first, beside it, as <name>-<UTC stamp>.<ext>.")
    convert.add_argument("file", metavar="FILE", help="the cluster file to read (.md or .tsv)")
    convert.add_argument("--to", choices=("md", "tsv"), required=True, help="the form to write")
    convert.add_argument("--out", metavar="FILE",
                         help="output path (default: FILE with the new extension; - for stdout)")
    convert.set_defaults(handler=cmd_clusters_convert)
    compile_ = sub.add_parser(
        "compile", help="compile the hook's routing table now (utterances and near-misses included)",
        description="Builds the routing table the hook reads for the cluster file (with its utterances, "
                    "near-misses and, with learning on, learned terms) and stores it in the cache, so no "
                    "prompt pays the build. enrich, build, init, learn and the MCP record_feedback do this "
                    "after every write; run it after editing those files by hand.")
    options.clusters_and_config(compile_)
    options.json_output(compile_)
    compile_.set_defaults(handler=cmd_clusters_compile)
    register_build(sub)
    from harness.clusters.enrich_cli import register_enrich

    register_enrich(sub)


def cmd_clusters_compile(args):
    from harness.context import compile_hook_table, resolve_cli_clusters
    from harness.output import print_json
    from router.configfile import load_config

    from router.hooks.compiled import marker_state, not_compiled

    config = load_config(args.config)
    path = resolve_cli_clusters(args.clusters, config)
    result = dict(compile_hook_table(path, config), cluster_file=os.path.abspath(path))
    if result["problem"]:
        result["hook_meanwhile"], result["fix"] = not_compiled(path, result["problem"])
    marker = marker_state(path)
    if marker and marker["age_s"] < 0:
        result["rebuild_marker"] = dict(marker, problem="dated ahead of the clock; it no longer holds rebuilds back",
                                        fix=f"delete {marker['path']}")
    # Exit 1 when the hook cannot read what was asked for: no table stored, or rows left out.
    code = 1 if result["problem"] or result["skipped_row_count"] else 0
    if args.json:
        print_json(result)
        return code
    if result["problem"]:
        print(f"not compiled: {path}: {result['problem']}; meanwhile {result['hook_meanwhile']} "
              f"(fix: {result['fix']})")
    else:
        print(f"compiled the hook's routing table for {path} in {result['seconds']:.2f} s")
    for _where, message in result["skipped_rows"]:
        print(f"{message}; the row is skipped, the rest are used")
    more = result["skipped_row_count"] - len(result["skipped_rows"])
    if more > 0:
        print(f"and {more} more bad rows skipped (memory-router doctor lists them all)")
    if "rebuild_marker" in result:
        found = result["rebuild_marker"]
        print(f"{found['path']}: a rebuild marker {found['problem']} (fix: {found['fix']})")
    return code


def cmd_clusters_build(args):
    from harness.clusters.build import build
    from harness.output import print_json

    stage = None
    if args.engine:  # the engine names the clusters, then enriches the built store (docs/enrich.md)
        from harness.clusters.build_engine import EngineStage
        from harness.clusters.enrich_cli import engine_from
        from router.configfile import load_config

        stage = EngineStage(engine_from(args, load_config(args.config)), args.per_memory, args.dry_run, args.json,
                            args.yes, say=lambda text: print(text, flush=True))
    from harness import setuprecord
    from harness.clusters.build import output_paths
    from harness.project import project_dir
    from router.config import nearmisses_path, utterances_path

    md_path, tsv_path = output_paths(args.out or DEFAULT_OUT)
    # What the build writes in the project (the cluster files, their archives, the enriched
    # store's files) is recorded with its hash, so uninstall --all takes it out again if nobody
    # changed it since (init's own advice is to run this after init).
    paths = [md_path, tsv_path] + ([utterances_path(md_path), nearmisses_path(md_path)] if stage else [])
    with setuprecord.recording(project_dir(None), [] if args.dry_run else paths, "clusters build",
                               [] if args.dry_run else [os.path.dirname(os.path.abspath(md_path))]) as recorded:
        summary = build(args.memory_dir, args.index, args.out, args.clusters, args.max_size, args.labels,
                        args.previous, args.keep_clusters, args.dry_run, args.config, namer=stage)
        archives = list(summary["archived"])
        try:
            if stage is not None:
                summary["enrich"] = stage.enrich(summary["out"]["md"])
        finally:
            for archived in archives + (stage.archived if stage is not None else []):
                recorded["files"].setdefault(os.path.abspath(archived), (False, None, None))
    if not args.dry_run and summary.get("written"):
        from harness.context import compile_hook_table
        from router.configfile import load_config

        summary["compiled"] = compile_hook_table(summary["out"]["md"], load_config(args.config))
    if args.json:
        print_json(summary)
    else:
        print_summary(summary)
    if stage is not None:
        failed = len(summary["naming"]["failed"]) + summary["enrich"]["failed"]
        if not args.json:
            enriched = summary["enrich"]
            print(f"utterances: {enriched['rows']} rows in {enriched['utterances_file']}"
                  + (" (dry run: not written)" if args.dry_run else ""))
            if failed:
                print(f"{failed} engine request(s) failed (the builder's names, or the previous utterances, are "
                      "kept for those clusters)", file=sys.stderr)
        return 1 if failed else 0
    return 0


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
    options.memory_dir(source, what="Claude Code memory directory")
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
    options.dry_run(build, "print what would change; write nothing")
    build.add_argument("--config", metavar="FILE", help="config file (memory-router.toml or pyproject.toml)")
    options.json_output(build)
    from harness.clusters.enrich_cli import add_engine_options

    add_engine_options(build, engine_help="ask this engine (claude, anthropic, command, or a plugin's) to name each "
                                          "cluster (id, label, tags), then enrich the built store in the same run "
                                          "(docs/enrich.md); default: no engine, zero-AI")
    build.set_defaults(handler=cmd_clusters_build)


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
