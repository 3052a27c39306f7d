"""Which of Claude Code's three settings scopes a hook goes to, and what command it may run there.

Claude Code reads, for a project, ``.claude/settings.json`` (scope ``project``: committed, so
every teammate runs it), ``.claude/settings.local.json`` (``local``: this checkout's, kept out of
git) and ``~/.claude/settings.json`` (``user``: every project of this user). The rule:

- a command naming a personal path (a virtualenv, a home directory: what ``router_executable``
  finds for most installs) is written to ``local`` unless the user asks for another scope, since
  a teammate who pulls a shared file has no such path;
- ``project`` scope writes a portable command, ``memory-router hook``, found on PATH (refused when
  this machine's PATH has none, since the hook would not run here either), and paths in it as
  ``"$CLAUDE_PROJECT_DIR"/<path in the project>``; each teammate installs memory-router on PATH;
- ``user`` scope is this user's, so the absolute command is right there.

A hook of ours already in another scope with another command would run beside the new one (Claude
Code runs every distinct command), so install refuses and names the way out.
"""

import os
import shlex
import shutil

from harness import printedcommands
from harness import project as proj
from harness.install import hookcommand
from router.errors import InputError, RefusedError

SCOPES = ("local", "project", "user")
PORTABLE_EXE = ("memory-router",)
PROJECT_DIR_WORD = '"$CLAUDE_PROJECT_DIR"'
# harness.project.settings_locations labels -> scope names
SCOPE_OF_LABEL = {"project": "project", "project local": "local", "user": "user"}
DESCRIBED = {
    "project": "project scope, .claude/settings.json: committed, every teammate runs it",
    "local": "local scope, .claude/settings.local.json: this checkout's only, not committed",
    "user": "user scope, your user settings: every project you open",
}


def install_hint(source=None):
    """How to get this memory-router, for a teammate (``pipx install ...`` of the source it was
    installed from: harness.installsource, never an index release that may not exist)."""
    from harness import installsource

    return installsource.teammate_command(source or installsource.installed_source(with_origin=True))


def teammate_note(source=None):
    """What install and init print after writing the portable project-scope hook."""
    return (f"each teammate needs memory-router on PATH for this hook to run ({install_hint(source)}); without it "
            "the hook fails open and prompts go through unrouted; memory-router doctor checks it")


def check_scope_options(user, scope):
    """``--user`` and ``--scope`` together must name one file."""
    if user and scope not in (None, "user"):
        raise InputError(f"--user and --scope {scope} name two settings files", fix="pass one of them")


def settings_path(scope, directory):
    """The settings file of ``scope`` for the project ``directory``."""
    if scope == "user":
        return proj.user_settings_path()
    return proj.project_settings_path(directory, local=scope == "local")


def personal_reason(path, environ=None):
    """Why ``path`` is one only this user has (``"in the virtualenv X"``, ``"in your home
    directory"``), or ``None`` for a path a teammate's machine may share (/usr/bin, /opt)."""
    env = os.environ if environ is None else environ
    path = os.path.abspath(path)
    current = os.path.dirname(path)
    while True:
        if os.path.isfile(os.path.join(current, "pyvenv.cfg")):
            return f"in the virtualenv {current}"
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    home = env.get("HOME") or os.path.expanduser("~")
    if home and home != os.sep and (path + os.sep).startswith(os.path.abspath(home).rstrip(os.sep) + os.sep):
        return "in your home directory"
    return None


def on_path(environ=None):
    """The ``memory-router`` that PATH finds (as a hook's shell would), or ``None``."""
    env = os.environ if environ is None else environ
    return shutil.which(PORTABLE_EXE[0], path=env.get("PATH", os.defpath))


def choose_scope(requested=None, user=False, exe_argv=None):
    """``(scope, why)``: ``requested`` (``--scope``), ``user`` (``--user``), else ``local`` when the
    command this memory-router writes names a personal path, else ``project`` when PATH finds that
    same memory-router, else ``local``."""
    if requested:
        return requested, "--scope " + requested
    if user:
        return "user", "--user"
    exe = (exe_argv or hookcommand.router_executable())[0]
    reason = personal_reason(exe)
    if reason:
        return "local", (f"the command names {exe}, {reason}, which teammates do not have (--scope project "
                         "writes a portable command instead)")
    found = on_path()
    if found and os.path.realpath(found) == os.path.realpath(exe):
        return "project", f"memory-router is on PATH ({found}): a portable command"
    return "local", f"the command names {exe}, which PATH does not find as memory-router"


def exe_for(scope):
    """The argv the hooks of ``scope`` start memory-router with: the portable ``memory-router`` at
    project scope (refused when PATH has none), else this one by its absolute path."""
    if scope != "project":
        return hookcommand.router_executable()
    if on_path() is None:
        here = os.path.dirname(hookcommand.router_executable()[0])
        raise RefusedError("project scope writes the portable command 'memory-router hook', but PATH finds no "
                           "memory-router here, so the hook would not run for you either; nothing was written",
                           fix=f"put memory-router on PATH (add {here} to PATH, or {install_hint()}), or "
                               "install at --scope local")
    return list(PORTABLE_EXE)


def option_word(scope, directory, as_written=()):
    """How a --clusters/--config path is written into a command of ``scope``: a function
    ``(name, value) -> shell word``. At project scope a path inside the project becomes
    ``"$CLAUDE_PROJECT_DIR"/<relative path>`` (Claude Code sets the variable for every hook); a
    path outside it is refused, since a teammate has no such path. Elsewhere a path is made
    absolute, except the options named in ``as_written`` (kept from the entry being replaced),
    whose ``$CLAUDE_PROJECT_DIR`` stays a reference."""
    if scope != "project":
        def kept(name, value):
            if name not in as_written:
                return hookcommand.quote_for_shell(os.path.abspath(value))
            for ref in ("${CLAUDE_PROJECT_DIR}/", "$CLAUDE_PROJECT_DIR/"):
                if value.startswith(ref):
                    return PROJECT_DIR_WORD + "/" + shlex.quote(value[len(ref):])
            return hookcommand.quote_for_shell(value)

        return kept
    root = os.path.realpath(directory)

    def word(name, value):
        absolute = os.path.realpath(hookcommand.expand_project_dir(value, directory))
        relative = os.path.relpath(absolute, root)
        if relative == os.curdir or relative.startswith(os.pardir) or os.path.isabs(relative):
            raise InputError(f"--{name} {value} is outside the project, so a command in the shared "
                             ".claude/settings.json cannot name it", path=value,
                             fix=f"pass a --{name} inside {directory}, set it in memory-router.toml, or install at "
                                 "--scope local")
        return PROJECT_DIR_WORD + "/" + shlex.quote(relative.replace(os.sep, "/"))

    return word


def other_scope_conflicts(directory, scope, command):
    """``[(scope, path, entry)]``: our router hooks in the other scopes of ``directory`` that run
    another command than ``command``, which Claude Code would run beside it. A settings file that
    cannot be read is an error here (exit 2), as it is for the file being written."""
    from harness.install import settings as inst
    from harness.install.settingsfile import read_settings

    found = []
    for other in SCOPES:
        path = settings_path(other, directory)
        if other == scope or not os.path.lexists(path):
            continue
        _snap, settings = read_settings(path)
        for entry in inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook):
            if entry.command != command:
                found.append((other, path, entry))
    return found


def refuse_other_scopes(directory, scope, command):
    """Raise ``RefusedError`` naming the first of ``other_scope_conflicts``."""
    conflicts = other_scope_conflicts(directory, scope, command)
    if not conflicts:
        return
    other, path, entry = conflicts[0]
    way_out = (printedcommands.memory_router("uninstall", "--scope", other,
                                             *([] if other == "user" else ["--project", directory]))
               if entry.marked else f"delete {entry.where} from {path}")
    raise RefusedError(f"the router hook is already installed in {path} ({other} scope) with another command "
                       f"({entry.command}); Claude Code would run both, injecting every routed context twice. "
                       "Nothing was written",
                       fix=f"{way_out} first, or install at --scope {other} to replace that one")


def local_file_note(directory):
    """A line when ``.claude/settings.local.json`` sits in a git work tree that does not ignore it
    (Claude Code meant it to stay uncommitted), else ``None``. Nothing is edited: the user's
    .gitignore is theirs."""
    import subprocess

    path = settings_path("local", directory)
    if not shutil.which("git"):
        return None
    try:
        inside = subprocess.run(["git", "-C", directory, "rev-parse", "--is-inside-work-tree"], capture_output=True,
                                text=True, timeout=10)
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        ignored = subprocess.run(["git", "-C", directory, "check-ignore", "-q", path], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if ignored.returncode == 0:
        return None
    return (f"note: git does not ignore {path}; it holds paths of this machine, so keep it out of commits (add "
            ".claude/settings.local.json to .gitignore)")
