"""Which hooks route a project's prompts: our prompt hook in each settings scope Claude Code reads
for it (project, local, user) and the enabled plugins that run it, with a trial run of one.

A slim MEMORY.md moves most memories out of the always-loaded index and leaves them to the router;
with no router those memories reach nobody. So ``slim render`` refuses without one that runs,
``uninstall`` refuses to take away the last one while the index is slim, and doctor fails
"slim index live, no router". Read only."""

import os
from dataclasses import dataclass

from harness.install import plugins
from harness.install.scopes import SCOPE_OF_LABEL
from harness.install.settingsfile import scan_settings
from harness.install.trialrun import run_hook_command

TRIAL_TIMEOUT_CAP = 30


@dataclass(frozen=True)
class Route:
    scope: str          # "project", "local", "user" or "plugin"
    where: str          # for people: the settings file and entry, or the plugin
    command: str        # the shell command line Claude Code runs
    timeout: float      # the seconds a trial run may take
    marked: bool        # added by memory-router install (so uninstall removes it)


def project_routes(project_dir, environ=None):
    """Every prompt hook of ours that Claude Code runs for ``project_dir``, settings first."""
    found = []
    for item in scan_settings(project_dir):
        for entry in item["router"]:
            timeout = entry.timeout if isinstance(entry.timeout, (int, float)) and not isinstance(
                entry.timeout, bool) and entry.timeout > 0 else TRIAL_TIMEOUT_CAP
            found.append(Route(SCOPE_OF_LABEL.get(item["label"], item["label"]),
                               f"{item['path']} {entry.where}", entry.command, min(timeout, TRIAL_TIMEOUT_CAP),
                               entry.marked))
    for plugin in plugins.enabled_with(project_dir, "prompt hook", environ):
        for hook in plugin.hooks:
            if hook.role == "prompt hook":
                found.append(Route("plugin", f"the {plugin.where()}", plugins.shell_command(plugin.plugin_id, hook,
                                                                                             environ),
                                   TRIAL_TIMEOUT_CAP, False))
    return found


def left_after_uninstall(routes, scopes):
    """The routes an ``uninstall`` of ``scopes`` leaves: every one it does not remove (a plugin, a
    hook in another scope, a hand-written hook it never touches)."""
    return [route for route in routes if not (route.marked and route.scope in scopes)]


def trial(routes, project_dir):
    """``(route, message)`` of the first route whose trial run passes (exit 0, Claude Code's output
    shape, nothing in its fail-open log), else ``(None, why each failed)``."""
    problems = []
    directory = os.path.abspath(project_dir)
    for route in routes:
        result = run_hook_command(route.command, directory, route.timeout)
        if result["ok"]:
            return route, result["message"]
        problems.append(f"{route.where}: {result['message']}")
    return None, "; ".join(problems)
