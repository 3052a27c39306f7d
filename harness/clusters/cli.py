"""``memory-router clusters check|convert`` (and ``build``, registered by harness.clusters.build)."""

import os
import sys

from router.clusterfile import load_cluster_file, read_text, render_cluster_file, scan_cluster_text
from harness.clusters.build import register_build
from router.errors import InputError


def cmd_clusters_check(args):
    from harness.output import print_json

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
                    "format in docs/ and the README): 'check' lists every violation with its line, 'convert' "
                    "writes the other form, 'build' makes one from a Claude Code memory directory.")
    sub = clusters.add_subparsers(dest="clusters_command", metavar="ACTION", required=True)
    check = sub.add_parser(
        "check", help="list every violation of the cluster format, with line numbers (exit 1)",
        description="Reads FILE (.md or .tsv) and prints every violation of the cluster format as "
                    "FILE:LINE:COLUMN: message (fix: ...), or 'ok' with the cluster and member counts.",
        epilog="exit codes: 0 no violation; 1 violations listed; 2 FILE cannot be read")
    check.add_argument("file", metavar="FILE", help="the cluster file to check (.md or .tsv)")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    check.set_defaults(handler=cmd_clusters_check)
    convert = sub.add_parser("convert", help="write the other form (md <-> tsv) of a cluster file",
                             description="Writes the other form of FILE. An existing, different output file "
                                         "is archived first, beside it, as <name>-<UTC stamp>.<ext>.")
    convert.add_argument("file", metavar="FILE", help="the cluster file to read (.md or .tsv)")
    convert.add_argument("--to", choices=("md", "tsv"), required=True, help="the form to write")
    convert.add_argument("--out", metavar="FILE",
                         help="output path (default: FILE with the new extension; - for stdout)")
    convert.set_defaults(handler=cmd_clusters_convert)
    register_build(sub)
