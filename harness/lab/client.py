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


def install_client(version, environ=None, npm="npm"):
    """``npm install`` ``version`` into the lab cache (idempotent); returns the client path."""
    path = cached_client(version, environ)
    if _executable(path):
        return path
    npm_path = shutil.which(npm)
    if npm_path is None:
        raise ClientMissingError("npm is not installed, so the client cannot be installed",
                                 fix="install Node.js and npm, then run memory-router lab client install")
    directory = cache_dir(version, environ)
    os.makedirs(directory, exist_ok=True)
    done = subprocess.run([npm_path, "install", "--no-audit", "--no-fund", f"{PACKAGE}@{version}"],
                          cwd=directory, capture_output=True, text=True)
    if done.returncode != 0 or not _executable(path):
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise ClientMissingError(f"npm install {PACKAGE}@{version} failed: {tail[0]}", path=directory,
                                 fix="check the network access to the npm registry")
    return path
