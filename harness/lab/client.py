"""Which Claude Code the lab runs, and where it is installed.

Discovery order (``find_claude``): an explicit path (``--claude PATH``); ``$MEMORY_ROUTER_CLAUDE``;
the lab cache for the tested version (``$MEMORY_ROUTER_LAB_CACHE``, default
``~/.cache/memory-router-lab/claude-code``, then ``<version>/node_modules/.bin/claude``);
``claude`` on ``PATH``. Nothing found is one error that says how to install the tested version.
A client of another version runs with a warning, never a refusal.
"""

import os
import re
import shutil
import subprocess

from router.errors import InputError
from router.removal import remove_built_tree
from router.safeio import open_regular

PACKAGE = "@anthropic-ai/claude-code"
TESTED_VERSION = "2.1.328"
CACHE_ENV = "MEMORY_ROUTER_LAB_CACHE"
CLAUDE_ENV = "MEMORY_ROUTER_CLAUDE"

_VERSION_RE = re.compile(r"(\d+\.\d+\.\d+)")


class ClientMissingError(InputError):
    """No Claude Code client could be found."""


def cache_root(environ=None):
    environ = os.environ if environ is None else environ
    configured = environ.get(CACHE_ENV)
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    home = environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".cache", "memory-router-lab", "claude-code")


def cache_dir(version=TESTED_VERSION, environ=None):
    """``<cache root>/<version>``: where ``npm install`` puts that version's client."""
    return os.path.join(cache_root(environ), version)


def cached_client(version=TESTED_VERSION, environ=None):
    return os.path.join(cache_dir(version, environ), "node_modules", ".bin", "claude")


def install_command(version=TESTED_VERSION, environ=None):
    """The shell command that installs ``version`` into the lab cache."""
    directory = cache_dir(version, environ)
    return f"mkdir -p {directory} && cd {directory} && npm install {PACKAGE}@{version}"


def _executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def find_claude(explicit=None, environ=None, version=TESTED_VERSION):
    """``(path, how)`` of the client to run; raises ClientMissingError (exit 2) naming the fix."""
    environ = os.environ if environ is None else environ
    if explicit:
        if not _executable(explicit):
            raise ClientMissingError("--claude is not an executable file", path=explicit,
                                     fix=f"pass the claude binary, or install it: {install_command(version, environ)}")
        return os.path.abspath(explicit), "--claude"
    configured = environ.get(CLAUDE_ENV)
    if configured:
        if not _executable(configured):
            raise ClientMissingError(f"${CLAUDE_ENV} is not an executable file", path=configured,
                                     fix=f"unset it, or install the client: {install_command(version, environ)}")
        return os.path.abspath(configured), f"${CLAUDE_ENV}"
    cached = cached_client(version, environ)
    if _executable(cached):
        return cached, "lab cache"
    on_path = shutil.which("claude", path=environ.get("PATH"))
    if on_path:
        return os.path.abspath(on_path), "PATH"
    raise ClientMissingError(
        f"no Claude Code client found (tested version {TESTED_VERSION})",
        fix=f"install it with `{install_command(version, environ)}`, or pass --claude PATH")


def client_version(path, timeout=60):
    """The version ``claude --version`` prints (``"2.1.328"``), or None if it cannot be read."""
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout,
                              env=_version_env())
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION_RE.search(done.stdout or "")
    return match.group(1) if match else None


def _version_env():
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""),
           "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    return env


def version_warning(version):
    """A warning for a client that is not the tested version, or None."""
    if version == TESTED_VERSION:
        return None
    shown = version or "an unknown version"
    return (f"Claude Code {shown} is not the tested version {TESTED_VERSION}: the lab runs it, but what it "
            "sends may differ from docs/lab.md")


def npm_missing_error(version=TESTED_VERSION):
    return ClientMissingError(
        f"npm is not installed, so Claude Code {version} cannot be installed into the lab cache",
        fix="install Node.js with npm (e.g. apt-get install nodejs npm), or point $MEMORY_ROUTER_CLAUDE at a client")


def install_client(version, environ=None, npm="npm"):
    """``npm install`` ``version`` into the lab cache (idempotent); returns the client path.

    npm works in a fresh directory beside the version's, which is renamed into place only once
    the client is there: an install that is killed or fails leaves no half-installed version
    that a later run would take for a whole one. A lock file in the cache root makes a second
    test run that starts meanwhile wait for this one instead of installing again."""
    environ = os.environ if environ is None else environ
    path = cached_client(version, environ)
    if _executable(path):
        return path
    npm_path = shutil.which(npm, path=environ.get("PATH"))
    if npm_path is None:
        raise npm_missing_error(version)
    root = cache_root(environ)
    os.makedirs(root, exist_ok=True)
    with _install_lock(os.path.join(root, f".install-{version}.lock")):
        if _executable(path):  # installed by the run that held the lock
            return path
        return _npm_install(npm_path, version, cache_dir(version, environ), environ)


def _npm_install(npm_path, version, directory, environ):
    import tempfile

    work = tempfile.mkdtemp(prefix=f".{version}-", dir=os.path.dirname(directory))
    try:
        done = subprocess.run([npm_path, "install", "--no-audit", "--no-fund", f"{PACKAGE}@{version}"], cwd=work,
                              capture_output=True, text=True, env=_npm_env(environ))
        installed = os.path.join(work, "node_modules", ".bin", "claude")
        if done.returncode != 0 or not _executable(installed):
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise ClientMissingError(f"npm install {PACKAGE}@{version} failed: {tail[0]}", path=directory,
                                     fix="check the network access to the npm registry, then run again")
        if os.path.isdir(directory):
            # A version directory without a working client: what an install before this one (or
            # an older .ci/run killed in npm) left. The lock is held, so nobody is using it.
            kept = remove_built_tree(directory, os.path.dirname(directory))
            if kept is not None:
                raise ClientMissingError(f"cannot replace the unusable client install: {kept}", path=directory,
                                         fix="delete that directory, then run again")
        from router.safeio import current_umask

        os.chmod(work, 0o777 & ~current_umask())  # mkdtemp's 0700 would hide the client from other users
        os.rename(work, directory)
        work = None
    finally:
        if work is not None:
            remove_built_tree(work, os.path.dirname(directory))
    return os.path.join(directory, "node_modules", ".bin", "claude")


def _npm_env(environ):
    env = dict(os.environ)
    env.update({name: environ[name] for name in ("HOME", "PATH") if environ.get(name)})
    return env


class _install_lock:
    """An exclusive ``flock`` on ``path`` for the duration of a ``with`` block (no-op where
    ``fcntl`` is missing: one install at a time is then the user's to keep)."""

    def __init__(self, path):
        self.path = path
        self.handle = None

    def __enter__(self):
        self.handle = open_regular(self.path, "a")
        try:
            import fcntl
        except ImportError:
            return self
        fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self.handle.close()  # closing releases the lock
        return False


def ensure_tested_client(environ=None, version=TESTED_VERSION):
    """The client the ``realclient`` tests run, installed into the lab cache on first use:
    ``$MEMORY_ROUTER_CLAUDE`` when set (it is the user's choice, checked, never replaced), else
    the lab cache's ``version``, installed with npm when absent (a ``claude`` on PATH may be any
    version, so it is not relied on). Raises ``ClientMissingError`` with one line to fix."""
    environ = os.environ if environ is None else environ
    if environ.get(CLAUDE_ENV):
        return find_claude(None, environ, version)[0]
    return install_client(version, environ)
