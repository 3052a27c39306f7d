"""The doctor's trial runs: a hook command run as Claude Code runs it (through the shell, in the
project, a payload on stdin), judged by what Claude Code would do with its output; the routing
probe (does the installed hook inject what ``memory-router route`` says?) and the session probe
(does the SessionStart command make the router send again?). ``check`` is the shape of every
doctor finding."""

import json
import os
import subprocess
import tempfile
import time

from harness.install import settings as inst
from router.safeio import open_regular


def check(name, status, message, **details):
    """One doctor finding: ``status`` is ``pass``, ``fail``, ``warn`` or ``info``."""
    return {"name": name, "status": status, "message": message, **details}


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


def routing_probe(command, project_dir, timeout, probe, cluster_path):
    """Does the installed hook route as ``memory-router route`` does on the cluster file doctor
    found? Asked with a prompt made of one cluster's tags, the two must inject the same text;
    otherwise the hook reads another cluster file or config than the one reported above."""
    if probe is None:
        return check("hook routes", "warn", "no cluster's tags alone clear the score floor, so the routing probe "
                      "was skipped")
    prompt, decision = probe
    result = run_hook_command(command, project_dir, timeout, prompt=prompt)
    if result["ok"] and result["context"] == decision["additional_context"]:
        return check("hook routes", "pass", f"asked {prompt!r}, the hook injected {', '.join(decision['routed'])} "
                      f"exactly as `memory-router route` does on {cluster_path}", prompt=prompt)
    got = "nothing" if not result.get("context") else repr(result["context"].splitlines()[0])
    return check("hook routes", "fail", f"asked {prompt!r}, the hook injected {got}, but {cluster_path} routes it "
                  f"to {', '.join(decision['routed'])}: the hook reads another cluster file or config"
                  + ("" if result["ok"] else f" ({result['message']})"), prompt=prompt)


def probe_prompt(index, table, config):
    """``(prompt, decision)``: a prompt made of one cluster's tags that fires, with what a fresh
    session is sent for it (the routing decision after the session stage), or ``None``."""
    from router import config as config_mod
    from router.hooks.session import route_fresh

    settings = config_mod.settings_of(config)
    for cluster in sorted(index.clusters, key=lambda c: -len(c.tags)):
        prompt = " ".join(cluster.tags)
        decision = route_fresh(prompt, table, settings, log_as="doctor")
        if decision["additional_context"] is not None:
            return prompt, decision
    return None


def session_probe(command, session_command, project_dir, timeout, probe):
    """Does the SessionStart command do its part? In one throwaway session: the probe prompt
    injects; the same prompt again injects nothing (the session holds it); the session command
    with source ``compact`` sends the held lines again (the repeat relied on them, and a
    compaction drops them); the prompt again injects nothing (the session holds what was sent
    again); the command with source ``clear``; the prompt injects."""
    import uuid

    from router.hooks.session import reset_session

    if probe is None:
        return check("session reset", "warn", "no probe prompt fires, so the session probe was skipped")
    prompt = probe[0]
    session_id = f"memory-router-doctor-{uuid.uuid4()}"
    payload = probe_payload(project_dir, prompt, session_id)
    steps = []
    expected = {"first": True, "repeat": False, "compact": True, "after compact": False, "clear": None,
                "after clear": True}
    try:
        for step, wanted in expected.items():
            if step in ("compact", "clear"):
                start = {"session_id": session_id, "transcript_path": "", "cwd": payload["cwd"],
                         "hook_event_name": inst.SESSION_EVENT, "source": step}
                result = run_hook_command(session_command, project_dir, timeout, payload=start,
                                          event=inst.SESSION_EVENT)
            else:
                result = run_hook_command(command, project_dir, timeout, payload=payload)
            sent = bool(result.get("context"))
            ok = result["ok"] and (wanted is None or sent == wanted)
            steps.append((step, ok, result["message"] if not result["ok"] else ("sent" if sent else "sent nothing")))
    finally:
        reset_session(session_id)
    failed = [f"{step}: {message}" for step, ok, message in steps if not ok]
    if failed:
        return check("session reset", "fail", "in a throwaway session (ask: sent; again: nothing; SessionStart "
                      "compact: sent again; ask: nothing; SessionStart clear; ask: sent): " + "; ".join(failed),
                      command=session_command)
    return check("session reset", "pass", f"asked {prompt!r}: sent once, not on the repeat; SessionStart compact "
                  "sent it again and the next ask nothing; after SessionStart clear it was sent again",
                  command=session_command)
