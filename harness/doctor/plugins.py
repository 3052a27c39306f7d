"""The doctor's plugin checks: which Claude Code plugins run memory-router for this project, in
which scope, which of our hooks each wires, whether its launcher finds memory-router, and whether
a hook is wired twice (a settings hook beside an enabled plugin: Claude Code runs both, and every
routed context reaches the model twice). The records are read by ``harness.install.plugins``."""

import os
import subprocess

from harness import installsource, printedcommands
from harness.install import plugins
from harness.install.gate import find_gate_entries, runs_gate_hook, where as gate_where

DOUBLE_ROLES = ("prompt hook", "session reset")   # twice = every context injected twice


def _check(name, status, message, **details):
    return {"name": name, "status": status, "message": message, **details}


class PluginView:
    """The router plugins of one project, read once for every check that needs them."""

    def __init__(self, project_dir, environ=None):
        self.project_dir = project_dir
        self.environ = environ
        self.plugins = plugins.router_plugins(project_dir, environ)
        self.enabled = [p for p in self.plugins if p.enabled]

    def commands(self, role):
        """Shell command lines of the enabled plugins' ``role`` hooks (for doctor's trial runs)."""
        return [plugins.shell_command(p.plugin_id, hook, self.environ)
                for p in self.enabled for hook in p.hooks if hook.role == role]

    def sources(self, role):
        """``[(where, shell command)]`` of the enabled plugins' ``role`` hooks."""
        return [(p.where(), plugins.shell_command(p.plugin_id, hook, self.environ))
                for p in self.enabled for hook in p.hooks if hook.role == role]

    def hook_installed(self):
        """The "hook installed" check when no settings file wires the hook, or ``None``."""
        with_hook = [p for p in self.enabled if "prompt hook" in p.roles()]
        if not with_hook:
            return None
        return _check("hook installed", "pass", "; ".join(f"UserPromptSubmit from the {p.where()}" for p in with_hook),
                      hooks=[{"location": "plugin", "plugin": p.plugin_id, "install_path": p.install_path}
                             for p in with_hook])

    def checks(self, settings_hooks, run=True):
        """Every plugin check. ``settings_hooks``: ``{role: [(label, settings path, where, added by
        install)]}`` of the hooks the settings files wire, so a hook wired in both places is named."""
        out = []
        for plugin in self.plugins:
            out.append(self._plugin_check(plugin))
            if plugin.enabled and plugin.hooks and run:
                out.append(self._launcher_check(plugin))
        for role in ("prompt hook", "session reset", "citation gate"):
            from_plugins = [p for p in self.enabled if role in p.roles()]
            from_settings = settings_hooks.get(role) or []
            if not from_plugins or not from_settings:
                continue
            settings_text = "; ".join(f"{label}: {path} {where}" for label, path, where, _marked in from_settings)
            remove = _uninstall_command(from_settings, self.project_dir, role)
            message = (f"the {role} is wired twice: by the {from_plugins[0].where()} and in {settings_text}; "
                       "Claude Code runs both")
            if role in DOUBLE_ROLES:
                message += ", so every routed context reaches the model twice"
            out.append(_check(f"one {role}", "fail" if role in DOUBLE_ROLES else "warn", message,
                              fix=f"remove the settings hook: {remove} (the plugin carries every hook), "
                                  "or keep it and run: "
                                  + printedcommands.command("claude", "plugin", "disable", from_plugins[0].plugin_id)))
        return out

    def _plugin_check(self, plugin):
        wired = ", ".join(f"{h.event}{f' ({h.matcher})' if h.matcher else ''}: {h.role}" for h in plugin.hooks)
        if plugin.mcp_server:
            wired += (", " if wired else "") + "MCP server"
        version = f" {plugin.version}" if plugin.version else ""
        message = f"{plugin.where()}{version} at {plugin.install_path}: {wired or 'no memory-router hooks'}"
        if plugin.problem:
            return _check("plugin", "warn" if plugin.enabled else "info", f"{plugin.where()}: {plugin.problem}",
                          plugin=plugin.plugin_id)
        return _check("plugin", "pass" if plugin.enabled else "info", message, plugin=plugin.plugin_id,
                      scope=plugin.scope, install_path=plugin.install_path,
                      hooks=[{"event": h.event, "matcher": h.matcher, "role": h.role} for h in plugin.hooks],
                      mcp_server=plugin.mcp_server)

    def _launcher_check(self, plugin):
        """Which memory-router the plugin's launcher will run (``memory-router-launch which``)."""
        launcher = next((h.argv[0] for h in plugin.hooks if os.path.basename(h.argv[0]) == plugins.LAUNCHER_NAME), None)
        if launcher is None:
            return _check("plugin finds memory-router", "info", f"{plugin.plugin_id} runs memory-router directly")
        env = dict(os.environ, CLAUDE_PLUGIN_DATA=plugins.data_dir(plugin.plugin_id, self.environ),
                   CLAUDE_PLUGIN_ROOT=os.path.dirname(os.path.dirname(launcher)))
        try:
            done = subprocess.run([launcher, "which"], capture_output=True, text=True, env=env, timeout=10,
                                  stdin=subprocess.DEVNULL)
        except OSError as err:
            return _check("plugin finds memory-router", "fail", f"{launcher} cannot run: {err.strerror or err}")
        if done.returncode == 0:
            return _check("plugin finds memory-router", "pass", f"{plugin.plugin_id}'s hooks run {done.stdout.strip()}")
        return _check("plugin finds memory-router", "fail",
                      f"{plugin.plugin_id}'s hooks do nothing: {done.stderr.strip()}",
                      fix="memory-router plugin bootstrap (the plugin's own environment), or "
                          f"{installsource.install_commands(installsource.installed_source(), ('mcp',))}, "
                          "or set MEMORY_ROUTER_BIN")


def settings_hooks(locations):
    """``{role: [(label, settings path, where, added by install)]}`` of the router, session and
    gate hooks in the settings files doctor scanned (``settingsfile.scan_settings``)."""
    from harness.install.settingsfile import read_settings
    from router.errors import MemoryRouterError

    out = {"prompt hook": [], "session reset": [], "citation gate": []}
    for item in locations:
        out["prompt hook"] += [(item["label"], item["path"], e.where, e.marked) for e in item["router"]]
        out["session reset"] += [(item["label"], item["path"], e.where, e.marked) for e in item["session"]]
        if item["exists"] and not item["error"]:
            try:
                _snap, settings = read_settings(item["path"])
            except MemoryRouterError:
                continue
            out["citation gate"] += [(item["label"], item["path"], gate_where(e), e[5])
                                     for e in find_gate_entries(settings, also=runs_gate_hook)]
    return out


def _uninstall_command(from_settings, project_dir, role):
    """How to take the settings copy out: ``memory-router uninstall`` for what install added, by
    hand for a handler someone wrote."""
    label, path, where, marked = from_settings[0]
    if not marked:
        return f"delete {where} from {path}"

    flag = ["--gate"] if role == "citation gate" else []
    if label == "user":
        return printedcommands.memory_router("uninstall", "--user", *flag)
    return printedcommands.memory_router("uninstall", "--project", project_dir, *flag)
