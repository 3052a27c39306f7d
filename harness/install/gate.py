"""``memory-router install --gate`` / ``uninstall --gate`` / doctor's gate checks: the citation gate
wired as a ``PreToolUse`` hook with matcher ``Write|Edit|MultiEdit``, in the same settings.json as
the router's ``UserPromptSubmit`` entry.

The transforms are pure (settings dict in, ``harness.install.settings.Change`` out); reading, backing up,
writing and the install record go through ``harness.install.settingsfile.apply_add``/``apply_remove``
like the router's entry, under the role ``gate``, so uninstall gives back the exact bytes the file
had before ``install --gate`` changed it. Our handler is marked by a trailing
``# memory-router gate install`` shell comment, as the router's is (see ``harness.install.settings``).
"""

import json
import os
import re
import subprocess
import tempfile

from harness.install import hookcommand, settingsfile
from harness.install import settings as inst
from router.errors import RefusedError

GATE_ROLE = "gate"
GATE_MARK = "# memory-router gate install"
GATE_EVENT = "PreToolUse"
# NotebookEdit is read by the gate too, but the matcher the issue asks for is the write trio;
# MultiEdit is absent from Claude Code 2.1.328 and kept for older clients.
GATE_MATCHER = "Write|Edit|MultiEdit"
GATE_TIMEOUT_SECONDS = 10
_EXE_RE = re.compile(r"(^|[\\/])memory-router(\.exe)?$", re.I)


def gate_hook_command(exe_argv, clusters=None, config=None, windows=None):
    """``exe_argv`` + ``gate`` + options, then our mark."""
    words = [hookcommand.quote_for_shell(w, windows) for w in exe_argv] + ["gate"]
    if clusters:
        words += ["--clusters", hookcommand.quote_for_shell(os.path.abspath(clusters), windows)]
    if config:
        words += ["--config", hookcommand.quote_for_shell(os.path.abspath(config), windows)]
    return " ".join(words) + " " + GATE_MARK


def runs_gate_hook(command):
    """True when ``command`` runs ``memory-router gate`` (or ``python -m router gate``)."""
    words = hookcommand.command_words(command) if isinstance(command, str) else None
    for i, word in enumerate(words or []):
        if _EXE_RE.search(word) and words[i + 1:i + 2] == ["gate"]:
            return True
        if word == "-m" and words[i + 1:i + 3] == ["router", "gate"]:
            return True
    return False


def find_gate_entries(settings, mark=GATE_MARK, also=None):
    """``[(group, index, command, timeout, matcher, marked)]`` of PreToolUse handlers carrying
    ``mark`` (plus unmarked ones ``also(command)`` accepts)."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    groups = hooks.get(GATE_EVENT) if isinstance(hooks, dict) else None
    for gi, group in enumerate(groups if isinstance(groups, list) else []):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for hi, item in enumerate(handlers if isinstance(handlers, list) else []):
            command = item.get("command") if isinstance(item, dict) else None
            if not isinstance(command, str):
                continue
            marked = hookcommand.has_mark(command, mark)
            if marked or (also is not None and also(command)):
                found.append((gi, hi, command, item.get("timeout"), group.get("matcher"), marked))
    return found


def where(entry):
    return f"hooks.{GATE_EVENT}[{entry[0]}].hooks[{entry[1]}]"


def add_gate_entry(settings, command, mark=GATE_MARK, timeout=GATE_TIMEOUT_SECONDS, conflicts=None):
    """``settings`` with our gate handler present once, in its own ``Write|Edit|MultiEdit`` group at
    the end of ``hooks.PreToolUse`` (``added``), updated in place (``updated``) or ``unchanged``.
    A hand-written ``memory-router gate`` handler is refused: a second gate would refuse twice."""
    ours = [e for e in find_gate_entries(settings, mark)]
    others = [e for e in find_gate_entries(settings, mark, also=runs_gate_hook) if not e[5]]
    if others:
        raise RefusedError(f"a memory-router gate hook that install did not add is already wired "
                           f"({', '.join(where(e) + ': ' + e[2] for e in others)}); nothing was written",
                           fix="remove that entry by hand, then run memory-router install --gate again")
    if len(ours) == 1 and ours[0][2] == command and ours[0][3] == timeout and ours[0][4] == GATE_MATCHER:
        return inst.Change(settings, "unchanged", where(ours[0]))
    result = json.loads(json.dumps(settings))
    if ours:
        groups = result["hooks"][GATE_EVENT]
        first = ours[0]
        groups[first[0]]["hooks"][first[1]] = hookcommand.handler(command, timeout)
        if len(groups[first[0]]["hooks"]) == 1:
            groups[first[0]]["matcher"] = GATE_MATCHER
        for extra in sorted(ours[1:], reverse=True):
            del groups[extra[0]]["hooks"][extra[1]]
        _drop_emptied(result, {e[0] for e in ours[1:]})
        return inst.Change(result, "updated", where(first))
    groups = result.setdefault("hooks", {}).setdefault(GATE_EVENT, [])
    groups.append({"matcher": GATE_MATCHER, "hooks": [hookcommand.handler(command, timeout)]})
    return inst.Change(result, "added", f"hooks.{GATE_EVENT}[{len(groups) - 1}].hooks[0]")


def remove_gate_entries(settings, mark=GATE_MARK):
    """``settings`` without our gate handlers; a group, the event list and ``hooks`` are dropped
    only when removing ours is what emptied them."""
    ours = find_gate_entries(settings, mark)
    if not ours:
        return inst.Change(settings, "absent")
    result = json.loads(json.dumps(settings))
    groups = result["hooks"][GATE_EVENT]
    for entry in sorted(ours, reverse=True):
        del groups[entry[0]]["hooks"][entry[1]]
    _drop_emptied(result, {e[0] for e in ours})
    return inst.Change(result, "removed", ", ".join(where(e) for e in ours))


def _drop_emptied(settings, touched_groups):
    groups = settings["hooks"][GATE_EVENT]
    for gi in sorted(touched_groups, reverse=True):
        if gi < len(groups) and not groups[gi].get("hooks"):
            del groups[gi]
    if not groups:
        del settings["hooks"][GATE_EVENT]
        if not settings["hooks"]:
            del settings["hooks"]


# --------------------------------------------------------------------------- install / uninstall


def add_arguments(install_parser, uninstall_parser):
    install_parser.add_argument(
        "--gate", action="store_true",
        help=f"also wire the citation gate: a PreToolUse hook (matcher {GATE_MATCHER}, {GATE_TIMEOUT_SECONDS} s "
             "timeout) refusing writes that cite decision ids or memories that do not exist "
             "(docs/citation-gate.md)")
    uninstall_parser.add_argument("--gate", action="store_true",
                                  help="also remove the citation gate that install --gate added")


def check_installable(settings_path):
    """Refuse ``install --gate`` before anything is written when a hand-written gate is wired."""
    _snap, settings = settingsfile.read_settings(settings_path)
    add_gate_entry(settings, "")


def install_gate(args, settings_path):
    """Wire the gate beside the router (called by ``cmd_install`` after the router's entry)."""
    command = gate_hook_command(settingsfile.router_executable(), clusters=args.clusters, config=args.config)
    action, detail, backup = settingsfile.apply_add(settings_path, GATE_ROLE, GATE_MARK, command,
                                                   dry_run=args.dry_run, add=add_gate_entry)
    if action != "dry-run":
        settingsfile.report_write(action, detail, backup, settings_path, "the citation gate")
        if action in ("added", "updated"):
            print(f"gate command: {command}")
    return action


def uninstall_gate(args, settings_path):
    """Remove the gate (called by ``cmd_uninstall`` before the router's entry, the reverse of
    install, so each record's byte-exact restore applies)."""
    action, backup = settingsfile.apply_remove(settings_path, GATE_ROLE, GATE_MARK, dry_run=args.dry_run,
                                              remove=remove_gate_entries)
    if action != "dry-run":
        settingsfile.report_write(action, "", backup, settings_path, "the citation gate")
    return action


def note_if_left(settings_path):
    """A line for ``uninstall`` without ``--gate`` when the gate is still wired, else ``None``."""
    if not os.path.isfile(settings_path):
        return None
    _snap, settings = settingsfile.read_settings(settings_path)
    if find_gate_entries(settings):
        return "note: the citation gate is still installed; remove it with memory-router uninstall --gate"
    return None


# --------------------------------------------------------------------------- doctor


def _check(name, status, message, **details):
    return {"name": name, "status": status, "message": message, **details}


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
        with open(ledger, "w", encoding="utf-8") as handle:
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


def doctor_checks(project_dir, run_commands=True):
    """Doctor's checks for the citation gate: where it is wired, its matcher, and a trial run."""
    entries = []
    for label, path in inst.settings_locations(project_dir):
        if not os.path.isfile(path):
            continue
        try:
            _snap, settings = settingsfile.read_settings(path)
        except Exception:  # noqa: BLE001 - the router's checks already report an unreadable file
            continue
        entries += [(label, path, e) for e in find_gate_entries(settings, also=runs_gate_hook)]
    if not entries:
        return [_check("citation gate", "info", "not installed (optional): memory-router install --gate")]
    checks = [_check("citation gate", "pass", "; ".join(f"{label}: {path} {where(e)} (matcher {e[4]!r})"
                                                       for label, path, e in entries))]
    for label, path, entry in entries:
        covered = set(str(entry[4] or "").split("|"))
        if entry[4] not in (None, "", "*") and not {"Write", "Edit"} <= covered:
            checks.append(_check("citation gate matcher", "warn", f"{label}: {where(entry)} matcher {entry[4]!r} "
                                 "does not cover both Write and Edit, so some writes are never checked",
                                 settings=path))
    if run_commands:
        for command in sorted({e[2] for _l, _p, e in entries}):
            ok, message = probe_refusal(command, project_dir, GATE_TIMEOUT_SECONDS * 3)
            status = "info" if ok is None else "pass" if ok else "fail"
            checks.append(_check("citation gate refuses", status, message, command=command))
    return checks
