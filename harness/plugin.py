"""``memory-router plugin bootstrap``: build ``${CLAUDE_PLUGIN_DATA}/venv`` holding memory-router
with its ``mcp`` extra (the plugin starts an MCP server), so the plugin's launcher finds it without
a memory-router on PATH.

What it installs: ``--from SPEC`` (a checkout, a git URL, a wheel, a requirement), else the source
this memory-router was installed from (``harness.installsource``: the checkout, the git commit,
the wheel; the release the plugin's plugin.json pins only when this one came from the package
index, since memory-router is not on the index yet). Either way the ``mcp`` extra is added to the
requirement, and the new environment must import the MCP SDK before it replaces the old one.

The environment it replaces is moved aside first and removed only once the new
``memory-router --version`` runs and the SDK imports, so a failed build leaves the working one in
place; each failure names its fix.
"""

import json
import os
import re
import subprocess
import sys

from harness import installsource, printedcommands
from harness.install import plugins
from router.errors import InputError, MemoryRouterError
from router.removal import remove_built_tree
from router.safeio import open_regular

EXTRA = "mcp"
# A requirement naming memory-router itself: the name, its extras, then a version or "@ URL".
NAMED = re.compile(r"^\s*(memory[-_.]router)(?:\[([^\]]*)\])?(\s*(?:[<>=!~@;].*)?)$", re.I | re.S)
PATH_EXTRAS = re.compile(r"^(.*?)\[([^\]]*)\]$", re.S)
URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)

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


def plugin_version(install_path):
    """The version the plugin's plugin.json names."""
    path = os.path.join(install_path, ".claude-plugin", "plugin.json")
    try:
        with open_regular(path, encoding="utf-8") as handle:
            version = json.load(handle).get("version")
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the plugin's version: {err}", path=path,
                         fix="reinstall the plugin, or pass --from SPEC") from None
    if not isinstance(version, str) or not version:
        raise InputError("the plugin's plugin.json names no version", path=path, fix="pass --from SPEC")
    return version


def pinned_spec(install_path, extras=EXTRA):
    """``memory-router[extras]==<version>`` from the plugin's plugin.json (the index release)."""
    version = plugin_version(install_path)
    return f"memory-router[{extras}]=={version}" if extras else f"memory-router=={version}"


def default_spec(source, plugin_path=None):
    """What bootstrap installs without ``--from``: the ``source`` this memory-router came from,
    with the mcp extra; from the index, the release the plugin pins (else this one's version)."""
    if source.kind == "index":
        version = plugin_version(plugin_path) if plugin_path else source.version
        return installsource.requirement(installsource.InstallSource("index", version), (EXTRA,))
    return installsource.requirement(source, (EXTRA,))


def _with_extra(names):
    words = [w.strip() for w in (names or "").split(",") if w.strip()]
    return ",".join(words if EXTRA in words else words + [EXTRA])


def with_mcp(spec, cwd=None):
    """``spec`` (what ``--from`` names) as a requirement that carries the mcp extra: a directory or
    file gets ``[mcp]`` (an absolute path, so pip does not read it against its own directory), a
    URL becomes ``memory-router[mcp] @ URL``, ``memory-router...`` gets ``[mcp]`` after its name.
    Without it the plugin's MCP server cannot start (issue 29: ``claude mcp list``: Failed to
    connect)."""
    text = spec.strip()
    if URL.match(text) or text.startswith("git+"):
        return f"memory-router[{EXTRA}] @ {text}"
    named = NAMED.match(text)
    if named and not os.path.isdir(os.path.join(cwd or os.getcwd(), text)):  # ./memory-router is a clone
        return f"{named.group(1)}[{_with_extra(named.group(2))}]{named.group(3)}"
    bracket = PATH_EXTRAS.match(text)
    path, extras = (bracket.group(1), bracket.group(2)) if bracket else (text, "")
    path = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))
    return f"{path}[{_with_extra(extras)}]"


def _index_spec(spec):
    """True when ``spec`` is taken from the package index (a name and maybe a version, no URL)."""
    named = NAMED.match(spec)
    return bool(named) and "@" not in named.group(3)


def install_fix(spec, source=None):
    """The fix for a failed ``pip install SPEC``: an index release that is not there is the
    common case (memory-router is not published yet), so name the sources that work."""
    if _index_spec(spec):
        source = source or installsource.installed_source(with_origin=True)
        here = installsource.portable(source)
        example = printedcommands.memory_router(
            "plugin", "bootstrap", "--from",
            installsource.requirement(here).split(" @ ")[-1] if here.kind != "index" else "DIR")
        return (f"memory-router is not on the package index yet (or the index cannot be reached): pass --from "
                f"a clone of memory-router or a git URL, e.g. {example}")
    return ("check that it exists and builds (pip's last lines above); --from takes a memory-router checkout, "
            "a git URL (git+https://...@COMMIT) or a wheel")


def mcp_extra_fix(spec):
    """The fix when what ``--from`` installed has no MCP SDK: bootstrap again from a source that
    carries the extra."""
    return (f"install with the mcp extra: {printedcommands.memory_router('plugin', 'bootstrap', '--from', spec)} "
            f"(--from must name memory-router with [{EXTRA}])")


def _run(argv, what, fix=None):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise MemoryRouterError(f"{what} could not run: {err}", fix=fix) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise MemoryRouterError(f"{what} failed (exit {done.returncode}): " + " | ".join(tail), fix=fix)
    return done.stdout


def bootstrap(data_dir, spec, python=None):
    """Build ``data_dir/venv`` with ``spec`` installed; returns ``(memory-router path, version line)``.

    A venv's scripts carry its absolute path, so it cannot be built elsewhere and renamed into
    place: the old one is moved aside (``venv.old``), the new one built where it will stay, and the
    old one removed only once the new ``memory-router --version`` runs and the MCP SDK imports;
    any failure puts it back. Meanwhile the plugin's hooks fail open (they find no memory-router
    for a moment)."""
    python = python or sys.executable
    os.makedirs(data_dir, exist_ok=True)
    target = os.path.join(data_dir, VENV)
    aside = target + ".old"
    remove_built_tree(aside, data_dir)
    if os.path.isdir(target):
        os.rename(target, aside)
    bindir = os.path.join(target, "Scripts" if os.name == "nt" else "bin")
    exe = os.path.join(bindir, "memory-router")
    try:
        _run([python, "-m", "venv", target], "python -m venv",
             fix="pass --python PATH: a Python 3.11 or newer with the venv module (Debian: apt install python3-venv)")
        _run([os.path.join(bindir, "python"), "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
              spec], printedcommands.command("pip", "install", spec), fix=install_fix(spec))
        version = _run([exe, "--version"], "the new memory-router",
                       fix="--from names something that is not memory-router, or an old release: pass --from a "
                           "current checkout").strip()
        _run([os.path.join(bindir, "python"), "-c", "import mcp.server.mcpserver"],
             "the MCP SDK check (the plugin's MCP server needs it)",
             fix=mcp_extra_fix(spec))
    except MemoryRouterError:
        remove_built_tree(target, data_dir)
        if os.path.isdir(aside):
            os.rename(aside, target)
        raise
    remove_built_tree(aside, data_dir)
    return exe, version


def cmd_bootstrap(args):
    from harness.project import project_dir

    source = installsource.installed_source()
    if args.data_dir:
        data_dir, plugin_path = os.path.abspath(args.data_dir), None
    elif os.environ.get("CLAUDE_PLUGIN_DATA") and (args.spec or source.kind != "index"):
        data_dir, plugin_path = os.environ["CLAUDE_PLUGIN_DATA"], None
    else:
        plugin = installed_plugin(project_dir(args.project))
        data_dir, plugin_path = plugins.data_dir(plugin.plugin_id), plugin.install_path
    spec = with_mcp(args.spec) if args.spec else default_spec(source, plugin_path)
    origin = "--from" if args.spec else f"where this memory-router came from: {source.describe()}"
    if args.dry_run:
        print(f"would build {os.path.join(data_dir, VENV)} with {spec}")
        print(f"({origin})")
        return 0
    exe, version = bootstrap(data_dir, spec, args.python)
    print(f"{exe}: {version} (with the mcp extra), from {spec}")
    print("the plugin's hooks run it unless MEMORY_ROUTER_BIN is set; check with: memory-router doctor")
    return 0


def register(subparsers):
    plugin = subparsers.add_parser("plugin", help="the Claude Code plugin's own environment (bootstrap)",
                                   description="Helpers for the Claude Code plugin (plugins/memory-router, docs/plugin.md).")
    sub = plugin.add_subparsers(dest="plugin_command", metavar="ACTION", required=True)
    boot = sub.add_parser(
        "bootstrap", help="build ${CLAUDE_PLUGIN_DATA}/venv: memory-router with its mcp extra, for the plugin",
        description="Builds a virtual environment in the installed plugin's data folder "
                    "(~/.claude/plugins/data/<plugin>-<marketplace>/venv, which survives plugin updates) and installs "
                    "memory-router with its mcp extra into it, from --from SPEC, else from where this memory-router "
                    "was installed from (a checkout, a git commit, a wheel; the release the plugin pins when this "
                    "one came from the package index). The plugin's launcher runs it when MEMORY_ROUTER_BIN is "
                    "unset. The environment it replaces is kept until the new one runs and imports the MCP SDK.",
        epilog="exit codes: 0 built; 1 the build failed (the old environment is kept; the message names the fix); "
               "2 no plugin or no version")
    boot.add_argument("--project", metavar="DIR", help="project whose plugin install is used (default: here)")
    boot.add_argument("--data-dir", metavar="DIR", help="build DIR/venv instead of the plugin's data folder")
    boot.add_argument("--from", dest="spec", metavar="SPEC",
                      help="what to install instead (a checkout's path, a git URL, a wheel, memory-router==X); "
                           "the mcp extra is added to it")
    boot.add_argument("--python", metavar="PATH", help="interpreter for the environment (default: this one)")
    boot.add_argument("--dry-run", action="store_true", help="say what would be built; build nothing")
    boot.set_defaults(handler=cmd_bootstrap)
