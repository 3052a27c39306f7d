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
    the hook's decision (``route``, ``replay``, ``canary run``, the MCP server): the compiled table
    when it is current, else compiled now and stored where the hook reads it (a command has no
    prompt budget). With caching off it is what the hook builds: the whole table while the files
    beside the cluster file are small, else the cluster file's own (``log`` says so)."""
    def build(p):
        return build_table_of(p, learned_file, log=log)

    companions = companions_of(learned_file)
    if cache.caching_off():
        size = beside_bytes(path)
        if size <= INLINE_BUILD_BYTES:
            return build(os.path.abspath(path))
        if log is not None:
            log(no_cache_message(path, size))
        return build_table_of(os.path.abspath(path), learned_file, beside=False, log=log)

    def compile_then_read(p):
        cache.compile_routing_table(p, build, companions)
        return cache.load_routing_table(p, build, companions)

    return cache.load_routing_table(path, build, companions, fallback=compile_then_read)


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
    log(f"the routing table of {path} is missing or stale and its utterances and near-misses "
        f"({size:,} bytes) are too large to compile inside a prompt: routing on the cluster file "
        f"alone; {'a rebuild has started' if started else 'a rebuild is already running'} "
        "(or run: memory-router clusters compile)")
    return cache.load_routing_table(path, lambda p: build_table_of(p, learned_file, beside=False, log=log),
                                    companions_of(learned_file), beside=False)


def _marker(path):
    """The file a running rebuild of this store holds, in the cache directory (``None``: no cache)."""
    if cache.cache_dir() is None:
        return None
    return cache.entry_path(os.path.abspath(path), "rebuild", ".marker")


def start_rebuild(path, learned_file=None):
    """Start ``python -m router.hooks.compiled PATH`` detached (its own session, no terminal, no
    inherited descriptors) unless a rebuild of this store is already running. True if started."""
    marker = _marker(path)
    if marker is None:
        return False
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        try:
            if time.time() - os.stat(marker).st_mtime < REBUILD_MARKER_TTL_S:
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
    ``{"entry": path or None, "seconds": float}`` (``entry`` None: caching is off or unwritable)."""
    start = time.perf_counter()
    entry = cache.compile_routing_table(path, lambda p: build_table_of(p, learned_file, log=log),
                                        companions_of(learned_file))
    return {"entry": entry, "seconds": round(time.perf_counter() - start, 3)}


def main(argv=None):
    """The detached rebuild: ``python -P -m router.hooks.compiled PATH [--learned FILE]``. Waits for
    the files to settle (a same-size rewrite within a clock tick), compiles, removes the marker."""
    argv = list(sys.argv[1:] if argv is None else argv)
    path = argv[0]
    learned_file = argv[argv.index("--learned") + 1] if "--learned" in argv else None
    try:
        time.sleep(cache.RACY_WINDOW_NS / 1e9)
        compile_store(path, learned_file)
        return 0
    except Exception:  # noqa: BLE001 - detached, nobody to tell; the next prompt falls back again
        return 1
    finally:
        marker = _marker(path)
        if marker:
            remove_owned(marker, os.path.dirname(marker))


if __name__ == "__main__":
    sys.exit(main())
