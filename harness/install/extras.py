"""Whether an optional extra of memory-router (``mcp``, ``enrich``, ...) is installed where this
memory-router runs, and the exact command that adds it, for how memory-router itself was
installed: pipx, uv tool, a virtualenv, a checkout (an editable install), or a bare interpreter.

``install --mcp`` refuses without the ``mcp`` extra (the server it would wire could not start),
and doctor fails the MCP check with the same command as its fix. ``how_installed`` reads the
environment's own markers (pipx's ``pipx_metadata.json``, uv's ``uv-receipt.toml``, a
``pyvenv.cfg``'s prefix, a checkout's ``pyproject.toml`` beside the package); ``extra_command``
is pure, so each way is tested by its markers."""

import importlib.util
import os
import sys
import sysconfig

from harness import printedcommands
from router.errors import RefusedError

EXTRA_MODULES = {"mcp": "mcp", "enrich": "anthropic", "lab": "matplotlib", "priors": "wordfreq"}


def has_module(module):
    """True when ``module`` can be imported by this interpreter (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def how_installed(prefix=None, base_prefix=None, package_file=None, purelib=None, has_pip=None):
    """``{"kind", "python", "root", "has_pip"}`` for this memory-router. ``kind``: ``pipx``, ``uv
    tool``, ``checkout`` (the package imported from a source tree with its pyproject.toml:
    ``pip install -e``), ``venv`` or ``python``; ``root``: the checkout's directory."""
    prefix = sys.prefix if prefix is None else prefix
    base_prefix = sys.base_prefix if base_prefix is None else base_prefix
    package_file = package_file or os.path.abspath(__file__)
    purelib = purelib or sysconfig.get_paths()["purelib"]
    has_pip = has_module("pip") if has_pip is None else has_pip
    python = os.path.join(prefix, "Scripts" if os.name == "nt" else "bin", "python") \
        if prefix != base_prefix else sys.executable
    info = {"kind": "python", "python": python, "root": None, "has_pip": has_pip}
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")):
        return dict(info, kind="pipx")
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return dict(info, kind="uv tool")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(package_file))))  # <root>/harness/install/
    inside_site = os.path.abspath(package_file).startswith(os.path.abspath(purelib) + os.sep)
    if not inside_site and os.path.isfile(os.path.join(root, "pyproject.toml")):
        return dict(info, kind="checkout", root=root)
    if prefix != base_prefix:
        return dict(info, kind="venv")
    return info


def extra_command(extra, installed, source=None):
    """The one command that adds ``extra`` to the memory-router ``installed`` describes, installing
    again from the ``source`` it came from (``harness.installsource``: a checkout, a git commit, a
    wheel, or the index release), so the fix never names a release the index does not have."""
    from harness import installsource

    source = source or installsource.installed_source()
    kind = installed["kind"]
    if kind in installsource.TOOLS:
        return installsource.install_command(source, (extra,), tool=kind, force=True)
    python = installed["python"]
    if kind == "checkout":
        target = ["-e", f"{installed['root']}[{extra}]"]
    else:
        editable = ["-e"] if source.kind == "checkout" and source.editable else []
        target = editable + [installsource.requirement(source, (extra,))]
    if installed["has_pip"]:
        return printedcommands.command(python, "-m", "pip", "install", *target)
    return printedcommands.command("uv", "pip", "install", "--python", python, *target)  # a uv-made venv has no pip


def missing_extra(extra):
    """``None`` when ``extra``'s module imports here, else the command that installs it."""
    if has_module(EXTRA_MODULES[extra]):
        return None
    return extra_command(extra, how_installed())


def require_extra(extra, what):
    """Refuse (exit 1, nothing written) when ``extra`` is missing: ``what`` could not run."""
    command = missing_extra(extra)
    if command is not None:
        where = how_installed()
        raise RefusedError(f"the {extra} extra is not installed in this memory-router ({where['kind']}, "
                           f"{where['python']}), so {what}; nothing was written", fix=command)
