"""What a replayed session would have cost in memory bytes: flat against slim + router.

flat: the always-loaded part of ``MEMORY.md`` as it is (the newest render archive when the live
one is already slim), on every API call. slim + router: the slim index ``slim render`` would write,
on every API call, plus each injection from its prompt's calls to the next compaction (it stays in
the history), plus what the SessionStart hook sends again after a compaction, from the next
prompt. The calls and compactions are the session's own, read from its transcript. Bytes, not
tokens: the ratio is what matters, and ``tokens report`` counts tokens.
"""

import os

from router.errors import MemoryRouterError
from router.safeio import open_regular


def index_sizes(memory_dir, cluster_path, config_path=None):
    """``(sizes or None, why not)``: ``{"flat_bytes", "slim_bytes", "flat_from", "memory_dir"}``."""
    from canaries.memoryindex import claude_code_loaded
    from harness.slim.index import newest_archive
    from harness.slim.live import plan_render

    if memory_dir is None:
        return None, "no memory directory (pass --memory-dir, or set memory_dir in memory-router.toml)"
    try:
        plan = plan_render(memory_dir, cluster_path, config_path)
    except MemoryRouterError as err:
        return None, str(err)
    flat_text, flat_from = plan["before"], plan["live_path"]
    if plan["already_slim"]:
        try:
            newest = newest_archive(os.listdir(plan["memory_dir"]))
        except OSError:
            newest = None
        if newest is None:
            return None, (f"{plan['live_path']} is already slim and no MEMORY.archive-<stamp>.md holds the flat "
                          "index it replaced")
        flat_from = os.path.join(plan["memory_dir"], newest)
        try:
            with open_regular(flat_from, "rb") as handle:
                flat_text = handle.read().decode("utf-8", errors="replace")
        except OSError as err:
            return None, f"cannot read {flat_from}: {err.strerror or err}"
    flat = claude_code_loaded(flat_text)[0]
    slim = claude_code_loaded(plan["after"])[0]
    return {"flat_bytes": len(flat.encode("utf-8")), "slim_bytes": len(slim.encode("utf-8")),
            "flat_from": flat_from, "memory_dir": plan["memory_dir"]}, None


def session_cost(turns, flat_bytes, slim_bytes):
    """The memory bytes of one session (``turns``: ``simulate.TurnCost``s), flat and slim + router."""
    calls = sum(turn.calls for turn in turns)
    in_history = 0
    injected = 0
    for turn in turns:
        in_history += turn.injected_bytes
        injected += in_history * turn.calls
        if turn.compacted:
            # Summarised away; what the SessionStart hook sends again is there from the next prompt.
            in_history = turn.resent_bytes
    return {"calls": calls, "compactions": sum(1 for turn in turns if turn.compacted),
            "flat_bytes": flat_bytes * calls, "slim_bytes": slim_bytes * calls + injected,
            "injection_bytes": injected}
