"""harness.installsource (issue 29 item 1): where this memory-router was installed from, read from
PEP 610's direct_url.json, and the install command naming that source (never the package index
for a memory-router that did not come from it), with the extras a caller needs."""

import json
import os
import pathlib
import shlex
import subprocess
import sys

import pytest

from harness import installsource as src

VERSION = "0.1.0"
COMMIT = "a29dc6c79952ae43a676d68caad750fe60161d71"

# direct_url.json as pip, pipx and uv write it (the git and directory forms copied from pipx 1.x
# and uv installs of this repository; the archive form from pip installing a wheel file).
CHECKOUT = {"url": "file:///home/ann/memory-router", "dir_info": {}}
EDITABLE = {"url": "file:///home/ann/memory-router", "dir_info": {"editable": True}}
GIT = {"url": "https://github.com/example/memory-router.git",
       "vcs_info": {"vcs": "git", "commit_id": COMMIT, "requested_revision": "main"}}
GIT_SUBDIR = dict(GIT, subdirectory="python")
WHEEL = {"url": "file:///tmp/dist/memory_router-0.1.0-py3-none-any.whl",
         "archive_info": {"hashes": {"sha256": "00"}}}
REMOTE_SDIST = {"url": "https://example.com/memory_router-0.1.0.tar.gz", "archive_info": {}}


def parsed(data):
    return src.parse_direct_url(json.dumps(data) if data is not None else None, VERSION)


@pytest.mark.parametrize("data, kind, editable, commit, path", [
    (CHECKOUT, "checkout", False, None, "/home/ann/memory-router"),
    (EDITABLE, "checkout", True, None, "/home/ann/memory-router"),
    (GIT, "git", False, COMMIT, None),
    (WHEEL, "archive", False, None, "/tmp/dist/memory_router-0.1.0-py3-none-any.whl"),
    (REMOTE_SDIST, "archive", False, None, None),
    (None, "index", False, None, None),
])
def test_each_source_kind_is_told_apart(data, kind, editable, commit, path):
    source = parsed(data)
    assert (source.kind, source.editable, source.commit, source.path) == (kind, editable, commit, path)
    assert source.version == VERSION


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", '{"dir_info": {}}', '{"url": 3}'])
def test_content_that_is_not_pep_610_reads_as_the_index(text):
    assert src.parse_direct_url(text, VERSION).kind == "index"


@pytest.mark.parametrize("data, extras, expected", [
    (CHECKOUT, ("mcp",), "/home/ann/memory-router[mcp]"),
    (CHECKOUT, (), "/home/ann/memory-router"),
    (EDITABLE, ("mcp",), "/home/ann/memory-router[mcp]"),
    (GIT, ("mcp",), f"memory-router[mcp] @ git+https://github.com/example/memory-router.git@{COMMIT}"),
    (GIT_SUBDIR, (), f"memory-router @ git+https://github.com/example/memory-router.git@{COMMIT}"
                     "#subdirectory=python"),
    (WHEEL, ("mcp", "enrich"), "/tmp/dist/memory_router-0.1.0-py3-none-any.whl[enrich,mcp]"),
    (REMOTE_SDIST, ("mcp",), "memory-router[mcp] @ https://example.com/memory_router-0.1.0.tar.gz"),
    (None, ("mcp",), "memory-router[mcp]==0.1.0"),
])
def test_the_requirement_names_the_source_with_the_extras(data, extras, expected):
    assert src.requirement(parsed(data), extras) == expected


def test_a_git_url_recorded_with_its_prefix_is_not_doubled():
    source = parsed({"url": "git+ssh://git@example.com/memory-router.git", "vcs_info": {"vcs": "git",
                                                                                         "commit_id": COMMIT}})
    assert src.requirement(source) == f"memory-router @ git+ssh://git@example.com/memory-router.git@{COMMIT}"


@pytest.mark.parametrize("data, tool, force, expected", [
    (CHECKOUT, "pipx", False, "pipx install '/home/ann/memory-router[mcp]'"),
    (EDITABLE, "pipx", True, "pipx install --force --editable '/home/ann/memory-router[mcp]'"),
    (EDITABLE, "uv tool", False, "uv tool install --editable '/home/ann/memory-router[mcp]'"),
    (GIT, "uv tool", True,
     f"uv tool install --force 'memory-router[mcp] @ git+https://github.com/example/memory-router.git@{COMMIT}'"),
    (None, "pipx", False, "pipx install 'memory-router[mcp]==0.1.0'"),
])
def test_the_install_command_for_each_tool(data, tool, force, expected):
    assert src.install_command(parsed(data), ("mcp",), tool=tool, force=force) == expected


def test_an_unknown_tool_is_refused():
    with pytest.raises(ValueError, match="unknown tool"):
        src.install_command(parsed(None), tool="conda")


def test_a_teammate_gets_the_checkouts_remote_at_its_commit_not_a_path():
    source = src.InstallSource("checkout", VERSION, url="file:///home/ann/memory-router", editable=True,
                               origin="https://github.com/example/memory-router.git", commit=COMMIT)
    command = src.teammate_command(source)
    requirement = f"memory-router @ git+https://github.com/example/memory-router.git@{COMMIT}"
    assert command == f"pipx install {shlex.quote(requirement)}, or uv tool install {shlex.quote(requirement)}"
    assert "/home/ann" not in command and "--editable" not in command


def test_a_checkout_without_a_remote_is_named_by_its_path_and_said_to_be_one():
    command = src.teammate_command(parsed(EDITABLE))
    assert command.startswith("pipx install /home/ann/memory-router, or uv tool install /home/ann/memory-router")
    assert "--editable" not in command and "a path on this machine" in command


def test_a_teammate_of_an_index_install_gets_the_same_release():
    assert src.teammate_command(parsed(None)) == ("pipx install memory-router==0.1.0, "
                                                  "or uv tool install memory-router==0.1.0")


@pytest.mark.parametrize("remote, expected", [
    ("https://github.com/example/memory-router.git", "https://github.com/example/memory-router.git"),
    ("git@github.com:example/memory-router.git", "ssh://git@github.com/example/memory-router.git"),
    ("ssh://git@example.com/x.git", "ssh://git@example.com/x.git"),
    ("/srv/git/memory-router", None),
    ("file:///srv/git/memory-router", None),
    ("../memory-router", None),
    (None, None),
])
def test_only_a_remote_another_machine_can_reach_is_kept(remote, expected):
    assert src.vcs_remote(remote) == expected


@pytest.mark.parametrize("data, phrase", [
    (EDITABLE, "the checkout /home/ann/memory-router (editable)"),
    (GIT, f"https://github.com/example/memory-router.git at commit {COMMIT[:12]}"),
    (WHEEL, "/tmp/dist/memory_router-0.1.0-py3-none-any.whl"),
    (None, "the package index (memory-router 0.1.0)"),
])
def test_describe(data, phrase):
    assert parsed(data).describe() == phrase


def test_this_test_run_is_an_editable_checkout_of_this_repository():
    # the test run imports harness from the repository, installed with pip install -e (the
    # repository's own memory_router.egg-info, found first from the root, must not win)
    root = pathlib.Path(__file__).resolve().parents[2]
    source = src.installed_source()
    assert source.kind == "checkout" and pathlib.Path(source.path).resolve() == root


def test_checkout_origin_reads_the_remote_and_head(tmp_path):
    from support.git_repo import git

    repo = tmp_path / "clone"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "f").write_text("x")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "one")
    assert src.checkout_origin(str(repo)) == (None, git(repo, "rev-parse", "HEAD").strip())
    git(repo, "remote", "add", "origin", "git@github.com:example/memory-router.git")
    assert src.checkout_origin(str(repo))[0] == "ssh://git@github.com/example/memory-router.git"
    assert src.checkout_origin(str(tmp_path / "not-a-repo")) == (None, None)


def test_installed_from_a_checkout_it_names_that_checkout_with_the_extra(tmp_path):
    """Integration: `pip install <a clone>` into a fresh environment (what `pipx install .` does),
    then that environment's installsource names the clone, and the [mcp] it is asked for."""
    from plugin.pluginfiles import clone_head

    clone = clone_head(tmp_path / "memory-router", overlay=("harness/installsource.py", "harness/printedcommands.py"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                                "--quiet", str(clone)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    done = subprocess.run([str(python), "-P", "-c", "from harness import installsource as s; x = s.installed_source(); "
                           "print(x.kind, x.editable); print(s.install_command(x, ('mcp',)))"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["checkout False", f"pipx install {shlex.quote(f'{clone}[mcp]')}"]


def test_the_extra_hint_names_the_source_where_it_runs_and_the_pipx_form():
    hint = src.extra_hint("lab", parsed(GIT), "/opt/venv/bin/python")
    requirement = f"memory-router[lab] @ git+https://github.com/example/memory-router.git@{COMMIT}"
    assert hint == (f"install {shlex.quote(requirement)} where this memory-router runs (/opt/venv/bin/python), "
                    f"e.g. pipx install --force {shlex.quote(requirement)}")
