"""The doctor's checks (pure reading, no argv): where the router hook is wired in the project,
project-local and user settings.json, whether each hook command runs and routes (trial runs in
``harness.doctor.probes``), the cluster file it will read, the provider, disableAllHooks and
CLAUDE_CONFIG_DIR, the MCP server (``harness.doctor.mcp``), the citation gate
(``harness.doctor.gate``) and MEMORY.md against Claude Code's load limit. ``harness.doctor.cli``
prints them."""

import os

from harness import project as proj
from harness.memorydir import read_memory_index
from harness.doctor.plugins import PluginView, settings_hooks
from harness.doctor.probes import check, probe_prompt, routing_probe, run_hook_command, session_probe
from harness.doctor.scopes import scope_checks, scope_of
from harness.doctor.selector import selector_check
from harness.install import hookcommand
from harness.install import settings as inst
from harness.install.settingsfile import read_settings, scan_settings
from router.errors import InputError

DOCTOR_TIMEOUT_CAP = 30


def doctor_report(project_dir, memory_dir=None, run_commands=True):
    """Every doctor check for ``project_dir``, as a list of dicts with a ``status`` of
    ``pass``, ``fail``, ``warn`` or ``info``."""
    from canaries.memoryindex import memory_index_facts
    from router import config as config_mod
    from router.store.clusterfile import load_cluster_file
    from router.errors import MemoryRouterError

    checks = []
    locations = scan_settings(project_dir)
    for item in locations:
        if item["error"]:
            checks.append(check("settings readable", "fail", f"{item['label']} settings: {item['error']}",
                                 path=item["path"]))
    entries = [(item["label"], item["path"], e) for item in locations for e in item["router"]]
    hooks = [{"location": label, "scope": scope_of(label), "settings": path, "where": e.where, "command": e.command,
              "timeout": e.timeout, "added_by_install": e.marked} for label, path, e in entries]
    plugin_view = PluginView(project_dir)  # the Claude Code plugins that run our hooks (harness.doctor.plugins)
    if entries:
        where = "; ".join(f"{h['scope']} scope: {h['settings']} {h['where']}" for h in hooks)
        checks.append(check("hook installed", "pass", where, hooks=hooks))
        checks.extend(scope_checks(entries, project_dir))
    elif plugin_view.hook_installed():
        checks.append(plugin_view.hook_installed())
    else:
        checks.append(check("hook installed", "fail",
                             "no memory-router hook in " + ", ".join(i["path"] for i in locations) + " or an enabled plugin",
                             fix="memory-router init (or memory-router install --project DIR), or claude plugin "
                                 "install memory-router@memory-router (docs/plugin.md)", hooks=[]))
    distinct = sorted({e.command for _l, _p, e in entries})
    if len(distinct) > 1:
        checks.append(check("one hook", "fail", f"{len(distinct)} different router hook commands are wired; "
                             "Claude Code runs them all, so each prompt gets the injection more than once",
                             commands=distinct))
    for label, path, entry in entries:
        if entry.timeout is None:
            checks.append(check("hook timeout", "warn", f"{label}: {entry.where} has no timeout (Claude Code's "
                                 "UserPromptSubmit default is 30 s)", settings=path))

    sessions = [(item["label"], item["path"], e) for item in locations for e in item["session"]]
    session_commands = sorted({e.command for _l, _p, e in sessions})
    if sessions:
        checks.append(check("session reset hook", "pass", "SessionStart: " + "; ".join(
            f"{label}: {path} {e.where}" for label, path, e in sessions), commands=session_commands))
    elif entries:
        checks.append(check("session reset hook", "warn", "no SessionStart hook runs memory-router session-start: "
                             "after /compact the router notices the compaction only from the transcript (and sends "
                             "a fact again only then)", fix="memory-router install again (it adds the hook)"))

    if not distinct:  # the plugin's hooks get the trial runs instead
        distinct, session_commands = plugin_view.commands("prompt hook"), plugin_view.commands("session reset")

    sentinels = [(item["label"], e) for item in locations for e in item["sentinel"]]
    if sentinels:
        checks.append(check("sentinel hook", "info", "the one-shot spec \u00a73 sentinel is wired ("
                             + ", ".join(f"{label} {e.where}" for label, e in sentinels)
                             + "); remove it with memory-router sentinel uninstall once checked"))

    disabled = [f"{i['label']} ({i['path']})" for i in locations if i["disable_all_hooks"]]
    checks.append(check("hooks enabled", "fail" if disabled else "pass",
                         ("disableAllHooks is true in " + ", ".join(disabled)) if disabled
                         else "disableAllHooks is not set in any settings file read (managed policy not read)"))

    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    if config_dir:
        default_user = os.path.join(os.path.expanduser("~"), ".claude", proj.SETTINGS_NAME)
        message = (f"CLAUDE_CONFIG_DIR={config_dir}: user settings are {proj.user_settings_path()}, and transcripts "
                   "and memory live under it, for a Claude Code started with this environment")
        status = "info"
        if os.path.abspath(default_user) != os.path.abspath(proj.user_settings_path()) and os.path.isfile(default_user):
            try:
                _snap, other = read_settings(default_user)
                if inst.find_entries(other, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook):
                    status = "warn"
                    message += f"; the hook in {default_user} is ignored by such a session"
            except InputError:
                pass
        checks.append(check("CLAUDE_CONFIG_DIR", status, message))
    else:
        checks.append(check("CLAUDE_CONFIG_DIR", "info", f"not set: user settings are {proj.user_settings_path()} "
                             "(a Claude Code started with CLAUDE_CONFIG_DIR set reads another directory)"))

    # The cluster file, resolved as the (first) hook will: its --clusters/--config, then the
    # environment, the config file and brain/ under the project directory.
    explicit = hookcommand.expand_project_dir(hookcommand.command_option(distinct[0], "clusters"), project_dir) \
        if distinct else None
    config_file = hookcommand.expand_project_dir(hookcommand.command_option(distinct[0], "config"), project_dir) \
        if distinct else None
    config = None
    try:
        config = proj.project_config(project_dir, config_file)
    except MemoryRouterError as err:
        checks.append(check("config", "fail", str(err)))
    if config:
        checks.append(check("config", "info", f"config file: {config.get('source')}"))
    cluster_path, how = proj.resolve_cluster_file(explicit, config, [project_dir])
    index = None
    if explicit:
        how = "--clusters in the hook command"
    if cluster_path is None:
        checks.append(check("cluster file", "fail", "the hook finds no cluster file (tried --clusters, "
                             "$MEMORY_ROUTER_CLUSTERS, the config, brain/memory-layer1-clusters.md|.tsv under "
                             f"{project_dir}), so it will inject nothing", cluster_file=None,
                             fix="memory-router init (builds the cluster file and sets clusters in "
                                 "memory-router.toml), or memory-router install --clusters FILE"))
    else:
        try:
            index = load_cluster_file(cluster_path)
        except MemoryRouterError as err:
            checks.append(check("cluster file", "fail", str(err), cluster_file=cluster_path))
        else:
            checks.append(check("cluster file", "pass", f"{cluster_path} (from {how}): {len(index)} clusters, "
                                 f"{len(index.members)} members", cluster_file=os.path.abspath(cluster_path)))
    # One routing table for every check that routes: a large store's table takes seconds to build.
    table = None
    if index is not None:
        from router.providers.provider import build_table

        table = build_table(index)
    checks.append(_providercheck(config, table, _entry_timeout(entries, distinct)))
    if index is not None and config and config.get("learning"):
        checks.append(_learnedcheck(cluster_path))
    if index is not None:
        from harness.doctor.table import table_checks

        checks.extend(table_checks(cluster_path, config))

    if run_commands:
        for command in distinct:
            timeout = min(next((e.timeout for _l, _p, e in entries if e.command == command
                                and isinstance(e.timeout, (int, float)) and e.timeout > 0), 30), DOCTOR_TIMEOUT_CAP)
            result = run_hook_command(command, project_dir, timeout)
            checks.append(check("hook runs", "pass" if result["ok"] else "fail", result["message"],
                                 command=command, seconds=result.get("seconds")))
            if result["ok"] and table is not None and command == distinct[0]:
                probe = probe_prompt(index, table, config)
                checks.append(routing_probe(command, project_dir, timeout, probe, cluster_path))
                if session_commands:
                    checks.append(session_probe(command, session_commands[0], project_dir, timeout, probe))

    from harness.doctor.mcp import doctor_checks as mcp_doctor_checks

    checks.extend(mcp_doctor_checks(project_dir, run=run_commands, plugins=plugin_view.enabled))

    directory, memory_how = proj.resolve_memory_dir(memory_dir, config, project_dir)
    store = proj.Store(cluster_path, how, directory, memory_how, config)
    checks.append(check("store", "info", "; ".join(store.lines()), store=store.to_json()))
    how = memory_how
    path, text = read_memory_index(directory)
    if text is None:
        checks.append(check("MEMORY.md size", "warn", f"no MEMORY.md at {path} ({how})", memory_md=path))
    else:
        facts = memory_index_facts(text, "")
        size = (f"{facts['lines']} lines, {facts['bytes']} bytes, against Claude Code's load limit of "
                "200 lines / 25,000 characters (whole lines)")
        ok = not facts["truncated"]  # Claude Code loads whole lines only, up to its limit
        checks.append(check("MEMORY.md size", "pass" if ok else "fail",
                             f"{path} ({how}): {size}" + ("" if ok else f"; only the first {facts['loaded_lines']} lines are loaded, "
                                                              "the rest is never seen"),
                             memory_md=path, lines=facts["lines"], bytes=facts["bytes"], slim=facts["slim"],
                             loaded_lines=facts["loaded_lines"]))
        if facts["slim"]:
            checks.append(_slimcheck(path, project_dir))
    from harness.doctor.gate import doctor_checks as gate_doctor_checks

    checks.extend(gate_doctor_checks(project_dir, run_commands, plugin_gates=plugin_view.sources("citation gate")))
    checks.extend(plugin_view.checks(settings_hooks(locations), run_commands))
    checks.append(selector_check(project_dir, bool(entries or plugin_view.enabled)))
    from harness.doctor.replayline import replay_check

    replayed = replay_check(project_dir, cluster_path, index, table, config_mod.settings_of(config))
    if replayed:  # one line, only when this project has session transcripts (memory-router replay)
        checks.append(replayed)
    return checks


def _slimcheck(path, project_dir):
    """A slim MEMORY.md leaves most memories to the router: with no router hook (in any settings
    scope, or an enabled plugin) they reach no prompt (issue 29 item 3); a hook whose program is
    gone, or ``disableAllHooks``, is no router (issue 35 item 4). Whether the hook's output is
    right is the "hook runs" check's."""
    from harness.install import routes

    working, why = routes.working_routes(project_dir)
    if working:
        return check("slim index", "pass", f"{path} is a slim index and a router hook sends what it routes")
    reason = f"the memory-router prompt hook is wired but none runs ({why})" if why else \
        "no memory-router prompt hook is installed in any settings scope or by an enabled plugin"
    return check("slim index", "fail", f"slim index live, no router: {path} is a slim index, but {reason}, so the "
                 "memories it moved out of the always-loaded index reach no prompt", memory_md=path,
                 fix="memory-router install (or init) to route them, or memory-router slim rollback to restore the "
                     "flat index")


def _entry_timeout(entries, distinct):
    """The timeout, in seconds, of the (first) installed router hook, or ``None``."""
    for _label, _path, entry in entries:
        if distinct and entry.command == distinct[0]:
            timeout = entry.timeout
            return timeout if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else None
    return None


def _providercheck(config, table, hook_timeout_s=None):
    """Which provider routes, whether it loads, a custom one's import cost (issue 14), and whether
    its budget fits the installed hook's timeout (``router.providerbudget``)."""
    from harness.doctor.provider import check_provider
    from router import config as config_mod

    report = check_provider(config_mod.settings_of(config), table, hook_timeout_s=hook_timeout_s)
    kind = "built-in" if report["builtin"] else "custom"
    message = f"{report['provider']} ({kind})"
    if report["import_ms"] is not None:
        message += f", imports in {report['import_ms']:.0f} ms of its {report['budget_ms']} ms budget"
    if report["problem"]:
        message += f": {report['problem']}"
    status = {"ok": "pass", "warn": "warn"}.get(report["status"], "fail")
    return check("provider", status, message, provider=report["provider"], import_ms=report["import_ms"])


def _learnedcheck(cluster_path):
    """With learning on, the learned-terms file the hook reads beside the cluster file."""
    from router.errors import InputError
    from router.config import learned_path
    from router.store.learned import read_learned

    path = learned_path(cluster_path)
    try:
        rows = read_learned(path)
    except InputError as err:
        return check("learned terms", "fail", f"{err} (the hook routes without learned terms until it is fixed)",
                      learned_file=path)
    if not rows:
        return check("learned terms", "pass", f"learning is on; no learned terms yet ({path})", learned_file=path,
                      rows=0)
    return check("learned terms", "pass", f"{len(rows)} learned terms in {path}, read by the hook",
                  learned_file=path, rows=len(rows))
