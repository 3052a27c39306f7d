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


def program_runs(command, project_dir, environ=None):
    """False when the program that runs memory-router in ``command`` cannot be started: a path
    that is no executable file (its venv deleted), or a name no directory of ``$PATH`` holds. A
    command it cannot read (another program wrapping ours) counts as running: the trial run judges
    it."""
    import shutil

    from harness.install.hookcommand import router_program

    environ = os.environ if environ is None else environ
    program = router_program(command, "hook")
    if program is None:
        return True
    for name in ("CLAUDE_PROJECT_DIR", "{CLAUDE_PROJECT_DIR}"):
        program = program.replace("$" + name, os.path.abspath(project_dir))
    program = os.path.expanduser(program)
    if os.sep in program or (os.altsep and os.altsep in program):
        return os.path.isfile(program) and os.access(program, os.X_OK)
    return shutil.which(program, path=environ.get("PATH")) is not None


def hooks_disabled(project_dir):
    """``["<scope> (<settings file>)", ...]``: where ``"disableAllHooks": true`` switches every hook
    off for ``project_dir`` (then no router runs, whatever is installed)."""
    return [f"{item['label']} ({item['path']})" for item in scan_settings(project_dir) if item["disable_all_hooks"]]


def working_routes(project_dir, environ=None, routes=None):
    """``(routes, why none runs)``: the routes of ``project_dir`` (``project_routes``) whose
    program can start, none when ``disableAllHooks`` is set; ``why`` names what switched them off
    or was dropped (``None`` when nothing was)."""
    routes = project_routes(project_dir, environ) if routes is None else routes
    disabled = hooks_disabled(project_dir)
    if disabled:
        return [], "disableAllHooks is true in " + ", ".join(disabled)
    dead = [route for route in routes if not program_runs(route.command, project_dir, environ)]
    why = ("its program cannot be started: " + "; ".join(f"{r.where}: {r.command}" for r in dead)) if dead else None
    return [route for route in routes if route not in dead], why


def installed_scope(project_dir):
    """The scope our router hook (marked by install) is already in for ``project_dir``, or
    ``None``: where init and a plain ``install`` (``install --gate`` after init, say) put theirs."""
    for item in scan_settings(project_dir):
        if any(entry.marked for entry in item["router"]):
            return SCOPE_OF_LABEL.get(item["label"], item["label"])
    return None


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


# --------------------------------------------------------------------------- other projects


@dataclass(frozen=True)
class Reliant:
    project: str | None   # the project directory, when its transcripts name it
    memory_md: str        # its slim MEMORY.md


def projects_relying_on(scope, exclude=None, environ=None):
    """Every project on this machine whose live MEMORY.md is a slim index and that would have no
    router left once our hook in ``scope`` (``user``) is removed: the memory directories Claude
    Code keeps (``<config dir>/projects/<key>/memory``), each project found from the ``cwd`` its
    session transcripts record (one whose directory is unknown counts as relying: nothing says a
    router of its own is there). ``exclude``: a project directory to leave out (the one the
    command runs in, which has its own guard)."""
    from canaries.memoryindex import is_slim_index
    from harness.project import claude_config_dir
    from router.errors import MemoryRouterError
    from harness.memorydir import read_memory_index
    from router.store.memorystore import project_key

    root = os.path.join(claude_config_dir(environ), "projects")
    try:
        keys = sorted(os.listdir(root))
    except OSError:
        return []
    skip = project_key(os.path.abspath(exclude)) if exclude else None
    found = []
    for key in keys:
        if key == skip:
            continue
        try:
            path, text = read_memory_index(os.path.join(root, key, "memory"))
        except MemoryRouterError:
            continue   # not a readable regular file: not an index Claude Code loads either
        if text is None or not is_slim_index(text):
            continue
        project = _project_of(os.path.join(root, key), key)
        if project is not None and left_after_uninstall(working_routes(project, environ)[0], [scope]):
            continue
        found.append(Reliant(project, path))
    return found


def _project_of(folder, key):
    """The project directory whose Claude Code folder is ``folder``: the ``cwd`` a session
    transcript there records, when its key is ``key`` and it still exists; else ``None``."""
    import json

    from router.safeio import irregular_kind, open_regular
    from router.store.memorystore import project_key

    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".jsonl"))
    except OSError:
        return None
    for name in names:
        path = os.path.join(folder, name)
        if irregular_kind(path) is not None:
            continue
        try:
            with open_regular(path, "rb") as handle:
                for number, raw in enumerate(handle):
                    if number >= 20:
                        break
                    try:
                        cwd = json.loads(raw).get("cwd")
                    except (ValueError, AttributeError):
                        continue
                    if isinstance(cwd, str) and project_key(cwd) == key and os.path.isdir(cwd):
                        return cwd
        except OSError:
            continue
    return None
