"""``memory-router install | uninstall | doctor | sentinel``: wiring the hook into Claude Code's
settings.json, checking that it works, and the spec §3 sentinel. The transforms are pure
(``harness.install``); this module reads, backs up and writes. (``memory-router checklist`` is in
``harness.checklist_cli``.)

Every write to a settings.json: parse first (invalid JSON is refused, exit 2, file untouched),
back up the current bytes to ``<dir>/memory-router/backups/`` (``harness.fileops.write_archive``),
refuse if the file changed since it was read, write atomically, and keep a record of what was
written in ``<dir>/memory-router/<role>.json`` so uninstall can give back the exact original bytes.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from harness import install as inst
from router.errors import InputError, RefusedError

ROUTER_ROLE = "router"
SENTINEL_ROLE = "sentinel"
BACKUP_DIRNAME = "backups"
DOCTOR_TIMEOUT_CAP = 30


# --------------------------------------------------------------------------- locations


def _project_dir(args):
    return os.path.abspath(os.path.expanduser(getattr(args, "project", None) or os.getcwd()))


def _target_settings(args):
    if getattr(args, "user", False):
        return inst.user_settings_path(), "user"
    project = _project_dir(args)
    if not os.path.isdir(project):
        raise InputError("project directory does not exist", path=project,
                         fix="pass --project with an existing directory (or --user)")
    return inst.project_settings_path(project), "project"


def router_executable():
    """The argv that runs memory-router from anywhere, without an activated venv.

    The console script beside this interpreter (a venv's bin/ or Scripts\\), else the script this
    process was started as, else one on PATH, else this interpreter with ``-P -m router`` (``-P``:
    a project's own ``router/`` directory must not shadow ours). ``sys.executable`` is kept as
    is, never resolved: a venv's python is a symlink whose target has no access to the venv."""
    names = ("memory-router.exe", "memory-router") if os.name == "nt" else ("memory-router",)
    bindir = os.path.dirname(os.path.abspath(sys.executable))
    for name in names:
        candidate = os.path.join(bindir, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return [candidate]
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and os.path.basename(argv0).lower().startswith("memory-router") and os.path.isfile(argv0):
        return [os.path.abspath(argv0)]
    found = shutil.which("memory-router")
    if found:
        return [os.path.abspath(found)]
    return [os.path.abspath(sys.executable), "-P", "-m", "router"]


# --------------------------------------------------------------------------- reading and writing settings


def _read_settings(path):
    """``(Snapshot, settings dict)``; a missing file reads as ``{}``."""
    from harness.fileops import Snapshot

    try:
        snap = Snapshot(path)
    except IsADirectoryError:
        raise InputError("is a directory, not a settings file", path=path) from None
    except OSError as err:
        raise InputError(f"cannot read settings file: {err.strerror or err}", path=path) from None
    settings = inst.parse_settings(snap.data, path) if snap.exists else {}
    return snap, settings


def _record_path(settings_path, role):
    return os.path.join(inst.state_dir_for(settings_path), f"{role}.json")


def _read_record(settings_path, role):
    path = _record_path(settings_path, role)
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a damaged record only costs the byte-exact restore; uninstall still works
    if not isinstance(record, dict) or record.get("settings") != os.path.abspath(settings_path):
        return None
    return record


def _write_record(settings_path, role, record):
    from harness.fileops import atomic_write

    path = _record_path(settings_path, role)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write(path, json.dumps(record, indent=2) + "\n")


def _backup_dir(settings_path):
    return os.path.join(inst.state_dir_for(settings_path), BACKUP_DIRNAME)


def _backup_stem(settings_path):
    return os.path.splitext(os.path.basename(settings_path))[0]


def _backups(settings_path):
    """``[(path, bytes)]`` of this settings file's backups, newest first."""
    directory = _backup_dir(settings_path)
    stem = _backup_stem(settings_path) + "-"
    try:
        names = [n for n in os.listdir(directory) if n.startswith(stem) and n.endswith(".json")]
    except OSError:
        return []
    out = []
    for name in sorted(names, key=lambda n: (os.path.getmtime(os.path.join(directory, n)), n), reverse=True):
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as handle:
                out.append((path, handle.read()))
        except OSError:
            continue
    return out


def _backup(settings_path, data):
    from harness.fileops import write_archive

    directory = _backup_dir(settings_path)
    try:
        os.makedirs(directory, exist_ok=True)
        return write_archive(directory, _backup_stem(settings_path), ".json", data)
    except RefusedError:
        raise
    except OSError as err:
        raise RefusedError(f"cannot back up {settings_path} into {directory}: {err.strerror or err}; "
                           "nothing was written", fix="make that directory writable") from None


def _replace(snap, data):
    """Atomically replace the settings file (or create it), refusing if it changed since read.
    Through a symlink (settings.json kept in a dotfiles repository) the file it points to is
    written and the link kept: ``atomic_write`` does that for every writer."""
    snap.replace(data)


def _utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def apply_add(settings_path, role, mark, command, dry_run=False, conflicts=None, extra=None, out=None):
    """Add (or update) our handler in ``settings_path``. Returns ``(action, detail, backup)``."""
    out = out or sys.stdout
    snap, settings = _read_settings(settings_path)
    change = inst.add_entry(settings, command, mark, conflicts=conflicts)
    if change.action == "conflict":
        raise RefusedError(f"{settings_path} already runs the router from a hook memory-router did not add "
                           f"({change.detail}); a second one would inject twice per prompt. Nothing was written",
                           fix="remove that entry by hand, then run memory-router install again")
    if change.action == "unchanged":
        return "unchanged", change.detail, None
    if snap.exists:
        new = inst.render_change(snap.data, settings, change.settings)
    else:
        new = inst.render_settings(change.settings, inst.JsonStyle())
    if dry_run:
        out.write(inst.unified_diff(snap.data, new, settings_path))
        return "dry-run", change.detail, None
    backup = _backup(settings_path, snap.data) if snap.exists else None
    previous = _read_record(settings_path, role)
    _replace(snap, new)
    original = snap.data if snap.exists else None
    record = inst.new_record(settings_path, role, original, new, backup, command, extra)
    record["installed_at"] = _utc_now()
    if change.action == "updated" and previous and not previous.get("uninstalled_at"):
        from harness.fileops import sha256_bytes

        if previous.get("written_sha256") == sha256_bytes(snap.data):
            # Only our own line changed since our last write: the pre-install original still holds.
            for key in ("original_existed", "original_sha256", "backup"):
                record[key] = previous.get(key)
        else:
            record["backup"] = None  # edited by hand since: restore structurally, never from a stale copy
    _write_record(settings_path, role, record)
    return change.action, change.detail, backup


def apply_remove(settings_path, role, mark, dry_run=False, out=None):
    """Remove our handler. Returns ``(action, backup)``; action as in ``install.plan_uninstall``."""
    out = out or sys.stdout
    snap, settings = _read_settings(settings_path)
    if not snap.exists:
        return "absent", None
    record = _read_record(settings_path, role)
    action, data = inst.plan_uninstall(snap.data, settings, mark, record, _backups(settings_path))
    if action == "absent":
        return action, None
    if dry_run:
        out.write(inst.unified_diff(snap.data, b"" if action == "delete" else data, settings_path))
        if action == "delete":
            out.write("(the file would be deleted: memory-router created it and it is unchanged since)\n")
        return "dry-run", None
    backup = _backup(settings_path, snap.data)
    if action == "delete":
        snap.require_unchanged()
        os.unlink(settings_path)
    else:
        _replace(snap, data)
    if record is not None:
        record["uninstalled_at"] = _utc_now()
        record["uninstall_action"] = action
        record["written_sha256"] = None
        _write_record(settings_path, role, record)
    return action, backup


def _report_write(action, detail, backup, settings_path, what):
    messages = {
        "added": f"installed {what} in {settings_path} ({detail})",
        "updated": f"updated {what} in {settings_path} ({detail})",
        "unchanged": f"{what} already installed in {settings_path} ({detail}); nothing changed",
        "restore": f"removed {what} from {settings_path}: restored, byte for byte, the file as it was before "
                   "memory-router changed it",
        "write": f"removed {what} from {settings_path}; every other key and hook kept",
        "delete": f"removed {what}: deleted {settings_path}, which memory-router had created and nobody changed",
        "absent": f"{what} is not installed in {settings_path}; nothing changed",
    }
    if action in messages:
        print(messages[action])
    if backup:
        print(f"backup of the previous file: {backup}")


# --------------------------------------------------------------------------- install / uninstall


def cmd_install(args):
    settings_path, _level = _target_settings(args)
    for option in ("clusters", "config"):
        value = getattr(args, option, None)
        if value and not os.path.isfile(value):
            raise InputError(f"--{option} file does not exist", path=value, fix="pass an existing file")
    if args.clusters:
        from router.clusterfile import load_cluster_file

        load_cluster_file(args.clusters)  # refuse to wire a hook that would only ever fail open
    command = inst.router_hook_command(router_executable(), clusters=args.clusters, config=args.config)
    action, detail, backup = apply_add(settings_path, ROUTER_ROLE, inst.ROUTER_MARK, command,
                                       dry_run=args.dry_run, conflicts=inst.runs_router_hook)
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    _report_write(action, detail, backup, settings_path, "the memory-router hook")
    if action in ("added", "updated"):
        print(f"command: {command}")
        print("check it with: memory-router doctor" + (f" --project {inst.quote_for_shell(_project_dir(args))}"
                                                      if not args.user else ""))
    return 0


def cmd_uninstall(args):
    settings_path, _level = _target_settings(args)
    action, backup = apply_remove(settings_path, ROUTER_ROLE, inst.ROUTER_MARK, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    _report_write(action, "", backup, settings_path, "the memory-router hook")
    if action == "absent" and os.path.isfile(settings_path):
        _snap, settings = _read_settings(settings_path)
        manual = [e for e in inst.find_entries(settings, inst.ROUTER_MARK, also=inst.runs_router_hook) if not e.marked]
        for entry in manual:
            print(f"note: {entry.where} runs the router but was not added by memory-router install; left as is: "
                  f"{entry.command}")
    return 0


# --------------------------------------------------------------------------- doctor


def settings_locations(project_dir):
    """``[(label, path)]`` in the order Claude Code documents them (§1.1); managed settings and
    plugins are not read."""
    return [
        ("project", inst.project_settings_path(project_dir)),
        ("project local", inst.project_settings_path(project_dir, local=True)),
        ("user", inst.user_settings_path()),
    ]


def scan_settings(project_dir):
    """Every settings file Claude Code would read for ``project_dir``: parsed, with our entries."""
    found = []
    for label, path in settings_locations(project_dir):
        item = {"label": label, "path": path, "exists": os.path.isfile(path), "error": None,
                "router": [], "sentinel": [], "disable_all_hooks": False}
        if item["exists"]:
            try:
                _snap, settings = _read_settings(path)
            except InputError as err:
                item["error"] = str(err)
            else:
                item["router"] = inst.find_entries(settings, inst.ROUTER_MARK, also=inst.runs_router_hook)
                item["sentinel"] = inst.find_entries(settings, inst.SENTINEL_MARK)
                item["disable_all_hooks"] = inst.disable_all_hooks(settings)
        found.append(item)
    return found


def run_hook_command(command, project_dir, timeout, prompt=None):
    """One trial run of a hook command as Claude Code runs it: through the shell, in the project
    directory, with ``CLAUDE_PROJECT_DIR`` set and a payload on stdin (a neutral prompt unless
    ``prompt``). The router's fail-open diagnostics are captured through ``MEMORY_ROUTER_LOG``."""
    payload = inst.probe_payload(project_dir)
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
        ok, message = inst.judge_hook_output(proc.returncode, proc.stdout, proc.stderr)
        context = None
        if ok and proc.stdout.strip():
            context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        try:
            with open(log, encoding="utf-8", errors="replace") as handle:
                logged = handle.read().strip()
        except OSError:
            logged = ""
    if ok and logged:
        ok = False
        message += "; but it failed open: " + logged.splitlines()[-1][:300]
    return {"ok": ok, "message": message, "seconds": seconds, "exit_code": proc.returncode, "context": context}


def _git_root(path):
    current = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def default_memory_dir(project_dir):
    """Claude Code's auto-memory directory for a project (claude-code-formats.md §4.1):
    ``<config dir>/projects/<slug of the git root, else the project dir>/memory``."""
    from transcripts.locate import project_key

    root = _git_root(project_dir) or os.path.abspath(project_dir)
    return os.path.join(inst.claude_config_dir(), "projects", project_key(root), "memory")


def resolve_memory_dir(explicit, config, project_dir):
    """``(directory, how)``: --memory-dir, then the config's memory_dir, then Claude Code's default."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit)), "--memory-dir"
    if config and config.get("memory_dir"):
        return config["memory_dir"], f"memory_dir in {config.get('source')}"
    return default_memory_dir(project_dir), "Claude Code's default location"


def project_config(project_dir, explicit=None):
    from router.cli_commands import load_cli_config

    return load_cli_config(explicit, dirs=[project_dir])


def _read_memory_index(memory_dir):
    path = os.path.join(memory_dir, "MEMORY.md")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return path, None
    except OSError as err:
        raise InputError(f"cannot read MEMORY.md: {err.strerror or err}", path=path) from None
    return path, data.decode("utf-8", errors="replace")


def _check(name, status, message, **details):
    return {"name": name, "status": status, "message": message, **details}


def doctor_report(project_dir, memory_dir=None, run_commands=True):
    """Every doctor check for ``project_dir``, as a list of dicts with a ``status`` of
    ``pass``, ``fail``, ``warn`` or ``info``."""
    from harness import checklist as cl
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
                _snap, other = _read_settings(default_user)
                if inst.find_entries(other, inst.ROUTER_MARK, also=inst.runs_router_hook):
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
    explicit = inst.command_option(distinct[0], "clusters") if distinct else None
    config_file = inst.command_option(distinct[0], "config") if distinct else None
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

    if run_commands:
        for command in distinct:
            timeout = min(next((e.timeout for _l, _p, e in entries if e.command == command
                                and isinstance(e.timeout, (int, float)) and e.timeout > 0), 30), DOCTOR_TIMEOUT_CAP)
            result = run_hook_command(command, project_dir, timeout)
            checks.append(_check("hook runs", "pass" if result["ok"] else "fail", result["message"],
                                 command=command, seconds=result.get("seconds")))
            if result["ok"] and index is not None and command == distinct[0]:
                checks.append(_routing_probe(command, project_dir, timeout, index, config, cluster_path))

    directory, how = resolve_memory_dir(memory_dir, config, project_dir)
    path, text = _read_memory_index(directory)
    if text is None:
        checks.append(_check("MEMORY.md size", "warn", f"no MEMORY.md at {path} ({how})", memory_md=path))
    else:
        facts = cl.memory_index_facts(text, "")
        size = (f"{facts['lines']} lines, {facts['bytes']} bytes, against Claude Code's load limit of "
                "200 lines / 25,000 characters (whole lines)")
        ok = cl.within_load_limit(facts)
        checks.append(_check("MEMORY.md size", "pass" if ok else "fail",
                             f"{path} ({how}): {size}" + ("" if ok else f"; only the first {facts['loaded_lines']} lines are loaded, "
                                                              "the rest is never seen"),
                             memory_md=path, lines=facts["lines"], bytes=facts["bytes"], slim=facts["slim"],
                             loaded_lines=facts["loaded_lines"]))
    return checks


def _routing_probe(command, project_dir, timeout, index, config, cluster_path):
    """Does the installed hook route as ``memory-router route`` does on the cluster file doctor
    found? Asked with a prompt made of one cluster's tags, the two must inject the same text;
    otherwise the hook reads another cluster file or config than the one reported above."""
    from router import config as config_mod
    from router.score import build_routing_table, route_prompt

    settings = config_mod.settings_of(config)
    table = build_routing_table(index)
    probe = None
    for cluster in sorted(index.clusters, key=lambda c: -len(c.tags)):
        prompt = " ".join(cluster.tags)
        decision = route_prompt(prompt, table, settings)
        if decision["additional_context"] is not None:
            probe = (prompt, decision)
            break
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


def cmd_doctor(args):
    from harness.report import console, print_json, table

    project_dir = _project_dir(args)
    checks = doctor_report(project_dir, args.memory_dir)
    failed = [c for c in checks if c["status"] == "fail"]
    if args.json:
        print_json({"ok": not failed, "project": project_dir, "checks": checks})
    else:
        from rich.text import Text

        styles = {"pass": "green", "fail": "bold red", "warn": "yellow", "info": "cyan"}
        rows = [(c["name"], Text(c["status"].upper(), style=styles[c["status"]]),
                 c["message"] + (f" (fix: {c['fix']})" if c.get("fix") and c["status"] == "fail" else ""))
                for c in checks]
        out = console()
        out.print(table(f"memory-router doctor: {project_dir}", ["check", "status", "detail"], rows))
        out.print(f"{len(failed)} check(s) failed" if failed else "all checks passed",
                  style="bold red" if failed else "green")
    return 1 if failed else 0


# --------------------------------------------------------------------------- sentinel


def cmd_sentinel_install(args):
    from harness import sentinel

    args.user = False
    settings_path, _level = _target_settings(args)
    project_dir = _project_dir(args)
    previous = _read_record(settings_path, SENTINEL_ROLE)
    if not args.text and previous and not previous.get("uninstalled_at") and os.path.isfile(settings_path):
        _snap, settings = _read_settings(settings_path)
        if inst.find_entries(settings, inst.SENTINEL_MARK):
            print(f"the sentinel is already installed in {settings_path}: {previous.get('text')}; nothing changed")
            print("(pass --text to wire a new one)")
            return 0
    text = args.text or sentinel.new_sentinel_text()
    if not text.strip() or "\n" in text:
        raise InputError("the sentinel text must be one non-empty line", fix="pass --text WORD")
    state_dir = inst.state_dir_for(settings_path)
    flag = sentinel.flag_path_for(state_dir, text)
    command = inst.sentinel_hook_command(os.path.abspath(sys.executable), flag, text)
    action, detail, backup = apply_add(settings_path, SENTINEL_ROLE, inst.SENTINEL_MARK, command,
                                       dry_run=args.dry_run, extra={"text": text, "flag": flag})
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    _report_write(action, detail, backup, settings_path, "the one-shot sentinel hook")
    print(f"sentinel: {text}")
    print(f"flag file: {flag} (created on the first prompt; the hook is silent while it exists)")
    if os.path.exists(flag):
        print("note: that flag already exists, so this sentinel will not fire; pass a new --text", file=sys.stderr)
    print("next: start a fresh Claude Code session in the project, send three or more prompts, then run")
    print(f"  memory-router sentinel check \"$(memory-router transcript locate --project "
          f"{inst.quote_for_shell(project_dir)})\" --project {inst.quote_for_shell(project_dir)}")
    print("and finally: memory-router sentinel uninstall --project " + inst.quote_for_shell(project_dir))
    return 0


def cmd_sentinel_uninstall(args):
    settings_path = inst.project_settings_path(_project_dir(args))
    action, backup = apply_remove(settings_path, SENTINEL_ROLE, inst.SENTINEL_MARK, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    _report_write(action, "", backup, settings_path, "the sentinel hook")
    record = _read_record(settings_path, SENTINEL_ROLE)
    if record and record.get("text"):
        print(f"the sentinel's text stays recorded for `sentinel check`: {record['text']}")
    return 0


def cmd_sentinel_check(args):
    text = args.sentinel
    if not text:
        settings_path = inst.project_settings_path(_project_dir(args))
        record = _read_record(settings_path, SENTINEL_ROLE)
        if not record or not record.get("text"):
            raise InputError("no sentinel recorded for this project", path=_record_path(settings_path, SENTINEL_ROLE),
                             fix="pass --sentinel TEXT, or --project DIR where `sentinel install` ran")
        text = record["text"]
    return sentinel_check_report(args.transcript, text, as_json=args.json)


def sentinel_check_report(transcript, text, as_json=False):
    """Spec §3 from a transcript: the audit's check (c), the sentinel in exactly one entry, an
    injection at its prompt; and enough later prompts to show it was not re-sent. Exit 0 / 1."""
    from transcripts.audit import FAIL, PASS, audit_path
    from transcripts.locate import subagent_files

    if not os.path.isfile(transcript):
        raise InputError("no such transcript file", path=transcript,
                         fix="`memory-router transcript locate --project DIR` prints the newest one")
    result = audit_path(transcript, text, subagent_files=subagent_files(transcript))
    main = result.stream("main")
    if main is None:
        raise InputError("no main-session lines in this transcript", path=transcript)
    check_c, check_b = main.check("c"), main.check("b")
    prompts = len(main.prompts)
    hit_line = check_c.evidence[0].line if check_c.evidence else None
    later = sum(1 for p in main.prompts if hit_line is not None and p.line > hit_line)
    problems = []
    if check_c.status != PASS:
        problems.append(f"(c) {check_c.status}: {check_c.message}")
    if check_b.status == FAIL:
        problems.append(f"(b) fail: {check_b.message}")
    if check_c.status == PASS and later < 2:
        problems.append(f"only {later} prompt(s) after the sentinel's: spec §3 needs later turns to show it "
                        "is not re-sent; send two or more further prompts and check again")
    ok = not problems
    if as_json:
        from harness.report import print_json

        print_json({"ok": ok, "transcript": os.path.abspath(transcript), "sentinel": text,
                    "claude_code_versions": list(result.versions), "prompts": prompts,
                    "prompts_after_sentinel": later,
                    "check_c": {"status": check_c.status, "message": check_c.message,
                                "lines": [e.line for e in check_c.evidence]},
                    "check_b": {"status": check_b.status, "message": check_b.message},
                    "problems": problems})
    else:
        print(f"transcript: {transcript}")
        print(f"sentinel: {text}")
        print(f"(c) {check_c.status.upper()}: {check_c.message}")
        print(f"(b) {check_b.status.upper()}: {check_b.message}")
        print(f"prompts: {prompts} ({later} after the sentinel's)")
        print("verdict: " + ("CONFIRMED: the sentinel entered once, at its prompt, and was not re-sent on later turns"
                             if ok else "NOT CONFIRMED: " + "; ".join(problems)))
    return 0 if ok else 1


def cmd_sentinel_hook(args):
    from harness import sentinel

    return sentinel.run(["--flag", args.flag, "--text", args.text])


# --------------------------------------------------------------------------- registration


def register(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    install = subparsers.add_parser(
        "install", help="wire the router hook into Claude Code's settings.json (project or user)",
        description="Adds a UserPromptSubmit command hook running this memory-router by its absolute path, "
                    "with a 5 s timeout, to DIR/.claude/settings.json (default: the current directory) or, with "
                    "--user, to ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set). Every other "
                    "key and hook is kept in order; the file is backed up to .claude/memory-router/backups/ first "
                    "and written atomically; running it twice changes nothing; invalid JSON is refused (exit 2) "
                    "and left untouched. The entry is marked by a trailing '# memory-router install' shell "
                    "comment in its command, which is how uninstall finds exactly it.",
        epilog="exit codes: 0 installed or already installed; 1 refused (the file changed meanwhile, or a "
               "hand-written router hook is already wired); 2 invalid settings.json or option",
        formatter_class=raw)
    where = install.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    where.add_argument("--user", action="store_true", help="install for every project (user settings)")
    install.add_argument("--clusters", metavar="FILE", help="cluster file the hook reads (written into the command)")
    install.add_argument("--config", metavar="FILE", help="config file the hook reads (written into the command)")
    install.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    install.set_defaults(handler=cmd_install)

    uninstall = subparsers.add_parser(
        "uninstall", help="remove the hook that install added (exactly it)",
        description="Removes the handler marked '# memory-router install'. If settings.json is exactly what "
                    "install wrote, the bytes from before the install come back unchanged (or the file is deleted "
                    "if install created it); otherwise only our handler is removed and everything else kept. "
                    "The current file is backed up first.",
        epilog="exit codes: 0 removed or not installed; 1 refused (the file changed meanwhile); 2 invalid "
               "settings.json",
        formatter_class=raw)
    where = uninstall.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    where.add_argument("--user", action="store_true", help="the user settings")
    uninstall.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    uninstall.set_defaults(handler=cmd_uninstall)

    doctor = subparsers.add_parser(
        "doctor", help="is the hook installed, does it run, what will it read, is MEMORY.md within limits",
        description="Reads the project, project-local and user settings.json; reports where the router hook is "
                    "wired, runs each hook command once with a neutral payload (exit 0 and empty or "
                    "hookSpecificOutput JSON, and nothing in its fail-open log), the cluster file it will read, "
                    "disableAllHooks and CLAUDE_CONFIG_DIR, and MEMORY.md against the 200-line / 25 KB load limit.",
        epilog="exit codes: 0 every check passed (warnings allowed); 1 a check failed", formatter_class=raw)
    doctor.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    doctor.add_argument("--memory-dir", metavar="DIR",
                        help="memory directory (default: memory_dir in the config, else Claude Code's "
                             "~/.claude/projects/<project>/memory)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(handler=cmd_doctor)

    sentinel = subparsers.add_parser("sentinel", help="the spec \u00a73 one-shot sentinel test")
    sub = sentinel.add_subparsers(dest="sentinel_command", metavar="ACTION", required=True)
    s_install = sub.add_parser(
        "install", help="wire a one-shot UserPromptSubmit hook injecting a unique sentinel",
        description="Adds, to DIR/.claude/settings.json, a hook that injects MEMORY-ROUTER-SENTINEL-<random hex> "
                    "(or --text) as additionalContext on the first prompt only: its flag file "
                    "DIR/.claude/memory-router/sentinel-<text>.fired is created atomically the first time, and "
                    "while it exists the hook prints nothing. The text and flag are recorded in "
                    "DIR/.claude/memory-router/sentinel.json for `sentinel check`.")
    s_install.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    s_install.add_argument("--text", metavar="TEXT", help="the sentinel (default: a new random one)")
    s_install.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    s_install.set_defaults(handler=cmd_sentinel_install)
    s_uninstall = sub.add_parser("uninstall", help="remove the sentinel hook (its recorded text is kept)")
    s_uninstall.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    s_uninstall.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    s_uninstall.set_defaults(handler=cmd_sentinel_uninstall)
    s_check = sub.add_parser(
        "check", help="the transcript audit's sentinel check: exactly once, at its prompt",
        description="Runs `memory-router transcript audit TRANSCRIPT --sentinel TEXT`; TEXT defaults to the one "
                    "`sentinel install` recorded for --project.",
        epilog="exit codes: 0 the sentinel entered once, at its prompt; 1 a check failed; 2 unreadable input")
    s_check.add_argument("transcript", metavar="TRANSCRIPT")
    s_check.add_argument("--sentinel", metavar="TEXT", help="the sentinel text (default: the recorded one)")
    s_check.add_argument("--project", metavar="DIR", help="where the sentinel was installed (default: cwd)")
    s_check.add_argument("--json", action="store_true", help="machine-readable output")
    s_check.set_defaults(handler=cmd_sentinel_check)
    s_hook = sub.add_parser("hook", help="the sentinel hook itself (what settings.json runs)")
    s_hook.add_argument("--flag", metavar="FILE", required=True)
    s_hook.add_argument("--text", metavar="TEXT", required=True)
    s_hook.set_defaults(handler=cmd_sentinel_hook)
