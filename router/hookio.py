"""What every memory-router hook shares: the fail-open run and the diagnostic log (what a hook prints
for the model is ``router.agenttext``'s).

Both the router hook and the spec §3 sentinel hook run through ``run_fail_open``, so a fix to how
a hook reads its payload or prints its answer (the output is ASCII JSON *bytes*, whatever the
stdout encoding) reaches both. Standard library only: this is on the hook's start-up path.
"""

import json
import os
import sys


def log_diagnostic(hook_name, message):
    """Append one line to ``$MEMORY_ROUTER_LOG`` (only when it is set); never raises."""
    log_path = os.environ.get("MEMORY_ROUTER_LOG")
    if not log_path:
        return
    try:
        import time

        from router.safeio import open_regular

        line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} memory-router {hook_name}: {message}"
        # A FIFO or device named as the log is refused at once, never waited on.
        with open_regular(log_path, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line.replace("\n", " ")[:2000] + "\n")
    except Exception:
        pass


def run_fail_open(hook_name, respond, stdin=None, stdout=None):
    """Read the payload bytes, call ``respond(raw) -> dict or None`` and print the dict as JSON.

    Always returns 0: whatever goes wrong, nothing is printed (exit 2 would erase the user's
    prompt) and one line goes to the log. ``stdin``/``stdout`` default to the process's binary
    streams; a text ``stdout`` may be passed in tests.
    """
    try:
        raw = (stdin or sys.stdin.buffer).read()
        result = respond(raw)
        if result is not None:
            text = json.dumps(result)  # ASCII-only
            if stdout is None:
                # Bytes, not text: PYTHONIOENCODING=utf-16 (or any non-ASCII-compatible stdout
                # encoding) must not change what Claude Code reads.
                out = sys.stdout.buffer
                text = text.encode("ascii")
            else:
                out = stdout
            out.write(text)
            out.flush()
    except BaseException as err:  # noqa: BLE001 - failing open is the contract
        if isinstance(err, KeyboardInterrupt):
            return 0
        log_diagnostic(hook_name, f"{type(err).__name__}: {err}")
    return 0
