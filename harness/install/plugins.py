"""Claude Code plugins that run memory-router, as Claude Code records them for a project: which are
enabled (``enabledPlugins`` in the project local, project and user settings: the nearest scope
that names a plugin decides), where each is installed (``<config dir>/plugins/installed_plugins.json``)
and which of our hooks its installed copy wires (its ``hooks/hooks.json`` and ``.mcp.json``).

Read only. ``install`` refuses a settings hook beside an enabled plugin that runs the prompt hook
(Claude Code runs both, in parallel, and every routed context reaches the model twice);
``harness.doctor.plugins`` reports where each hook comes from. Managed settings and
``--plugin-dir`` (one session) are not read.
"""

import json
import os
import shlex
from dataclasses import dataclass

from harness import printedcommands
from harness.install import hookcommand
from harness.install.settingsfile import read_settings
from harness.project import claude_config_dir, settings_locations
from router.errors import MemoryRouterError, RefusedError
from router.safeio import read_regular_bytes

LAUNCHER_NAME = "memory-router-launch"
ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
# (event, subcommand) -> role: what each of our hooks is called in reports
ROLES = {("UserPromptSubmit", "hook"): "prompt hook", ("SessionStart", "session-start"): "session reset",
         ("PreToolUse", "gate"): "citation gate"}
# Claude Code's precedence among the scopes that can name a plugin: the nearest wins.
SCOPE_ORDER = ("project local", "project", "user")
PLUGIN_SCOPES = {"project local": "local", "project": "project", "user": "user"}


@dataclass(frozen=True)
class PluginHook:
    role: str          # "prompt hook", "session reset", "citation gate"
    event: str
    matcher: str | None
    argv: tuple        # the command and its arguments, ${CLAUDE_PLUGIN_ROOT} expanded


@dataclass(frozen=True)
class RouterPlugin:
    plugin_id: str                # "memory-router@memory-router"
    enabled: bool
    decided_by: tuple | None      # (label, settings path) whose enabledPlugins decided, or None
    scope: str | None             # the install record's scope (user, project, local)
    install_path: str | None
    version: str | None
    hooks: tuple                  # PluginHook, in hooks.json order
    mcp_server: bool
    problem: str | None           # why its hooks could not be read, if they could not

    def roles(self):
        return {hook.role for hook in self.hooks}

    def where(self):
        scope = f"{self.scope} scope" if self.scope else "scope unknown"
        enabled = f"enabled in {self.decided_by[1]}" if self.enabled and self.decided_by else (
            f"disabled in {self.decided_by[1]}" if self.decided_by else "not enabled in any settings file")
        return f"plugin {self.plugin_id} ({scope}, {enabled})"


def plugins_dir(environ=None):
    return os.path.join(claude_config_dir(environ), "plugins")


def data_dir(plugin_id, environ=None):
    """``${CLAUDE_PLUGIN_DATA}`` of a plugin: ``<config dir>/plugins/data/<name>-<marketplace>``."""
    name, _at, market = plugin_id.partition("@")
    return os.path.join(plugins_dir(environ), "data", f"{name}-{market}" if market else name)


def _json_file(path):
    """The JSON object in ``path``, ``None`` when it does not exist; ``ValueError`` when damaged."""
    try:
        data = json.loads(read_regular_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: {getattr(err, 'strerror', None) or err}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data


def enabled_plugins(project_dir):
    """``{plugin id: (enabled, label, settings path)}`` as Claude Code decides for ``project_dir``."""
    named = {}
    by_label = dict(settings_locations(project_dir))
    for label in SCOPE_ORDER:
        path = by_label.get(label)
        if path is None or not os.path.lexists(path):
            continue
        try:
            _snap, settings = read_settings(path)
        except MemoryRouterError:
            continue                       # doctor reports an unreadable settings file itself
        value = settings.get("enabledPlugins")
        for plugin_id, on in (value.items() if isinstance(value, dict) else ()):
            named.setdefault(plugin_id, (on is True, label, path))
    return named


def install_records(project_dir, environ=None):
    """``({plugin id: record}, problem)``: the installed_plugins.json record of each plugin that
    applies to ``project_dir`` (user scope, or a project/local install of this project)."""
    path = os.path.join(plugins_dir(environ), "installed_plugins.json")
    try:
        data = _json_file(path)
    except ValueError as err:
        return {}, str(err)
    plugins = (data or {}).get("plugins")
    out = {}
    here = os.path.abspath(project_dir)
    for plugin_id, records in (plugins.items() if isinstance(plugins, dict) else ()):
        for record in records if isinstance(records, list) else [records]:
            if not isinstance(record, dict):
                continue
            project = record.get("projectPath")
            if record.get("scope") in ("project", "local") and project and os.path.abspath(project) != here:
                continue
            out.setdefault(plugin_id, record)
    return out, None


def plugin_root(plugin_id, record, environ=None):
    """Where the client runs ``plugin_id`` from: a directory marketplace's plugins run in place
    (``${CLAUDE_PLUGIN_ROOT}`` is the plugin's folder in the marketplace, observed with 2.1.328),
    every other one from its installed copy (the record's ``installPath``)."""
    install_path = record.get("installPath") if isinstance(record.get("installPath"), str) else None
    name, _at, market = plugin_id.partition("@")
    try:
        known = _json_file(os.path.join(plugins_dir(environ), "known_marketplaces.json")) or {}
        entry = known.get(market) if isinstance(known.get(market), dict) else {}
        source = entry.get("source") if isinstance(entry.get("source"), dict) else {}
        if source.get("source") == "directory" and isinstance(source.get("path"), str):
            catalog = _json_file(os.path.join(source["path"], ".claude-plugin", "marketplace.json")) or {}
            for item in catalog.get("plugins") if isinstance(catalog.get("plugins"), list) else []:
                if isinstance(item, dict) and item.get("name") == name and isinstance(item.get("source"), str):
                    folder = os.path.normpath(os.path.join(source["path"], item["source"]))
                    if os.path.isdir(folder):
                        return folder
    except ValueError:
        pass
    return install_path


SUBCOMMANDS = ("hook", "session-start", "gate", "mcp")


def runs_memory_router(handler):
    """The memory-router subcommand a hook handler (or .mcp.json server) runs (``hook``,
    ``session-start``, ``gate``, ``mcp``), through our launcher or memory-router itself, exec form
    (``command`` + ``args``) or shell form; else ``None``. memory-router itself is recognised by
    ``hookcommand``'s one recogniser."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    command, args = handler["command"], handler.get("args")
    if isinstance(args, list):
        words = [command] + [a for a in args if isinstance(a, str)]
        found = [sub for sub in SUBCOMMANDS if hookcommand.runs_memory_router(words, sub)]
    else:
        words = hookcommand.command_words(command) or []
        found = [sub for sub in SUBCOMMANDS if hookcommand.runs_subcommand(command, sub)]
    if found:
        return found[0]
    if len(words) >= 2 and os.path.basename(words[0]) == LAUNCHER_NAME and words[1] in SUBCOMMANDS:
        return words[1]
    return None


def _expand(word, root):
    return word.replace(ROOT_VARIABLE, root).replace("$CLAUDE_PLUGIN_ROOT", root)


def plugin_hooks(install_path):
    """``(hooks, mcp_server)`` of an installed copy: our handlers in its ``hooks/hooks.json``, and
    whether its ``.mcp.json`` starts ``memory-router mcp``. Raises ``ValueError`` when a file is
    damaged."""
    hooks = []
    data = _json_file(os.path.join(install_path, "hooks", "hooks.json")) or {}
    events = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    for event, groups in events.items():
        for group in groups if isinstance(groups, list) else []:
            for handler in (group.get("hooks") if isinstance(group, dict) else None) or []:
                subcommand = runs_memory_router(handler)
                role = ROLES.get((event, subcommand))
                if role is None:
                    continue
                argv = [handler["command"]] + list(handler.get("args") or [])
                hooks.append(PluginHook(role, event, group.get("matcher"),
                                        tuple(_expand(w, install_path) for w in argv)))
    servers = (_json_file(os.path.join(install_path, ".mcp.json")) or {}).get("mcpServers")
    mcp_server = any(runs_memory_router(server) == "mcp" for server in (servers.values() if isinstance(servers, dict) else ()))
    return tuple(hooks), mcp_server


def mcp_entries(plugin, environ=None):
    """``[(name, entry)]``: the servers of ``plugin``'s installed ``.mcp.json`` that run
    ``memory-router mcp``, as Claude Code starts them: ``${CLAUDE_PLUGIN_ROOT}`` expanded, and
    ``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA`` in the environment (doctor's trial run)."""
    if not plugin.install_path:
        return []
    try:
        servers = (_json_file(os.path.join(plugin.install_path, ".mcp.json")) or {}).get("mcpServers")
    except ValueError:
        return []
    out = []
    for name, server in (servers.items() if isinstance(servers, dict) else ()):
        if runs_memory_router(server) != "mcp":
            continue
        root = plugin.install_path
        entry = dict(server, command=_expand(server["command"], root),
                     args=[_expand(str(a), root) for a in server.get("args") or []],
                     env=dict(server.get("env") or {}, CLAUDE_PLUGIN_ROOT=root,
                              CLAUDE_PLUGIN_DATA=data_dir(plugin.plugin_id, environ)))
        out.append((name, entry))
    return out


def router_plugins(project_dir, environ=None):
    """Every plugin named for ``project_dir`` (enabled or not, installed or not) whose installed
    copy runs memory-router, or whose name is ``memory-router``; as ``RouterPlugin``."""
    enabled = enabled_plugins(project_dir)
    records, _problem = install_records(project_dir, environ)
    out = []
    for plugin_id in list(dict.fromkeys([*enabled, *records])):
        record = records.get(plugin_id) or {}
        install_path = plugin_root(plugin_id, record, environ) if record else None
        hooks, mcp_server, problem = (), False, None
        if install_path is None:
            problem = "enabled but not installed (no record in installed_plugins.json)"
        elif not os.path.isdir(install_path):
            problem = f"its installed copy {install_path} is missing"
        else:
            try:
                hooks, mcp_server = plugin_hooks(install_path)
            except ValueError as err:
                problem = f"its hooks cannot be read: {err}"
        if not hooks and not mcp_server and plugin_id.partition("@")[0] != "memory-router":
            continue
        on, label, path = enabled.get(plugin_id, (False, None, None))
        out.append(RouterPlugin(plugin_id, on, (label, path) if label else None, record.get("scope"), install_path,
                                record.get("version"), hooks, mcp_server, problem))
    return out


def shell_command(plugin_id, hook, environ=None):
    """One shell command line running ``hook`` as Claude Code runs a plugin's hook: with
    ``CLAUDE_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_DATA`` set (doctor's trial runs go through a shell)."""
    root = os.path.dirname(os.path.dirname(hook.argv[0])) if os.path.basename(hook.argv[0]) == LAUNCHER_NAME else ""
    assignments = [f"CLAUDE_PLUGIN_DATA={shlex.quote(data_dir(plugin_id, environ))}"]
    if root:
        assignments.insert(0, f"CLAUDE_PLUGIN_ROOT={shlex.quote(root)}")
    return " ".join(assignments + [hookcommand.quote_for_shell(word) for word in hook.argv])


def enabled_with(project_dir, role, environ=None):
    """The enabled plugins whose hooks include ``role``."""
    return [p for p in router_plugins(project_dir, environ) if p.enabled and role in p.roles()]


def refuse_beside_plugin(project_dir, target, environ=None):
    """Raise ``RefusedError`` when an enabled plugin already runs the prompt hook for
    ``project_dir``: a settings hook in ``target`` as well would inject every context twice."""
    found = enabled_with(project_dir, "prompt hook", environ)
    if not found:
        return
    plugin = found[0]
    scope = PLUGIN_SCOPES.get(plugin.decided_by[0], "user") if plugin.decided_by else "user"
    raise RefusedError(
        f"the {plugin.where()} already runs the memory-router prompt hook; a hook in {target} as well "
        "would make Claude Code run both on every prompt and inject every routed context twice",
        fix="keep the plugin (nothing to install), or first run: "
            + printedcommands.command("claude", "plugin", "disable", plugin.plugin_id, "--scope", scope))


def still_enabled_note(project_dir, environ=None):
    """After an uninstall: a line saying an enabled plugin still runs the hook, or ``None``."""
    found = enabled_with(project_dir, "prompt hook", environ)
    if not found:
        return None
    return (f"note: the {found[0].where()} still runs the memory-router hooks "
            f"({printedcommands.command('claude', 'plugin', 'uninstall', found[0].plugin_id)} removes them)")


def mcp_note(project_dir, environ=None):
    """A line saying an enabled plugin already starts a memory-router MCP server, or ``None``:
    two servers are two sets of tools (not a double injection), so it is said, not refused."""
    found = [p for p in router_plugins(project_dir, environ) if p.enabled and p.mcp_server]
    if not found:
        return None
    return (f"note: the {found[0].where()} already starts a memory-router MCP server (tools "
            f"mcp__plugin_{found[0].plugin_id.partition('@')[0]}_memory-router__*); this adds a second one")
