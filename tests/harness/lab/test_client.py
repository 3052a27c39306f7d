"""harness.lab.client: which claude the lab runs, in the documented order, and how it says so."""

import os

import pytest

from harness.lab import client
from router.safeio import current_umask


def fake_claude(directory, version="2.1.328"):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return str(path)


def env_for(tmp_path, **extra):
    env = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "empty-bin")}
    env.update(extra)
    return env


def test_explicit_path_wins(tmp_path):
    explicit = fake_claude(tmp_path / "a")
    other = fake_claude(tmp_path / "b")
    env = env_for(tmp_path, MEMORY_ROUTER_CLAUDE=other)
    assert client.find_claude(explicit, env) == (explicit, "--claude")


def test_env_var_then_cache_then_path(tmp_path):
    in_env = fake_claude(tmp_path / "env")
    env = env_for(tmp_path, MEMORY_ROUTER_CLAUDE=in_env)
    assert client.find_claude(None, env) == (in_env, "$MEMORY_ROUTER_CLAUDE")

    env = env_for(tmp_path, MEMORY_ROUTER_LAB_CACHE=str(tmp_path / "cache"))
    cached = fake_claude(tmp_path / "cache" / client.TESTED_VERSION / "node_modules" / ".bin")
    assert client.find_claude(None, env) == (cached, "lab cache")

    on_path = fake_claude(tmp_path / "bin")
    env = env_for(tmp_path, PATH=str(tmp_path / "bin"))
    assert client.find_claude(None, env) == (on_path, "PATH")


def test_default_cache_is_under_home(tmp_path):
    env = env_for(tmp_path)
    assert client.cached_client("1.2.3", env) == os.path.join(
        str(tmp_path / "home"), ".cache", "memory-router-lab", "claude-code", "1.2.3", "node_modules", ".bin", "claude")


def test_nothing_found_is_one_error_with_the_install_command(tmp_path):
    with pytest.raises(client.ClientMissingError) as err:
        client.find_claude(None, env_for(tmp_path))
    message = str(err.value)
    assert "\n" not in message and f"npm install @anthropic-ai/claude-code@{client.TESTED_VERSION}" in message
    assert err.value.exit_code == 2


@pytest.mark.parametrize("where", ["explicit", "env"])
def test_a_path_that_is_not_executable_is_refused(tmp_path, where):
    missing = str(tmp_path / "nope" / "claude")
    with pytest.raises(client.ClientMissingError):
        if where == "explicit":
            client.find_claude(missing, env_for(tmp_path))
        else:
            client.find_claude(None, env_for(tmp_path, MEMORY_ROUTER_CLAUDE=missing))


def test_version_is_read_and_an_untested_one_warns(tmp_path):
    assert client.client_version(fake_claude(tmp_path / "a", "2.1.328")) == "2.1.328"
    assert client.client_version(fake_claude(tmp_path / "b", "2.0.76")) == "2.0.76"
    assert client.version_warning("2.1.328") is None
    assert "2.0.76 is not the tested version" in client.version_warning("2.0.76")
    assert "unknown version" in client.version_warning(None)


# --------------------------------------------------------------------------- install on first use

FAKE_NPM = """#!/bin/sh
# stands in for npm: `npm install --no-audit --no-fund @anthropic-ai/claude-code@V` in the cwd
echo "$@" >> "{log}"
{body}
"""
INSTALLS = """mkdir -p node_modules/.bin
version="${4##*@}"
printf '#!/bin/sh\\necho "%s (Claude Code)"\\n' "$version" > node_modules/.bin/claude
chmod +x node_modules/.bin/claude
"""
FAILS = "echo 'npm ERR! network request to https://registry.npmjs.org failed' >&2\nexit 1\n"


def fake_npm(tmp_path, body=INSTALLS):
    bin_dir = tmp_path / "npm-bin"
    bin_dir.mkdir(exist_ok=True)
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(log=tmp_path / "npm.log", body=body))
    npm.chmod(0o755)
    return str(bin_dir)


def test_the_tested_client_is_installed_into_the_lab_cache_once(tmp_path):
    env = env_for(tmp_path, PATH=fake_npm(tmp_path) + ":/usr/bin:/bin")
    path = client.ensure_tested_client(env)
    assert path == client.cached_client(client.TESTED_VERSION, env)
    assert client.client_version(path) == client.TESTED_VERSION
    assert os.stat(client.cache_dir(client.TESTED_VERSION, env)).st_mode & 0o777 == 0o777 & ~current_umask()
    assert client.ensure_tested_client(env) == path                     # second use: found, not installed
    log = (tmp_path / "npm.log").read_text().splitlines()
    assert log == [f"install --no-audit --no-fund @anthropic-ai/claude-code@{client.TESTED_VERSION}"]
    cache = os.path.dirname(client.cache_dir(client.TESTED_VERSION, env))
    assert sorted(os.listdir(cache)) == [f".install-{client.TESTED_VERSION}.lock", client.TESTED_VERSION]


def test_a_claude_on_path_is_not_taken_for_the_tested_one(tmp_path):
    fake_claude(tmp_path / "npm-bin", "2.0.76")
    env = env_for(tmp_path, PATH=fake_npm(tmp_path) + ":/usr/bin:/bin")
    assert client.client_version(client.ensure_tested_client(env)) == client.TESTED_VERSION


def test_memory_router_claude_is_used_and_nothing_installed(tmp_path):
    mine = fake_claude(tmp_path / "mine", "2.1.300")
    env = env_for(tmp_path, PATH=fake_npm(tmp_path) + ":/usr/bin:/bin", MEMORY_ROUTER_CLAUDE=mine)
    assert client.ensure_tested_client(env) == mine and not (tmp_path / "npm.log").exists()


def test_without_npm_the_failure_is_one_line_saying_what_to_install(tmp_path):
    with pytest.raises(client.ClientMissingError) as err:
        client.ensure_tested_client(env_for(tmp_path))
    message = str(err.value)
    assert "\n" not in message and "npm is not installed" in message and "install Node.js with npm" in message


def test_a_failed_npm_install_leaves_no_half_installed_version(tmp_path):
    env = env_for(tmp_path, PATH=fake_npm(tmp_path, FAILS) + ":/usr/bin:/bin")
    with pytest.raises(client.ClientMissingError) as err:
        client.ensure_tested_client(env)
    assert "npm ERR! network request" in str(err.value) and "\n" not in str(err.value)
    cache = os.path.dirname(client.cache_dir(client.TESTED_VERSION, env))
    assert os.listdir(cache) == [f".install-{client.TESTED_VERSION}.lock"]


def test_a_broken_version_directory_is_replaced(tmp_path):
    env = env_for(tmp_path, PATH=fake_npm(tmp_path) + ":/usr/bin:/bin")
    broken = tmp_path / "home" / ".cache" / "memory-router-lab" / "claude-code" / client.TESTED_VERSION
    (broken / "node_modules").mkdir(parents=True)                      # an install killed inside npm
    assert client.client_version(client.ensure_tested_client(env)) == client.TESTED_VERSION


REALCLIENT_TEST = """
import pytest

@pytest.mark.realclient
def test_needs_the_client():
    pass

def test_plain():
    pass
"""


@pytest.mark.parametrize("with_npm", [True, False])
def test_the_test_suite_installs_the_client_before_the_first_realclient_test(tmp_path, with_npm):
    """tests/support/realclient.py in a pytest run of its own, on a home with no client."""
    import subprocess
    import sys

    tests_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    (tmp_path / "test_one.py").write_text(REALCLIENT_TEST)
    # the fake npm's sh and mkdir come from /bin; without npm the PATH holds the interpreter alone
    path = fake_npm(tmp_path) + ":/usr/bin:/bin" if with_npm else os.path.dirname(sys.executable)
    if not with_npm:
        import shutil

        assert shutil.which("npm", path=path) is None
    # the checkout first: tests/harness (no __init__.py) must not pass for the harness package
    env = {"HOME": str(tmp_path / "home"), "PATH": path, "PYTHONPATH": os.pathsep.join([os.path.dirname(tests_dir),
                                                                                      tests_dir])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "support.realclient", "-p", "no:cacheprovider",
                           "-o", "markers=realclient: needs the client", str(tmp_path / "test_one.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    if with_npm:
        assert done.returncode == 0, done.stdout + done.stderr
        assert os.path.exists(client.cached_client(client.TESTED_VERSION, env))
    else:
        assert done.returncode == 1 and "1 passed, 1 error" in done.stdout, done.stdout + done.stderr  # not a skip
        (line,) = [line for line in done.stdout.splitlines() if line.startswith("the realclient tests need")]
        assert "npm is not installed" in line and line.endswith("(fix: install Node.js with npm (e.g. apt-get "
                                                                 "install nodejs npm), or point $MEMORY_ROUTER_CLAUDE "
                                                                 "at a client)")
