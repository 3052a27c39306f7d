"""A hook command run as Claude Code runs it (through the shell, in the project, a payload on
stdin), judged by what Claude Code would do with its output. Here, below the commands, because
doctor's checks and ``slim render``'s refusal (a slim index needs a router that runs) both
trial-run hooks; ``harness.install.routes`` finds which hooks route a project."""

import json
import os
import subprocess
import tempfile
import time

from harness.install import settings as inst
from router.safeio import open_regular


def probe_payload(project_dir, prompt="memory-router doctor probe: please ignore", session_id=None):
    """A neutral UserPromptSubmit payload (claude-code-formats.md §1.3) for a trial run, in a
    session of its own (the router sends a session each line once)."""
    import uuid

    return {
        "session_id": session_id or str(uuid.uuid4()),
        "transcript_path": "",
        "cwd": os.path.abspath(project_dir),
        "permission_mode": "default",
        "hook_event_name": inst.EVENT,
        "prompt": prompt,
    }


def judge_hook_output(returncode, stdout, stderr=b"", event=None):
    """``(ok, message)`` for one trial run of a UserPromptSubmit (or ``event``) command.

    Passes on exit 0 with no output, or with the JSON shape Claude Code honours; fails on any
    other exit code, on plain text (Claude Code would add it to every prompt's context) and on
    JSON without ``hookSpecificOutput.hookEventName`` (a bare ``additionalContext`` is ignored)."""
    err = stderr.decode("utf-8", errors="replace").strip().splitlines()
    err_hint = f": {err[0][:200]}" if err else ""
    if returncode != 0:
        meaning = {2: " (exit 2 would erase the user's prompt)", 127: " (command not found)",
                   126: " (not executable)"}.get(returncode, "")
        return False, f"exited {returncode}{meaning}{err_hint}"
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        return True, "exit 0, printed nothing"
    if not text.startswith("{"):
        return False, f"exit 0 but printed plain text, which Claude Code adds to the context: {text[:120]!r}"
    try:
        data = json.loads(text)
    except ValueError:
        return False, "exit 0 but printed invalid JSON (Claude Code would add it as plain text)"
    event = event or inst.EVENT
    out = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if not isinstance(out, dict) or out.get("hookEventName") != event or not isinstance(out.get("additionalContext"), str):
        return False, (f"exit 0 but the JSON lacks hookSpecificOutput.hookEventName == \"{event}\" with a "
                       "string additionalContext, so Claude Code ignores it")
    return True, f"exit 0, printed additionalContext ({len(out['additionalContext'])} chars)"


def run_hook_command(command, project_dir, timeout, prompt=None, payload=None, event=None):
    """One trial run of a hook command as Claude Code runs it: through the shell, in the project
    directory, with ``CLAUDE_PROJECT_DIR`` set and a payload on stdin (a neutral prompt unless
    ``prompt``, or ``payload`` whole). The router's fail-open diagnostics are captured through
    ``MEMORY_ROUTER_LOG``."""
    if payload is None:
        payload = probe_payload(project_dir)
        if prompt is not None:
            payload["prompt"] = prompt
    payload = json.dumps(payload).encode()
    with tempfile.TemporaryDirectory(prefix="memory-router-doctor-") as tmp:
        log = os.path.join(tmp, "hook.log")
        env = dict(os.environ, CLAUDE_PROJECT_DIR=project_dir, MEMORY_ROUTER_LOG=log)
        started = time.perf_counter()
        try:
            proc = subprocess.run(command, shell=True, input=payload, capture_output=True, timeout=timeout,
                                  cwd=project_dir if os.path.isdir(project_dir) else None, env=env)
        except subprocess.TimeoutExpired:
            return {"ok": False, "message": f"timed out after {timeout} s (Claude Code would discard its context)",
                    "seconds": timeout}
        seconds = round(time.perf_counter() - started, 3)
        ok, message = judge_hook_output(proc.returncode, proc.stdout, proc.stderr, event)
        context = None
        if ok and proc.stdout.strip():
            context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        try:
            with open_regular(log, encoding="utf-8", errors="replace") as handle:
                logged = handle.read().strip()
        except OSError:
            logged = ""
    if ok and logged:
        ok = False
        message += "; but it failed open: " + logged.splitlines()[-1][:300]
    return {"ok": ok, "message": message, "seconds": seconds, "exit_code": proc.returncode, "context": context}
