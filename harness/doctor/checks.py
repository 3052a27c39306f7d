"""The doctor's checks (pure reading, no argv): where the router hook is wired in the project,
project-local and user settings.json, whether each hook command runs and routes, the cluster
file it will read, disableAllHooks and CLAUDE_CONFIG_DIR, and MEMORY.md against Claude Code's
load limit. ``harness.doctor.cli`` prints them."""

import json
import os
import subprocess
import tempfile
import time

from harness.install import hookcommand
from harness.install import settings as inst
from harness.project import project_config, read_memory_index, resolve_memory_dir
from harness.install.settingsfile import read_settings
from router.errors import InputError
from router.safeio import open_regular

DOCTOR_TIMEOUT_CAP = 30


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


def scan_settings(project_dir):
    """Every settings file Claude Code would read for ``project_dir``: parsed, with our entries."""
    found = []
    for label, path in inst.settings_locations(project_dir):
        item = {"label": label, "path": path, "exists": os.path.lexists(path), "error": None,
                "router": [], "sentinel": [], "session": [],
                "disable_all_hooks": False}
        if item["exists"]:
            try:
                _snap, settings = read_settings(path)
            except InputError as err:
                item["error"] = str(err)
            else:
                item["router"] = inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook)
                item["sentinel"] = inst.find_entries(settings, hookcommand.SENTINEL_MARK)
                item["session"] = inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_session_start,
                                                    event=inst.SESSION_EVENT)
                item["disable_all_hooks"] = inst.disable_all_hooks(settings)
        found.append(item)
    return found


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


def _check(name, status, message, **details):
    return {"name": name, "status": status, "message": message, **details}


def doctor_report(project_dir, memory_dir=None, run_commands=True):
    """Every doctor check for ``project_dir``, as a list of dicts with a ``status`` of
    ``pass``, ``fail``, ``warn`` or ``info``."""
    from canaries.memoryindex import memory_index_facts
    from harness.canary import checks as cl
    from router import config as config_mod
    from router.clusterfile import load_cluster_file
    from router.errors import MemoryRouterError

    checks = []
    locations = scan_settings(project_dir)
    for item in locations:
        if item["error"]:
            checks.append(_check("settings readable", "fail", f"{item['label']} settings: {item['error']}",
                                 path=item["path"]))
    entries = [(item["label"], item["path"], e) for item in locations for e in item["router"]]
    hooks = [{"location": label, "settings": path, "where": e.where, "command": e.command, "timeout": e.timeout,
              "added_by_install": e.marked} for label, path, e in entries]
    if entries:
        checks.append(_check("hook installed", "pass",
                             "; ".join(f"{h['location']}: {h['settings']} {h['where']}" for h in hooks), hooks=hooks))
    else:
        checks.append(_check("hook installed", "fail",
                             "no memory-router hook in " + ", ".join(i["path"] for i in locations),
                             fix="memory-router install --project DIR (or --user)", hooks=[]))
    distinct = sorted({e.command for _l, _p, e in entries})
    if len(distinct) > 1:
        checks.append(_check("one hook", "fail", f"{len(distinct)} different router hook commands are wired; "
                             "Claude Code runs them all, so each prompt gets the injection more than once",
                             commands=distinct))
    for label, path, entry in entries:
        if entry.timeout is None:
            checks.append(_check("hook timeout", "warn", f"{label}: {entry.where} has no timeout (Claude Code's "
                                 "UserPromptSubmit default is 30 s)", settings=path))

    sessions = [(item["label"], item["path"], e) for item in locations for e in item["session"]]
    session_commands = sorted({e.command for _l, _p, e in sessions})
    if sessions:
        checks.append(_check("session reset hook", "pass", "SessionStart: " + "; ".join(
            f"{label}: {path} {e.where}" for label, path, e in sessions), commands=session_commands))
    elif entries:
        checks.append(_check("session reset hook", "warn", "no SessionStart hook runs memory-router session-start: "
                             "after /compact the router notices the compaction only from the transcript (and sends "
                             "a fact again only then)", fix="memory-router install again (it adds the hook)"))

    sentinels = [(item["label"], e) for item in locations for e in item["sentinel"]]
    if sentinels:
        checks.append(_check("sentinel hook", "info", "the one-shot spec \u00a73 sentinel is wired ("
                             + ", ".join(f"{label} {e.where}" for label, e in sentinels)
                             + "); remove it with memory-router sentinel uninstall once checked"))

    disabled = [f"{i['label']} ({i['path']})" for i in locations if i["disable_all_hooks"]]
    checks.append(_check("hooks enabled", "fail" if disabled else "pass",
                         ("disableAllHooks is true in " + ", ".join(disabled)) if disabled
                         else "disableAllHooks is not set in any settings file read (managed policy not read)"))

    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        default_user = os.path.join(os.path.expanduser("~"), ".claude", inst.SETTINGS_NAME)
        message = (f"CLAUDE_CONFIG_DIR={config_dir}: user settings are {inst.user_settings_path()}, and transcripts "
                   "and memory live under it, for a Claude Code started with this environment")
        status = "info"
        if os.path.abspath(default_user) != os.path.abspath(inst.user_settings_path()) and os.path.isfile(default_user):
            try:
                _snap, other = read_settings(default_user)
                if inst.find_entries(other, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook):
                    status = "warn"
                    message += f"; the hook in {default_user} is ignored by such a session"
            except InputError:
                pass
        checks.append(_check("CLAUDE_CONFIG_DIR", status, message))
    else:
        checks.append(_check("CLAUDE_CONFIG_DIR", "info", f"not set: user settings are {inst.user_settings_path()} "
                             "(a Claude Code started with CLAUDE_CONFIG_DIR set reads another directory)"))

    # The cluster file, resolved as the (first) hook will: its --clusters/--config, then the
    # environment, the config file and brain/ under the project directory.
    explicit = hookcommand.command_option(distinct[0], "clusters") if distinct else None
    config_file = hookcommand.command_option(distinct[0], "config") if distinct else None
    config = None
    try:
        config = project_config(project_dir, config_file)
    except MemoryRouterError as err:
        checks.append(_check("config", "fail", str(err)))
    if config:
        checks.append(_check("config", "info", f"config file: {config.get('source')}"))
    cluster_path = config_mod.resolve_cluster_path(explicit, config, [project_dir])
    index = None
    how = ("--clusters in the hook command" if explicit else "$MEMORY_ROUTER_CLUSTERS" if os.environ.get(
        "MEMORY_ROUTER_CLUSTERS") else "the config file" if config and config.get("clusters") else "brain/ under the project")
    if cluster_path is None:
        checks.append(_check("cluster file", "fail", "the hook finds no cluster file (tried --clusters, "
                             "$MEMORY_ROUTER_CLUSTERS, the config, brain/memory-layer1-clusters.md|.tsv under "
                             f"{project_dir}), so it will inject nothing", cluster_file=None,
                             fix="memory-router install --clusters FILE, or set clusters in memory-router.toml"))
    else:
        try:
            index = load_cluster_file(cluster_path)
        except MemoryRouterError as err:
            checks.append(_check("cluster file", "fail", str(err), cluster_file=cluster_path))
        else:
            checks.append(_check("cluster file", "pass", f"{cluster_path} (from {how}): {len(index)} clusters, "
                                 f"{len(index.members)} members", cluster_file=os.path.abspath(cluster_path)))
    # One routing table for every check that routes: a large store's table takes seconds to build.
    table = None
    if index is not None:
        from router.provider import build_table

        table = build_table(index)
    checks.append(_provider_check(config, table))
    if index is not None and config and config.get("learning"):
        checks.append(_learned_check(cluster_path))

    if run_commands:
        for command in distinct:
            timeout = min(next((e.timeout for _l, _p, e in entries if e.command == command
                                and isinstance(e.timeout, (int, float)) and e.timeout > 0), 30), DOCTOR_TIMEOUT_CAP)
            result = run_hook_command(command, project_dir, timeout)
            checks.append(_check("hook runs", "pass" if result["ok"] else "fail", result["message"],
                                 command=command, seconds=result.get("seconds")))
            if result["ok"] and table is not None and command == distinct[0]:
                probe = _probe_prompt(index, table, config)
                checks.append(_routing_probe(command, project_dir, timeout, probe, cluster_path))
                if session_commands:
                    checks.append(_session_probe(command, session_commands[0], project_dir, timeout, probe))

    from harness.doctor.mcp import doctor_checks as mcp_doctor_checks

    checks.extend(mcp_doctor_checks(project_dir, run=run_commands))

    directory, how = resolve_memory_dir(memory_dir, config, project_dir)
    path, text = read_memory_index(directory)
    if text is None:
        checks.append(_check("MEMORY.md size", "warn", f"no MEMORY.md at {path} ({how})", memory_md=path))
    else:
        facts = memory_index_facts(text, "")
        size = (f"{facts['lines']} lines, {facts['bytes']} bytes, against Claude Code's load limit of "
                "200 lines / 25,000 characters (whole lines)")
        ok = cl.within_load_limit(facts)
        checks.append(_check("MEMORY.md size", "pass" if ok else "fail",
                             f"{path} ({how}): {size}" + ("" if ok else f"; only the first {facts['loaded_lines']} lines are loaded, "
                                                              "the rest is never seen"),
                             memory_md=path, lines=facts["lines"], bytes=facts["bytes"], slim=facts["slim"],
                             loaded_lines=facts["loaded_lines"]))
    from harness.install import gate as gate_install

    checks.extend(gate_install.doctor_checks(project_dir, run_commands))
    return checks


def _routing_probe(command, project_dir, timeout, probe, cluster_path):
    """Does the installed hook route as ``memory-router route`` does on the cluster file doctor
    found? Asked with a prompt made of one cluster's tags, the two must inject the same text;
    otherwise the hook reads another cluster file or config than the one reported above."""
    if probe is None:
        return _check("hook routes", "warn", "no cluster's tags alone clear the score floor, so the routing probe "
                      "was skipped")
    prompt, decision = probe
    result = run_hook_command(command, project_dir, timeout, prompt=prompt)
    if result["ok"] and result["context"] == decision["additional_context"]:
        return _check("hook routes", "pass", f"asked {prompt!r}, the hook injected {', '.join(decision['routed'])} "
                      f"exactly as `memory-router route` does on {cluster_path}")
    got = "nothing" if not result.get("context") else repr(result["context"].splitlines()[0])
    return _check("hook routes", "fail", f"asked {prompt!r}, the hook injected {got}, but {cluster_path} routes it "
                  f"to {', '.join(decision['routed'])}: the hook reads another cluster file or config"
                  + ("" if result["ok"] else f" ({result['message']})"), prompt=prompt)


def _provider_check(config, table):
    """Which provider routes, whether it loads, and a custom one's import cost (issue 14)."""
    from harness.doctor.provider import check_provider
    from router import config as config_mod

    report = check_provider(config_mod.settings_of(config), table)
    kind = "built-in" if report["builtin"] else "custom"
    message = f"{report['provider']} ({kind})"
    if report["import_ms"] is not None:
        message += f", imports in {report['import_ms']:.0f} ms of its {report['budget_ms']} ms budget"
    if report["problem"]:
        message += f": {report['problem']}"
    status = {"ok": "pass", "warn": "warn"}.get(report["status"], "fail")
    return _check("provider", status, message, provider=report["provider"], import_ms=report["import_ms"])


def _learned_check(cluster_path):
    """With learning on, the learned-terms file the hook reads beside the cluster file."""
    from router.errors import InputError
    from router.config import learned_path
    from router.learned import read_learned

    path = learned_path(cluster_path)
    try:
        rows = read_learned(path)
    except InputError as err:
        return _check("learned terms", "fail", f"{err} (the hook routes without learned terms until it is fixed)",
                      learned_file=path)
    if not rows:
        return _check("learned terms", "pass", f"learning is on; no learned terms yet ({path})", learned_file=path,
                      rows=0)
    return _check("learned terms", "pass", f"{len(rows)} learned terms in {path}, read by the hook",
                  learned_file=path, rows=len(rows))


def _probe_prompt(index, table, config):
    """``(prompt, decision)``: a prompt made of one cluster's tags that fires, with what a fresh
    session is sent for it (the routing decision after the session stage), or ``None``."""
    from router import config as config_mod
    from router.session import route_fresh

    settings = config_mod.settings_of(config)
    for cluster in sorted(index.clusters, key=lambda c: -len(c.tags)):
        prompt = " ".join(cluster.tags)
        decision = route_fresh(prompt, table, settings, log_as="doctor")
        if decision["additional_context"] is not None:
            return prompt, decision
    return None


def _session_probe(command, session_command, project_dir, timeout, probe):
    """Does the SessionStart command do its part? In one throwaway session: the probe prompt
    injects; the same prompt again injects nothing (the session holds it); the session command
    with source ``compact`` sends the held lines again (the repeat relied on them, and a
    compaction drops them); the prompt again injects nothing (the session holds what was sent
    again); the command with source ``clear``; the prompt injects."""
    import uuid

    from router.session import reset_session

    if probe is None:
        return _check("session reset", "warn", "no probe prompt fires, so the session probe was skipped")
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
        return _check("session reset", "fail", "in a throwaway session (ask: sent; again: nothing; SessionStart "
                      "compact: sent again; ask: nothing; SessionStart clear; ask: sent): " + "; ".join(failed),
                      command=session_command)
    return _check("session reset", "pass", f"asked {prompt!r}: sent once, not on the repeat; SessionStart compact "
                  "sent it again and the next ask nothing; after SessionStart clear it was sent again",
                  command=session_command)
