"""Where this memory-router was installed from, and the install command that names that source.

memory-router is not on the package index yet, so a message saying ``pipx install memory-router``
sends a teammate to a package that does not exist. Every message and default that names an
install (init's and doctor's teammate hints, ``install --mcp``'s fix, ``plugin bootstrap``) asks
this module instead. It reads PEP 610's ``direct_url.json``, which pip, pipx and uv write into the
installed distribution's metadata for anything not taken from an index:

- a directory (``pip install .``, ``pipx install .``, ``pip install -e .``): ``url`` is
  ``file://<dir>`` with ``dir_info`` (``editable`` true for ``-e``): kind ``checkout``;
- a VCS URL (``pipx install 'git+https://...'``): ``vcs_info`` with the ``commit_id`` resolved
  at install time: kind ``git``, pinned to that commit;
- a wheel or sdist, a file or a URL: ``archive_info``: kind ``archive``;
- no ``direct_url.json``: the package index, kind ``index``, pinned to the installed version.

``parse_direct_url`` and the renderers are pure (tested with fabricated ``direct_url.json``
content); ``installed_source`` is the edge that reads the metadata, and ``checkout_origin`` the
edge that asks git where a checkout came from, so a teammate is told a URL rather than a path on
this machine.
"""

import json
import os
import subprocess
from dataclasses import dataclass, replace
from urllib.parse import unquote, urlsplit

from harness import printedcommands

DIST = "memory-router"
# The tools a rendered command may use; pipx first, as the README's Quick start does.
TOOLS = ("pipx", "uv tool")


@dataclass(frozen=True)
class InstallSource:
    kind: str                  # "checkout", "git", "archive" or "index"
    version: str               # the installed version
    url: str | None = None     # direct_url.json's url (a file:// URL for a local source)
    editable: bool = False     # checkout installed with -e
    commit: str | None = None  # git: the commit installed; checkout: its HEAD (checkout_origin)
    subdirectory: str | None = None
    origin: str | None = None  # checkout: its git remote as a pip VCS URL (checkout_origin)

    @property
    def path(self):
        """The local directory or file of a ``file://`` URL, else ``None``."""
        if not self.url:
            return None
        parts = urlsplit(self.url)
        if parts.scheme != "file":
            return None
        return unquote(parts.path)

    def describe(self):
        """One phrase for messages: where this memory-router came from."""
        if self.kind == "checkout":
            return f"the checkout {self.path}{' (editable)' if self.editable else ''}"
        if self.kind == "git":
            return f"{self.url} at commit {self.commit[:12] if self.commit else '(unknown)'}"
        if self.kind == "archive":
            return self.path or self.url
        return f"the package index ({DIST} {self.version})"


def parse_direct_url(text, version):
    """The ``InstallSource`` that ``direct_url.json`` content ``text`` describes (``None`` or
    empty: the index). Content that is not a PEP 610 object is read as the index too: the version
    is then the one thing known for sure."""
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return InstallSource("index", version)
    url = data["url"]
    subdirectory = data.get("subdirectory") if isinstance(data.get("subdirectory"), str) else None
    vcs = data.get("vcs_info")
    if isinstance(vcs, dict):
        commit = vcs.get("commit_id") if isinstance(vcs.get("commit_id"), str) else None
        return InstallSource("git", version, url=url, commit=commit, subdirectory=subdirectory)
    if isinstance(data.get("archive_info"), dict):
        return InstallSource("archive", version, url=url, subdirectory=subdirectory)
    dir_info = data.get("dir_info") if isinstance(data.get("dir_info"), dict) else {}
    return InstallSource("checkout", version, url=url, editable=dir_info.get("editable") is True,
                         subdirectory=subdirectory)


def _extras(extras):
    names = sorted({e for e in extras if e})
    return f"[{','.join(names)}]" if names else ""


def _vcs_url(url, commit, subdirectory=None):
    """pip's VCS form: ``git+<url>@<commit>`` (``url`` as direct_url.json records it, without
    ``git+``), with ``#subdirectory=`` when the project is not at the repository's root."""
    base = url if url.startswith("git+") else "git+" + url
    text = f"{base}@{commit}" if commit else base
    return text + (f"#subdirectory={subdirectory}" if subdirectory else "")


def requirement(source, extras=()):
    """The pip requirement that installs ``source`` again, with ``extras`` (``("mcp",)``): what
    pip, pipx and uv all accept (``<dir>[mcp]`` for a local directory or file, PEP 508's
    ``memory-router[mcp] @ <url>`` for a remote one, ``memory-router[mcp]==<version>`` for the
    index)."""
    wanted = _extras(extras)
    if source.kind == "git":
        return f"{DIST}{wanted} @ {_vcs_url(source.url, source.commit, source.subdirectory)}"
    if source.kind in ("checkout", "archive") and source.path:
        path = os.path.join(source.path, source.subdirectory) if source.subdirectory else source.path
        return path + wanted
    if source.kind == "archive":
        return f"{DIST}{wanted} @ {source.url}"
    if source.kind == "checkout":  # a dir_info URL that is not file:// (not seen in practice)
        return f"{DIST}{wanted} @ {source.url}"
    return f"{DIST}{wanted}=={source.version}"


def install_command(source, extras=(), tool="pipx", force=False):
    """The command that installs ``source`` (with ``extras``) as a tool: ``pipx install ...`` or
    ``uv tool install ...``; an editable checkout stays editable."""
    if tool not in TOOLS:
        raise ValueError(f"unknown tool {tool!r}")
    words = tool.split() + ["install"]
    if force:
        words.append("--force")
    if source.kind == "checkout" and source.editable:
        words.append("--editable")
    return printedcommands.command(*words, requirement(source, extras))


def portable(source):
    """The source a teammate can install from: a checkout becomes its git remote at the commit
    it was on (``checkout_origin`` filled ``origin``); a local file has no portable form (itself)."""
    if source.kind == "checkout" and source.origin:
        return InstallSource("git", source.version, url=source.origin, commit=source.commit,
                             subdirectory=source.subdirectory)
    return source


def install_commands(source, extras=()):
    """``pipx install ...``, or ``uv tool install ...``: the two ways, in one phrase."""
    return f"{install_command(source, extras)}, or {install_command(source, extras, tool='uv tool')}"


def teammate_command(source, extras=()):
    """What a teammate runs to get the memory-router this one is: ``pipx install ...`` of the
    portable source (``or: uv tool install ...`` beside it). A checkout with no git remote is
    named by its path, with a note that it is a path on this machine."""
    shared = portable(source)
    if shared.kind == "checkout":
        shared = replace(shared, editable=False)  # a teammate installs a copy, not this tree
    command = install_commands(shared, extras)
    if shared.kind in ("checkout", "archive") and shared.path:
        command += " (a path on this machine: use your own clone of memory-router)"
    return command


def extra_hint(extra, source, python):
    """The fix for a missing optional extra (``mcp``, ``lab``, ``enrich``...): the requirement
    that adds it from where this memory-router came from, where it runs (``python``), and the
    pipx form as an example. For a command that cannot tell how it was installed (harness.install's
    ``extras.extra_command`` can, and names the one command)."""
    wanted = printedcommands.word(requirement(source, (extra,)))
    return (f"install {wanted} where this memory-router runs ({python}), e.g. "
            f"{install_command(source, (extra,), force=True)}")


# --------------------------------------------------------------------------- the edges


def _distribution(dist):
    """The installed distribution of ``dist``: one an installer recorded a ``direct_url.json`` in,
    else one in a ``.dist-info`` folder (an index install), else ``None``. A source tree's own
    ``*.egg-info`` (what ``pip install -e`` leaves beside pyproject.toml) is found first when the
    current directory is that tree, and says nothing about how it was installed."""
    from importlib import metadata

    found = list(metadata.distributions(name=dist))
    for item in found:
        if item.read_text("direct_url.json"):
            return item
    for item in found:
        if str(getattr(item, "_path", "")).endswith(".dist-info"):
            return item
    return None


def checkout_origin(path, timeout=5):
    """``(remote as a pip VCS URL, HEAD commit)`` of the git checkout at ``path``; either is
    ``None`` when git, the remote or the commit cannot be read. A remote that is itself a path on
    this machine is no use to a teammate, so it counts as none."""
    def git(*args):
        try:
            done = subprocess.run(["git", "-C", path, *args], capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return (done.stdout.strip() or None) if done.returncode == 0 else None

    return vcs_remote(git("config", "--get", "remote.origin.url")), git("rev-parse", "HEAD")


def vcs_remote(remote):
    """A git remote as the URL part of a pip VCS requirement (without ``git+``), or ``None`` for
    one that is not reachable from another machine (a path, ``file://``)."""
    if not remote:
        return None
    parts = urlsplit(remote)
    if parts.scheme in ("https", "http", "ssh", "git"):
        return remote
    if not parts.scheme and ":" in remote and "@" in remote.split(":", 1)[0]:
        user_host, _colon, rest = remote.partition(":")  # scp-like git@github.com:owner/repo.git
        return f"ssh://{user_host}/{rest.lstrip('/')}"
    return None


def installed_source(dist=DIST, with_origin=False):
    """The ``InstallSource`` of the running memory-router. Without installed metadata (run from a
    source tree on ``sys.path``) it is that tree, as a checkout. ``with_origin`` also asks git for
    a checkout's remote and commit (a subprocess: only for messages to teammates)."""
    from router import __version__

    found = _distribution(dist)
    if found is not None:
        source = parse_direct_url(found.read_text("direct_url.json"), found.version or __version__)
    else:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        source = InstallSource("checkout", __version__, url="file://" + root, editable=True)
    if with_origin and source.kind == "checkout" and source.path:
        origin, commit = checkout_origin(source.path)
        source = replace(source, origin=origin, commit=commit)
    return source
