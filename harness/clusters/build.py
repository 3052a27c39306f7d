"""``memory-router clusters build``'s model: a cluster file from a Claude Code memory directory or a
flat MEMORY.md. The clustering itself is pure (``harness.clusters.builder``); this module reads the
inputs, writes both forms atomically (archiving what they replace) and returns the summary that
``harness.clusters.cli`` prints."""

import os

from router.errors import InputError

DEFAULT_OUT = os.path.join("brain", "memory-layer1-clusters.md")


def output_paths(out):
    """``(md_path, tsv_path)``: the Markdown form at ``out`` and the TSV beside it."""
    stem, ext = os.path.splitext(out)
    if ext.lower() == ".tsv":
        return stem + ".md", out
    return out, stem + ".tsv"


def read_memories(memory_dir=None, index=None, config=None):
    """``(memories, source dict, warnings)`` from ``index`` (a flat MEMORY.md), else the memory
    directory: --memory-dir or the config's memory_dir (``harness.project.resolve_memory_dir``'s
    policy without a guess: a build never reads a directory nobody named)."""
    from harness import memorydir
    from router.errors import InputError, read_utf8

    if index:
        index_path = index
        text = read_utf8(index_path, "index", "pass a flat MEMORY.md")
        _refuse_slim_index(text, index_path)
        entries = memorydir.parse_index_text(text)
        memories = memorydir.memories_from_index(entries, index_path)
        source = {"kind": "index", "path": os.path.abspath(index_path)}
        if not memories:
            raise InputError("no memory lines found", path=index_path,
                             fix="each memory needs a line '- [Title](file.md) \u2014 hook' or '- slug \u2014 hook'")
    else:
        from harness.project import resolve_memory_dir

        try:
            directory, _how = resolve_memory_dir(memory_dir, config)
        except InputError:
            raise InputError("no memories to build from",
                             fix="pass --memory-dir DIR or --index FILE, or set memory_dir in memory-router.toml") from None
        memorydir.require_memory_dir(directory)
        index_path = memorydir.index_path(directory)
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


def build(memory_dir=None, index=None, out=None, clusters=None, max_size=None, labels=None, previous=None,
          keep_clusters=False, dry_run=False, config_path=None, namer=None):
    """Build a cluster file from a memory directory (or a flat index), carrying ids over from
    ``previous`` (else the existing ``out`` file), and write both forms unless ``dry_run``.
    Returns the summary ``clusters build`` prints (``--json`` prints it whole).

    ``namer(result, previous, labels, md_path, source) -> (index, report)`` renames the built
    clusters before anything is rendered (``clusters build --engine``:
    ``harness.clusters.build_engine.EngineStage``); its report is the summary's ``naming``."""
    from harness.clusters import builder
    from harness.archives import write_archive
    from harness.clusters.clustering import DEFAULT_MAX_SIZE
    from harness.fileops import Snapshot
    from router.store.clusterfile import load_cluster_file, parse_cluster_text, render_markdown, render_tsv
    from router.configfile import load_config
    from router.config import settings_of
    from router.errors import InputError, decode_utf8

    config = load_config(config_path)
    settings = settings_of(config)
    memories, source, warnings = read_memories(memory_dir, index, config or {})
    labels_path, labels = labels, (read_labels(labels) if labels else None)

    md_path, tsv_path = output_paths(out or DEFAULT_OUT)
    for path in (md_path, tsv_path):
        if os.path.isdir(path):
            raise InputError("the output is a directory", path=path,
                             fix="pass --out with a file name, e.g. brain/memory-layer1-clusters.md")
    try:
        md_snapshot, tsv_snapshot = Snapshot(md_path), Snapshot(tsv_path)
    except OSError as err:
        raise InputError(f"cannot read the existing cluster file: {err.strerror or err}", path=err.filename,
                         fix="fix its permissions or pass another --out") from None
    previous_path = previous
    previous = None
    if previous_path:
        previous = load_cluster_file(previous_path)
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
        memories, target=clusters,
        max_size=DEFAULT_MAX_SIZE if max_size is None else max_size,
        labels=labels, previous=previous, keep_clusters=keep_clusters)
    index = result.index
    naming = None
    if namer is not None:
        index, naming = namer(result, previous, labels, md_path, source)
    md_text = render_markdown(index).encode("utf-8")
    tsv_text = render_tsv(index).encode("utf-8")
    changes = builder.compare_builds(previous, index)
    check = builder.self_routing(index, settings)
    warnings = list(warnings) + list(result.warnings)
    if keep_clusters and previous is None:
        warnings.append("--keep-clusters has no previous cluster file to keep; clustered from scratch")

    unchanged = md_snapshot.data == md_text and tsv_snapshot.data == tsv_text and md_snapshot.exists \
        and tsv_snapshot.exists
    written, archived = False, []
    if not dry_run and not unchanged:
        archived = write_outputs(((md_snapshot, md_text, ".md"), (tsv_snapshot, tsv_text, ".tsv")),
                                 write_archive)
        written = True

    summary = {
        "source": source,
        "out": {"md": os.path.abspath(md_path), "tsv": os.path.abspath(tsv_path)},
        "previous": os.path.abspath(previous_path) if previous_path else None,
        "labels": os.path.abspath(labels_path) if labels_path else None,
        "dry_run": bool(dry_run),
        "written": written,
        "unchanged": bool(unchanged),
        "archived": archived,
        "memories": len(index.members),
        "target_clusters": result.target,
        "max_size": result.max_size,
        "keep_clusters": bool(keep_clusters),
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
    if naming is not None:
        summary["naming"] = naming
    return summary


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
