"""harness.install.extras (issue 22 item 5): install --mcp refuses without the mcp extra, naming the
one command that adds it for how memory-router itself was installed; doctor fails with the same fix."""

import json
import os
import shlex

import pytest

from harness import installsource
from harness.install import extras
from support.settings_project import cli

VERSION = "0.1.0"


@pytest.fixture
def prefixes(tmp_path):
    """A tool environment per installer, marked as that installer marks it."""
    made = {}
    for kind, marker in (("pipx", "pipx_metadata.json"), ("uv tool", "uv-receipt.toml"), ("venv", None)):
        prefix = tmp_path / kind.replace(" ", "-")
        prefix.mkdir()
        if marker:
            (prefix / marker).write_text("{}")
        made[kind] = str(prefix)
    checkout = tmp_path / "checkout"
    (checkout / "harness" / "install").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[project]\nname = 'memory-router'\n")
    made["checkout"] = str(checkout)
    return made


@pytest.mark.parametrize("kind, has_pip, command", [
    ("pipx", True, "pipx install --force 'memory-router[mcp]==0.1.0'"),
    ("uv tool", True, "uv tool install --force 'memory-router[mcp]==0.1.0'"),
    ("venv", True, "{prefix}/bin/python -m pip install 'memory-router[mcp]==0.1.0'"),
    ("venv", False, "uv pip install --python {prefix}/bin/python 'memory-router[mcp]==0.1.0'"),
    ("checkout", True, "{python} -m pip install -e '{checkout}[mcp]'"),
    ("python", True, "{python} -m pip install 'memory-router[mcp]==0.1.0'"),
])
def test_the_install_command_for_each_way_memory_router_was_installed(prefixes, tmp_path, kind, has_pip, command):
    import sys

    base = str(tmp_path / "base")
    site = str(tmp_path / "site-packages")
    if kind == "checkout":
        installed = extras.how_installed(prefix=base, base_prefix=base, purelib=site, has_pip=has_pip,
                                         package_file=os.path.join(prefixes["checkout"], "harness", "install", "x.py"))
    elif kind == "python":
        installed = extras.how_installed(prefix=base, base_prefix=base, purelib=site, has_pip=has_pip,
                                         package_file=os.path.join(site, "harness", "install", "x.py"))
    else:
        installed = extras.how_installed(prefix=prefixes[kind], base_prefix=base, purelib=site, has_pip=has_pip,
                                         package_file=os.path.join(site, "harness", "install", "x.py"))
    assert installed["kind"] == kind
    index = installsource.InstallSource("index", VERSION)  # installed from the package index
    assert extras.extra_command("mcp", installed, source=index) == command.format(
        prefix=prefixes.get(kind), python=shlex.quote(sys.executable), checkout=prefixes["checkout"])


GIT = installsource.InstallSource("git", VERSION, url="https://github.com/example/memory-router.git", commit="abc123")
CHECKOUT = installsource.InstallSource("checkout", VERSION, url="file:///home/ann/memory-router")


@pytest.mark.parametrize("kind, source, command", [
    ("pipx", GIT, "pipx install --force 'memory-router[mcp] @ git+https://github.com/example/memory-router.git@abc123'"),
    ("uv tool", CHECKOUT, "uv tool install --force '/home/ann/memory-router[mcp]'"),
    ("venv", GIT, "{prefix}/bin/python -m pip install "
                  "'memory-router[mcp] @ git+https://github.com/example/memory-router.git@abc123'"),
])
def test_the_fix_installs_again_from_where_memory_router_came_from(prefixes, tmp_path, kind, source, command):
    """issue 29: memory-router is not on the package index, so a fix naming memory-router[mcp]==0.1.0
    fails; it names the git commit or the checkout it was installed from."""
    base, site = str(tmp_path / "base"), str(tmp_path / "site-packages")
    installed = extras.how_installed(prefix=prefixes[kind], base_prefix=base, purelib=site, has_pip=True,
                                     package_file=os.path.join(site, "harness", "install", "x.py"))
    assert extras.extra_command("mcp", installed, source=source) == command.format(prefix=prefixes.get(kind))


def test_this_checkout_is_seen_as_one():
    # the test run imports harness from the repository (an editable install)
    installed = extras.how_installed()
    assert installed["kind"] == "checkout" and os.path.isfile(os.path.join(installed["root"], "pyproject.toml"))
    assert extras.missing_extra("mcp") is None  # the test extra holds mcp


@pytest.fixture
def no_mcp(monkeypatch):
    real = extras.has_module
    monkeypatch.setattr(extras, "has_module", lambda module: module != "mcp" and real(module))
    return extras.extra_command("mcp", extras.how_installed())


def test_install_mcp_refuses_without_the_extra_and_names_the_command(capsys, bare_project, no_mcp):
    code, _out, err = cli(capsys, "install", "--mcp", "--project", bare_project)
    assert code == 1
    assert "the mcp extra is not installed in this memory-router (checkout" in err and "nothing was written" in err
    assert f"(fix: {no_mcp})" in err and "pip install -e" in no_mcp
    assert list(bare_project.iterdir()) == []


def test_doctor_fails_the_mcp_check_with_the_same_fix(capsys, bare_project, monkeypatch, router_on_path):
    assert cli(capsys, "install", "--mcp", "--project", bare_project)[0] == 0
    real = extras.has_module
    monkeypatch.setattr(extras, "has_module", lambda module: module != "mcp" and real(module))
    code, out, _ = cli(capsys, "doctor", "--project", bare_project, "--json")
    (check,) = [c for c in json.loads(out)["checks"] if c["name"] == "mcp server"]
    assert code == 1 and check["status"] == "fail"
    assert check["fix"] == extras.extra_command("mcp", extras.how_installed())
