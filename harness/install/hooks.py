"""``install`` and ``uninstall`` of the router's hooks as values in, a result out: the scope
(``harness.install.scopes``), the command, the checks that refuse before anything is written
(files, a plugin that runs the hook, our hook in another scope, a provider budget the timeout
cannot hold), the write itself (``harness.install.settingsfile``) and the lines to print.
``harness.install.cli`` and ``memory-router init`` both print ``lines(result)``."""

import os

from harness import printedcommands
from harness.install import gate as gate_install
from harness.install.routes import installed_scope
from harness.install import hookcommand, plugins, scopes
from harness.install import settings as inst
from harness.install.settingsfile import (
    ROUTER_ROLE,
    apply_add,
    apply_remove,
    carry_over,
    existing_entry,
    read_settings,
    target_settings,
    write_lines,
)
from harness.project import project_config, project_dir
from router.errors import InputError


def require_files(clusters=None, config=None):
    """Refuse to wire a hook or server that could only fail: a named file that is missing or
    (a cluster file) does not parse."""
    for option, value in (("clusters", clusters), ("config", config)):
        if value and not os.path.isfile(value):
            raise InputError(f"--{option} file does not exist", path=value, fix="pass an existing file")
    if clusters:
        from router.store.clusterfile import load_cluster_file

        load_cluster_file(clusters)


def refuse_budget(config_path, directory, timeout):
    """The provider budget against the timeout the entry gets (``router.providerbudget``): a
    ``provider_timeout_ms`` the hook cannot finish inside is refused (exit 2), since Claude Code
    would kill the hook and drop its answer on every slow prompt, with no log line."""
    from router.config import settings_of
    from router.providerbudget import budget_problem

    config = project_config(directory, config_path)
    problem = budget_problem(settings_of(config)["provider_timeout_ms"], timeout)
    if problem:
        where, _sep, fix = problem.partition("; ")
        raise InputError(where, path=(config or {}).get("source"), fix=fix + "; nothing was written")


def install_router(project=None, scope=None, user=False, clusters=None, config=None, gate=False, dry_run=False,
                   out=None):
    """Install the router hook (and the SessionStart hook, and with ``gate`` the citation gate).
    Returns a dict: ``settings``, ``scope``, ``scope_why``, ``command``, ``session_command``,
    ``action``, ``detail``, ``backup``, ``notes`` (stderr), ``gate`` (or ``None``), ``project``."""
    directory = project_dir(project)
    already = None if scope or user else installed_scope(directory)
    chosen, why = (already, f"the hook is already installed in the {already} scope") if already else \
        scopes.choose_scope(scope, user)
    settings_path, chosen = target_settings(project=project, scope=chosen)
    require_files(clusters, config)
    plugins.refuse_beside_plugin(directory, settings_path)  # each hook wired once
    carried, timeout, notes = carry_over(settings_path, clusters, config)
    exe = scopes.exe_for(chosen)
    word = scopes.option_word(chosen, directory, carried["as_written"])
    command = hookcommand.router_hook_command(exe, clusters=carried["clusters"], config=carried["config"],
                                              option_word=word)
    scopes.refuse_other_scopes(directory, chosen, command)
    refuse_budget(hookcommand.expand_project_dir(carried["config"], directory), directory, timeout)
    existing = existing_entry(settings_path)
    if existing is not None and existing.command != command:
        notes.append(f"the entry's command changes from {existing.command} to {command}")
    if gate:
        gate_install.check_installable(settings_path)
    session_command = hookcommand.session_start_command(exe)
    action, detail, backup = apply_add(settings_path, ROUTER_ROLE, hookcommand.ROUTER_MARK, command, timeout=timeout,
                                       dry_run=dry_run, conflicts=hookcommand.runs_router_hook, out=out,
                                       more=((inst.SESSION_EVENT, session_command, inst.SESSION_MATCHER),))
    result = {"project": directory, "settings": settings_path, "scope": chosen, "scope_why": why, "command": command,
              "session_command": session_command, "action": action, "detail": detail, "backup": backup,
              "notes": notes if action != "unchanged" else [], "gate": None, "dry_run": action == "dry-run"}
    if gate:  # beside the router's entry, in the same file
        gate_action, gate_detail, gate_backup, gate_command = gate_install.install_gate(
            settings_path, clusters, config, dry_run, exe_argv=exe, option_word=word)
        result["gate"] = {"action": gate_action, "detail": gate_detail, "backup": gate_backup, "command": gate_command}
    if action in ("added", "updated") and chosen == "local":
        note = scopes.local_file_note(directory)
        if note:
            result["notes"].append(note[len("note: "):])
    return result


def install_lines(result):
    """``[(stream, line)]`` to print for ``install_router``'s result (stream ``out`` or ``err``)."""
    out = [("err", f"note: {note}") for note in result["notes"]]
    settings_path = result["settings"]
    if result["action"] != "dry-run":
        out += [("out", line) for line in write_lines(result["action"], result["detail"], result["backup"],
                                                       settings_path, "the memory-router hook")]
    gate = result["gate"]
    if gate and gate["action"] != "dry-run":
        out += [("out", line) for line in write_lines(gate["action"], gate["detail"], gate["backup"], settings_path,
                                                       "the citation gate")]
        if gate["action"] in ("added", "updated"):
            out.append(("out", f"gate command: {gate['command']}"))
    if result["action"] == "dry-run":
        return out + [("err", f"(dry run: {settings_path} not changed)")]
    if result["action"] in ("added", "updated"):
        out.append(("out", f"scope: {scopes.DESCRIBED[result['scope']]} ({result['scope_why']})"))
        out.append(("out", f"command: {result['command']}"))
        out.append(("out", f"on compaction and /clear: {result['session_command']}"))
        if result["scope"] == "project":
            out.append(("out", scopes.teammate_note()))
        out.append(("out", "check it with: " + printedcommands.memory_router(
            "doctor", *(["--project", result["project"]] if result["scope"] != "user" else []))))
    return out


def uninstall_scopes(scope=None, user=False):
    """The scopes ``uninstall`` cleans: the one asked for, else the project's two (shared and local)."""
    if scope:
        return [scope]
    return ["user"] if user else ["project", "local"]


def uninstall_router(project=None, scope=None, user=False, gate=False, dry_run=False, out=None):
    """Take our hooks out of each scope's settings file. Returns ``[(stream, line)]``."""
    lines = []
    asked = uninstall_scopes(scope, user)
    for each in asked:
        settings_path, _scope = target_settings(project=project, scope=each)
        if len(asked) > 1 and not os.path.lexists(settings_path):
            continue
        lines += _uninstall_one(settings_path, gate, dry_run, out)
    if not lines:  # neither of the project's files exists
        settings_path, _scope = target_settings(project=project, scope=asked[0])
        lines += [("out", line) for line in write_lines("absent", "", None, settings_path, "the memory-router hook")]
    note = plugins.still_enabled_note(project_dir(project))
    if note:
        lines.append(("out", note))
    return lines


def _uninstall_one(settings_path, gate, dry_run, out):
    lines = []
    if gate:
        gate_action, gate_backup = gate_install.uninstall_gate(settings_path, dry_run)
        if gate_action != "dry-run":
            lines += [("out", line) for line in write_lines(gate_action, "", gate_backup, settings_path,
                                                             "the citation gate")]
    else:
        left = gate_install.note_if_left(settings_path)
        if left:
            lines.append(("out", left))
    action, backup = apply_remove(settings_path, ROUTER_ROLE, hookcommand.ROUTER_MARK, dry_run=dry_run, out=out)
    if action == "dry-run":
        return lines + [("err", f"(dry run: {settings_path} not changed)")]
    lines += [("out", line) for line in write_lines(action, "", backup, settings_path, "the memory-router hook")]
    if action == "absent" and os.path.isfile(settings_path):
        _snap, settings = read_settings(settings_path)
        manual = [e for e in inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook)
                  if not e.marked]
        for entry in manual:
            lines.append(("out", f"note: {entry.where} runs the router but was not added by memory-router install; "
                                 f"left as is: {entry.command}"))
    return lines
