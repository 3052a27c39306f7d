"""Doctor's checks of the citation gate (``memory-router install --gate``): where it is wired, its
matcher, and a trial run in a scratch project whose ledger holds one entry: citing it must pass,
citing an absent id must be denied."""

import json
import os
import subprocess
import tempfile

from harness import project as proj
from harness.doctor.probes import check
from harness.install import hookcommand
from harness.install.gate import GATE_TIMEOUT_SECONDS, find_gate_entries, runs_gate_hook, where
from harness.install.settingsfile import read_settings
from router.safeio import open_regular


def probe_refusal(command, project_dir, timeout):
    """Run ``command`` as Claude Code would on two Write payloads in a scratch project whose
    ledger holds one entry: citing it must pass silently, citing an absent id must be denied.
    Returns ``(ok, message)``."""
    from router import config as config_mod
    from router.configfile import load_config

    config = load_config(hookcommand.command_option(command, "config"), dirs=[project_dir])
    settings = config_mod.citation_settings_of(config)
    if settings["citation_id_pattern"] != config_mod.CITATION_DEFAULTS["citation_id_pattern"]:
        return None, "refusal probe skipped: the config sets its own citation_id_pattern"
    with tempfile.TemporaryDirectory(prefix="memory-router-gate-doctor-") as scratch:
        ledger = os.path.join(scratch, settings["citation_ledgers"][0])
        os.makedirs(os.path.dirname(ledger), exist_ok=True)
        with open_regular(ledger, "w", encoding="utf-8") as handle:
            handle.write("## D-001: memory-router doctor probe\n")
        outputs = []
        for cited in ("D-001", "D-002"):
            payload = {"session_id": "doctor", "cwd": scratch, "hook_event_name": "PreToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": os.path.join(scratch, "probe.md"), "content": f"per {cited}"},
                       "tool_use_id": "toolu_doctor"}
            try:
                proc = subprocess.run(command, shell=True, input=json.dumps(payload).encode(), capture_output=True,
                                      timeout=timeout, cwd=project_dir if os.path.isdir(project_dir) else None,
                                      env=dict(os.environ, CLAUDE_PROJECT_DIR=project_dir))
            except subprocess.TimeoutExpired:
                return False, f"timed out after {timeout} s"
            if proc.returncode != 0:
                return False, f"exited {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:200]}"
            outputs.append(proc.stdout.strip())
    if outputs[0]:
        return False, f"citing the probe ledger's own D-001 printed {outputs[0][:200]!r}; expected nothing"
    try:
        decision = json.loads(outputs[1])["hookSpecificOutput"]["permissionDecision"]
    except (ValueError, KeyError, TypeError):
        decision = None
    if decision != "deny":
        return False, f"citing an absent D-002 was not denied (printed {outputs[1][:200]!r})"
    return True, "a Write citing a ledger id passed and one citing an absent id was denied"


def doctor_checks(project_dir, run_commands=True, plugin_gates=()):
    """Doctor's checks for the citation gate: where it is wired (a settings file, or an enabled
    plugin: ``plugin_gates``, ``[(where, shell command)]``), its matcher, and a trial run."""
    entries = []
    for label, path in proj.settings_locations(project_dir):
        if not os.path.isfile(path):
            continue
        try:
            _snap, settings = read_settings(path)
        except Exception:  # noqa: BLE001 - the router's checks already report an unreadable file
            continue
        entries += [(label, path, e) for e in find_gate_entries(settings, also=runs_gate_hook)]
    if not entries and plugin_gates:
        checks = [check("citation gate", "pass", "; ".join(f"PreToolUse from the {where}" for where, _c in plugin_gates))]
        if run_commands:
            for _where, command in plugin_gates:
                ok, message = probe_refusal(command, project_dir, GATE_TIMEOUT_SECONDS * 3)
                checks.append(check("citation gate refuses", "info" if ok is None else "pass" if ok else "fail",
                                    message, command=command))
        return checks
    if not entries:
        return [check("citation gate", "info", "not installed (optional): memory-router install --gate")]
    checks = [check("citation gate", "pass", "; ".join(f"{label}: {path} {where(e)} (matcher {e[4]!r})"
                                                       for label, path, e in entries))]
    for label, path, entry in entries:
        covered = set(str(entry[4] or "").split("|"))
        if entry[4] not in (None, "", "*") and not {"Write", "Edit"} <= covered:
            checks.append(check("citation gate matcher", "warn", f"{label}: {where(entry)} matcher {entry[4]!r} "
                                 "does not cover both Write and Edit, so some writes are never checked",
                                 settings=path))
    if run_commands:
        for command in sorted({e[2] for _l, _p, e in entries}):
            ok, message = probe_refusal(command, project_dir, GATE_TIMEOUT_SECONDS * 3)
            status = "info" if ok is None else "pass" if ok else "fail"
            checks.append(check("citation gate refuses", status, message, command=command))
    return checks
