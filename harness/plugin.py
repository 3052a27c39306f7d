"""``memory-router plugin bootstrap``: build ``${CLAUDE_PLUGIN_DATA}/venv`` holding the memory-router
release the installed plugin pins (its plugin.json ``version``), so the plugin's launcher finds
it without a memory-router on PATH. ``plugin which`` prints what the plugin's hooks would run.

The environment it replaces is moved aside first and removed only once the new
``memory-router --version`` runs, so a failed build leaves the working one in place.
"""

import json
import os
import shutil
import subprocess
import sys

from harness.install import plugins
from router.errors import InputError, MemoryRouterError

VENV = "venv"
PIP_TIMEOUT = 900


def installed_plugin(project_dir):
    """The one memory-router plugin installed for ``project_dir`` (enabled or not)."""
    found = [p for p in plugins.router_plugins(project_dir) if p.install_path]
    if not found:
        raise InputError("no memory-router plugin is installed here",
                         fix="claude plugin install memory-router@memory-router, or pass --data-dir DIR")
    if len(found) > 1:
        raise InputError("more than one memory-router plugin is installed: "
                         + ", ".join(p.plugin_id for p in found), fix="pass --data-dir DIR")
    return found[0]


def pinned_spec(install_path, extras="mcp"):
    """``memory-router[extras]==<version>`` from the plugin's plugin.json."""
    path = os.path.join(install_path, ".claude-plugin", "plugin.json")
    try:
        with open(path, encoding="utf-8") as handle:
            version = json.load(handle).get("version")
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the plugin's version: {err}", path=path,
                         fix="reinstall the plugin, or pass --from SPEC") from None
    if not isinstance(version, str) or not version:
        raise InputError("the plugin's plugin.json names no version", path=path, fix="pass --from SPEC")
    return f"memory-router[{extras}]=={version}" if extras else f"memory-router=={version}"


def _run(argv, what):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise MemoryRouterError(f"{what} could not run: {err}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise MemoryRouterError(f"{what} failed (exit {done.returncode}): " + " | ".join(tail))
    return done.stdout


def bootstrap(data_dir, spec, python=None):
    """Build ``data_dir/venv`` with ``spec`` installed; returns ``(memory-router path, version line)``.

    A venv's scripts carry its absolute path, so it cannot be built elsewhere and renamed into
    place: the old one is moved aside (``venv.old``), the new one built where it will stay, and the
    old one removed only once the new ``memory-router --version`` runs; any failure puts it back.
    Meanwhile the plugin's hooks fail open (they find no memory-router for a moment)."""
    python = python or sys.executable
    os.makedirs(data_dir, exist_ok=True)
    target = os.path.join(data_dir, VENV)
    aside = target + ".old"
    shutil.rmtree(aside, ignore_errors=True)
    if os.path.isdir(target):
        os.rename(target, aside)
    bindir = os.path.join(target, "Scripts" if os.name == "nt" else "bin")
    exe = os.path.join(bindir, "memory-router")
    try:
        _run([python, "-m", "venv", target], "python -m venv")
        _run([os.path.join(bindir, "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
              spec], f"pip install {spec}")
        version = _run([exe, "--version"], "the new memory-router").strip()
    except MemoryRouterError:
        shutil.rmtree(target, ignore_errors=True)
        if os.path.isdir(aside):
            os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)
    return exe, version


def cmd_bootstrap(args):
    from harness.project import project_dir

    if args.data_dir:
        data_dir, spec = os.path.abspath(args.data_dir), args.spec
    elif os.environ.get("CLAUDE_PLUGIN_DATA") and args.spec:
        data_dir, spec = os.environ["CLAUDE_PLUGIN_DATA"], args.spec
    else:
        plugin = installed_plugin(project_dir(args.project))
        data_dir, spec = plugins.data_dir(plugin.plugin_id), args.spec or pinned_spec(plugin.install_path)
    if not spec:
        raise InputError("no version to install", fix="pass --from SPEC (e.g. memory-router==0.1.0)")
    if args.dry_run:
        print(f"would build {os.path.join(data_dir, VENV)} with {spec}")
        return 0
    exe, version = bootstrap(data_dir, spec, args.python)
    print(f"{exe}: {version}")
    print("the plugin's hooks run it unless MEMORY_ROUTER_BIN is set; check with: memory-router doctor")
    return 0


def register(subparsers):
    plugin = subparsers.add_parser("plugin", help="the Claude Code plugin's own environment (bootstrap)",
                                   description="Helpers for the Claude Code plugin (plugins/memory-router, docs/plugin.md).")
    sub = plugin.add_subparsers(dest="plugin_command", metavar="ACTION", required=True)
    boot = sub.add_parser(
        "bootstrap", help="build ${CLAUDE_PLUGIN_DATA}/venv with the release the plugin pins",
        description="Builds a virtual environment in the installed plugin's data folder "
                    "(~/.claude/plugins/data/<plugin>-<marketplace>/venv, which survives plugin updates) and installs "
                    "memory-router[mcp]==<the plugin's version> into it; the plugin's launcher runs it when "
                    "MEMORY_ROUTER_BIN is unset. The environment it replaces is kept until the new one works.",
        epilog="exit codes: 0 built; 1 the build failed (the old environment is kept); 2 no plugin or no version")
    boot.add_argument("--project", metavar="DIR", help="project whose plugin install is used (default: here)")
    boot.add_argument("--data-dir", metavar="DIR", help="build DIR/venv instead of the plugin's data folder")
    boot.add_argument("--from", dest="spec", metavar="SPEC",
                      help="pip requirement to install instead of the pinned release (a path, a URL, memory-router==X)")
    boot.add_argument("--python", metavar="PATH", help="interpreter for the environment (default: this one)")
    boot.add_argument("--dry-run", action="store_true", help="say what would be built; build nothing")
    boot.set_defaults(handler=cmd_bootstrap)
