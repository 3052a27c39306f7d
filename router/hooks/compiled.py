"""The hook's routing table, compiled when the store is written, never built inside a prompt it
could not finish.

A table with utterances and near-misses takes time to build (a 100,000-row utterances file took
over a minute), and Claude Code kills a hook at its timeout: a table built inside the prompt would
never be saved, and every prompt would wait and get nothing. So:

- every command that writes the store (``clusters enrich|build|compile``, ``init``, ``learn``, the
  MCP ``record_feedback``) calls ``compile_store``, which builds the table and stores it where the
  hook reads it (``router.cache``), atomically;
- on a prompt whose table is missing or stale, the hook builds it inline only when the files
  beside the cluster file are small (``INLINE_BUILD_BYTES``: a build well inside the budget).
  Otherwise it routes on the cluster file alone (a table of its own, cached), logs one line, and
  starts ``python -m router.hooks.compiled`` detached to rebuild the whole table outside the
  prompt; at most one such rebuild runs per store (a marker file in the cache).

Standard library and ``router.*`` only; ``subprocess`` is imported only to start a rebuild.
"""

import os
import sys
import time

from router import cache
from router.config import nearmisses_path, utterances_path
from router.errors import InputError
from router.hookconfig import MAX_CLUSTER_FILE_BYTES, check_size
from router.removal import remove_owned
from router.safeio import read_regular_bytes

# About 2,000 utterance rows: the example store's 1,260 rows with its near-misses build in ~0.1 s.
INLINE_BUILD_BYTES = 256 * 1024
# A rebuild marker older than this belongs to a rebuild that died: another may start.
REBUILD_MARKER_TTL_S = 15 * 60


def build_table_of(path, learned_file=None, beside=True, log=None):
    """The table the hook routes on for the cluster file at ``path`` (with learned terms from
    ``learned_file`` when learning is on; ``beside=False``: the cluster file alone)."""
    from router.providers.provider import build_table
    from router.store.clusterfile import load_cluster_file

    check_size(path, MAX_CLUSTER_FILE_BYTES, "cluster file")
    terms = None
    skipped = []
    if learned_file is not None:
        from router.store.learned import read_learned, terms_by_slug

        try:
            terms = terms_by_slug(read_learned(learned_file, skipped))
        except InputError as err:
            # A damaged learned file must not silence the router: route on the hand-made words.
            if log is not None:
                log(f"{err}; routing without learned terms until it is fixed")
    table = build_table(load_cluster_file(path), learned_terms=terms, beside=beside)
    from router.routing.weightedtable import note_skipped_rows

    note_skipped_rows(table, skipped, "learned terms")
    return table


def beside_bytes(path):
    """Bytes of the files beside the cluster file that a full table is built from."""
    total = 0
    for other in (utterances_path(path), nearmisses_path(path)):
        try:
            total += os.stat(other).st_size
        except OSError:
            pass
    return total


def companions_of(learned_file):
    return (learned_file,) if learned_file else ()


def hook_table(path, learned_file=None, log=None):
    """The table the hook routes on for the cluster file at ``path``, for a command that must show
    the hook's decision (``route``, ``replay``, the MCP server): the compiled table when it is
    current; else what the hook does on that miss, without writing anything: the whole table built
    here while the files beside the cluster file are small, else the cluster file's own (``log``
    says so, with the fix). A stale large table is for ``clusters compile`` to rebuild."""
    def build(p):
        return build_table_of(p, learned_file, log=log)

    def on_miss(p):
        size = beside_bytes(p)
        if size <= INLINE_BUILD_BYTES:
            return build(p)
        if log is not None:
            log(no_cache_message(p, size) if cache.caching_off() else
                f"the compiled routing table of {p} is missing or stale and its utterances and near-misses "
                f"({size:,} bytes) are too large to compile inside a prompt, so the hook routes on the cluster "
                "file alone until it is compiled (fix: memory-router clusters compile)")
        return build_table_of(p, learned_file, beside=False, log=log)

    return cache.load_routing_table(path, build, companions_of(learned_file), fallback=on_miss)


def no_cache_message(path, size):
    return (f"caching is off ({cache.why_caching_off()}), so the routing table of {path} cannot be "
            f"compiled ahead, and its utterances and near-misses ({size:,} bytes) are too large to compile "
            "inside a prompt: routing on the cluster file alone (fix: unset MEMORY_ROUTER_NO_CACHE, or set "
            "MEMORY_ROUTER_CACHE_DIR to a local directory you can write)")


def hook_fallback(path, learned_file, log):
    """The hook's ``fallback`` on a table miss (``router.cache.use_routing_table``): ``None``
    (build inline) when the files beside the cluster file are small, else the cluster file's own
    table, after logging one line and starting a detached rebuild."""
    size = beside_bytes(path)
    if size <= INLINE_BUILD_BYTES:
        return None
    if cache.caching_off():
        log(no_cache_message(path, size))
        return build_table_of(os.path.abspath(path), learned_file, beside=False, log=log)
    started = start_rebuild(path, learned_file)
    failed = None if started else rebuild_failure(path)
    log(f"the routing table of {path} is missing or stale and its utterances and near-misses "
        f"({size:,} bytes) are too large to compile inside a prompt: routing on the cluster file "
        "alone; " + ("a rebuild has started" if started else
                     f"the last rebuild could not store the table ({failed}); another is tried "
                     f"{REBUILD_MARKER_TTL_S // 60} minutes after it" if failed else "a rebuild is already running")
        + " (or run: memory-router clusters compile)")
    return cache.load_routing_table(path, lambda p: build_table_of(p, learned_file, beside=False, log=log),
                                    companions_of(learned_file), beside=False)


def _marker(path):
    """The file a running rebuild of this store holds, in the cache directory (``None``: no cache).
    It is empty while the rebuild runs; a rebuild that could not store the table leaves it holding
    ``failed: why`` (so prompts do not start a rebuild that cannot land, one after another, until
    ``REBUILD_MARKER_TTL_S`` has passed)."""
    if cache.cache_dir() is None:
        return None
    return cache.entry_path(os.path.abspath(path), "rebuild", ".marker")


FAILED = "failed: "


def marker_state(path):
    """The rebuild marker of this store: ``None`` (none), or ``{"path", "age_s", "failed"}``
    (``failed``: why the last rebuild could not store the table, else ``None``; ``age_s`` below
    zero: dated ahead of the clock)."""
    marker = _marker(path)
    if marker is None:
        return None
    try:
        age = time.time() - os.stat(marker).st_mtime
        text = read_regular_bytes(marker)[:2000].decode("utf-8", "replace")
    except OSError:
        return None
    failed = text[len(FAILED):].strip() if text.startswith(FAILED) else None
    return {"path": marker, "age_s": round(age, 1), "failed": failed}


def rebuild_failure(path):
    """Why the last detached rebuild of this store could not store its table, while its marker
    still holds back the next one; else ``None``."""
    state = marker_state(path)
    return state["failed"] if state and 0 <= state["age_s"] < REBUILD_MARKER_TTL_S else None


def start_rebuild(path, learned_file=None):
    """Start ``python -m router.hooks.compiled PATH`` detached (its own session, no terminal, no
    inherited descriptors) unless a rebuild of this store is already running. True if started."""
    marker = _marker(path)
    if marker is None:
        return False
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        try:
            age = time.time() - os.stat(marker).st_mtime
            # A marker dated ahead of the clock (a clock set back, a copied cache) is stale, not
            # running: it must not hold rebuilds back until the clock catches up with it.
            if 0 <= age < REBUILD_MARKER_TTL_S:
                return False
            if remove_owned(marker, os.path.dirname(marker)) is not None:
                return False  # not a marker we could have written: leave it, no rebuild
        except FileNotFoundError:
            pass
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except OSError:
        return False
    import subprocess

    command = [sys.executable, "-m", "router.hooks.compiled", os.path.abspath(path)]
    if learned_file:
        command += ["--learned", os.path.abspath(learned_file)]
    # The rebuild must import this very router (its code's stamp is in the table's key), not
    # whichever one the interpreter would find on its own.
    import router

    home = os.path.dirname(os.path.dirname(os.path.abspath(router.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")])))
    try:
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         close_fds=True, start_new_session=True, cwd=os.path.dirname(os.path.abspath(path)), env=env)
    except OSError:
        remove_owned(marker, os.path.dirname(marker))
        return False
    return True


def compile_store(path, learned_file=None, log=None):
    """Compile and store the hook's table for the cluster file at ``path`` now. Returns
    ``{"entry": path or None, "seconds": float, "problem": why it is not stored or None,
    "skipped_rows": [[file:line:col, message], ...], "skipped_row_count": int}`` (the bad rows of
    the utterances, near-misses and learned files the table was built without)."""
    start = time.perf_counter()
    built = {}

    def build(p):
        built["table"] = build_table_of(p, learned_file, log=log)
        return built["table"]

    entry, problem = cache.compile_routing_table(path, build, companions_of(learned_file))
    table = built.get("table") or {}
    return {"entry": entry, "seconds": round(time.perf_counter() - start, 3), "problem": problem,
            "skipped_rows": [list(row) for row in table.get("skipped_rows", ())],
            "skipped_row_count": table.get("skipped_row_count", 0)}


def row_file_problems(path):
    """Every problem of the utterances and near-misses files beside the cluster file at ``path``
    (the learned-terms file has its own check): ``[(where, message)]``, a bad row as
    ``file:line:col`` with its message and fix, a file that cannot be used at all as its path.
    All rows are read (no cap): for doctor, not for a prompt."""
    from router.errors import InputError
    from router.store.learned import skipped_rows
    from router.store.nearmisses import read_nearmisses
    from router.store.utterances import read_utterances

    found = []
    for read, file in ((read_utterances, utterances_path(path)), (read_nearmisses, nearmisses_path(path))):
        skipped = []
        try:
            read(file, skipped)
        except InputError as err:
            found.append((file, err.format()))
        found.extend(skipped_rows(skipped))
    return found


def not_compiled(path, problem):
    """``(what the hook does meanwhile, the fix)`` when the table of ``path`` could not be stored
    (``problem``, from ``compile_store``)."""
    size = beside_bytes(path)
    if size <= INLINE_BUILD_BYTES:
        meanwhile = (f"the hook builds the whole table inside each prompt, since the utterances and near-misses "
                     f"({size:,} bytes) are under {INLINE_BUILD_BYTES // 1024} KiB")
    else:
        meanwhile = (f"the hook routes on the cluster file alone: the utterances and near-misses ({size:,} bytes) "
                     f"are over the {INLINE_BUILD_BYTES // 1024} KiB a prompt may build, so they go unused")
    if problem.startswith("caching is off"):
        fix = "unset MEMORY_ROUTER_NO_CACHE, or set MEMORY_ROUTER_CACHE_DIR to a local directory you can write"
    else:
        fix = ("make the cache directory writable (or free space in it), or set MEMORY_ROUTER_CACHE_DIR to a "
               "local directory you can write; then run memory-router clusters compile again")
    return meanwhile, fix


# The failure note never follows a link put in the marker's place, never waits on a FIFO there,
# and never creates the marker (a rebuild that removed it is done). The platform fallbacks (0
# where the flag does not exist) are fixed once here, at import.
_NOTE_FLAGS = os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _note_failure(marker, problem):
    """Leave the marker holding why the rebuild failed (best effort: the marker itself still holds
    the next rebuild back for ``REBUILD_MARKER_TTL_S``)."""
    try:
        fd = os.open(marker, _NOTE_FLAGS)
    except OSError:
        return
    try:
        os.write(fd, (FAILED + problem.replace("\n", " ") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass
    finally:
        os.close(fd)


def main(argv=None):
    """The detached rebuild: ``python -P -m router.hooks.compiled PATH [--learned FILE]``. Waits for
    the files to settle (a same-size rewrite within a clock tick), compiles, removes the marker."""
    argv = list(sys.argv[1:] if argv is None else argv)
    path = argv[0]
    learned_file = argv[argv.index("--learned") + 1] if "--learned" in argv else None
    problem = None
    try:
        time.sleep(cache.RACY_WINDOW_NS / 1e9)
        problem = compile_store(path, learned_file)["problem"]
    except Exception as err:  # noqa: BLE001 - detached: the log and the marker say it
        problem = f"{type(err).__name__}: {err}"
    marker = _marker(path)
    if problem is None:
        if marker:
            remove_owned(marker, os.path.dirname(marker))
        return 0
    from router.hookio import log_diagnostic

    log_diagnostic("rebuild", f"the routing table of {path} was not stored: {problem}; the hook routes on the "
                              f"cluster file alone and tries again in {REBUILD_MARKER_TTL_S // 60} minutes "
                              "(fix: memory-router clusters compile names what to change)")
    if marker:
        _note_failure(marker, problem)
    return 1


if __name__ == "__main__":
    sys.exit(main())
