"""Doctor's view of the hook's compiled table and the row files it is built from (issue 35 items
6 and 7): each bad utterances or near-misses row named as ``file:line:col`` with its fix (the hook
skips it and uses the rest), and whether the table the hook reads is compiled, with why not and
the fix (caching off, a cache that cannot be written, a rebuild that could not land, a rebuild
marker dated ahead of the clock). Read-only: nothing is compiled or written here."""

import os

from harness.doctor.probes import check

MAX_ROWS_SHOWN = 5


def table_checks(cluster_path, config):
    """The "row files" and "compiled table" checks for the cluster file at ``cluster_path``."""
    from router.config import hook_learned_file
    from router.hooks.compiled import row_file_problems

    problems = row_file_problems(cluster_path)
    checks = []
    if problems:
        shown = "; ".join(message for _where, message in problems[:MAX_ROWS_SHOWN])
        more = f"; and {len(problems) - MAX_ROWS_SHOWN} more" if len(problems) > MAX_ROWS_SHOWN else ""
        checks.append(check("row files", "fail", f"{len(problems)} bad row(s) or file(s) the hook leaves out: {shown}{more}",
                            problems=[list(p) for p in problems],
                            fix="correct or delete each row named (memory-router clusters compile lists them too)"))
    else:
        checks.append(check("row files", "pass", "every utterances and near-misses row beside the cluster file reads"))
    checks.append(_compiled_check(cluster_path, hook_learned_file(cluster_path, config)))
    return checks


def _compiled_check(cluster_path, learned_file):
    from router import cache
    from router.hooks.compiled import (INLINE_BUILD_BYTES, REBUILD_MARKER_TTL_S, beside_bytes, companions_of, marker_state,
                                       not_compiled)

    name = "compiled table"
    if cache.caching_off():
        problem = f"caching is off ({cache.why_caching_off()})"
        meanwhile, fix = not_compiled(cluster_path, problem)
        status = "fail" if meanwhile.startswith("the hook routes on the cluster file alone") else "warn"
        return check(name, status, f"{problem}: {meanwhile}", fix=fix)
    directory = cache.cache_dir()
    if os.path.isdir(directory) and not os.access(directory, os.W_OK):
        meanwhile, fix = not_compiled(cluster_path, "unwritable")
        return check(name, "fail", f"the cache directory {directory} cannot be written, so no table is ever stored "
                                   f"there: {meanwhile}", fix=fix)
    marker = marker_state(cluster_path)
    current = cache.table_is_current(cluster_path, companions_of(learned_file))
    if marker and marker["age_s"] < 0:
        return check(name, "warn", f"a rebuild marker {marker['path']} is dated {-marker['age_s']:.0f} s ahead of the "
                                   "clock (a clock set back, or a copied cache); the hook no longer waits on it",
                     fix=f"delete {marker['path']}")
    if current:
        return check(name, "pass", f"the hook reads a current compiled table ({beside_bytes(cluster_path):,} bytes of "
                                   "utterances and near-misses in it)")
    if marker and marker["failed"]:
        meanwhile, fix = not_compiled(cluster_path, marker["failed"])
        return check(name, "fail", f"the last rebuild could not store the table ({marker['failed']}); the next is "
                                   f"tried {REBUILD_MARKER_TTL_S // 60} minutes after it; meanwhile {meanwhile}",
                     fix=fix)
    meanwhile, _fix = not_compiled(cluster_path, "stale")
    if beside_bytes(cluster_path) <= INLINE_BUILD_BYTES:   # nothing lost: a prompt builds it in time
        return check(name, "pass", f"not compiled yet, and nothing is lost: {meanwhile}")
    return check(name, "warn", f"the compiled table is missing or stale: {meanwhile} until a rebuild (the first "
                               "prompt starts one) or a compile lands", fix="memory-router clusters compile")
