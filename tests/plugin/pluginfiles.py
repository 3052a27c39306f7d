"""What the plugin, pre-commit and action tests share: where the plugin is, and a git helper."""

import pathlib
import subprocess

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO_ROOT / "plugins" / "memory-router"
LAUNCHER = PLUGIN_DIR / "scripts" / "memory-router-launch"

GIT_IDENTITY = ("-c", "user.name=memory-router tests", "-c", "user.email=tests@example.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")


def git(*args, cwd=None):
    done = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


MARKETPLACE = "memory-router"
PLUGIN_ID = f"memory-router@{MARKETPLACE}"


def memory_router_exe():
    """The installed console script beside this interpreter (else on PATH)."""
    import os
    import shutil
    import sys

    return shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")


def install_plugin(claude, env, cwd, scope="user"):
    """``claude plugin marketplace add <this checkout>`` then ``claude plugin install``, as a user
    types them, in the client environment ``env`` (its HOME is where the records go)."""
    for argv in (["plugin", "marketplace", "add", str(REPO_ROOT)],
                 ["plugin", "install", PLUGIN_ID, "--scope", scope]):
        done = subprocess.run([claude, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)


def clone_head(dest, overlay=()):
    """A clone of this checkout's HEAD at ``dest``, with the working tree's copies of ``overlay``
    (paths relative to the root) committed on top: what a user installs from, without whatever
    else is uncommitted here."""
    import shutil

    if not (REPO_ROOT / ".git").exists():
        raise AssertionError(f"{REPO_ROOT} is not a git checkout")
    git("clone", "--quiet", "--shared", str(REPO_ROOT), str(dest))
    for name in overlay:
        shutil.copyfile(REPO_ROOT / name, dest / name)
    if git("status", "--porcelain", cwd=dest).strip():
        git("add", "--", *overlay, cwd=dest)
        git("commit", "--quiet", "-m", "the working tree's " + ", ".join(overlay), cwd=dest)
    return dest


RECORDS = pathlib.Path(__file__).resolve().parent / "fixtures" / "records"


def write_records(home, project, scope="user", disabled_locally=False, repo=REPO_ROOT, copy=True):
    """Claude Code 2.1.328's records of the plugin installed from the marketplace at ``repo`` in
    ``scope`` (user or project), as the client writes them (fixtures/records); ``copy`` also puts
    the plugin's copy at the record's installPath. Returns the installPath."""
    import json
    import shutil

    def fill(name):
        text = (RECORDS / name).read_text(encoding="utf-8")
        for key, value in (("{home}", home), ("{project}", project), ("{repo}", repo)):
            text = text.replace(key, str(value))
        return text

    plugins = pathlib.Path(home) / ".claude" / "plugins"
    plugins.mkdir(parents=True, exist_ok=True)
    settings = (pathlib.Path(home) / ".claude" / "settings.json" if scope == "user"
                else pathlib.Path(project) / ".claude" / "settings.json")
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(fill(f"{scope}-settings.json"), encoding="utf-8")
    (plugins / "installed_plugins.json").write_text(fill(f"installed-{scope}.json"), encoding="utf-8")
    (plugins / "known_marketplaces.json").write_text(fill("known_marketplaces.json"), encoding="utf-8")
    if disabled_locally:
        local = pathlib.Path(project) / ".claude" / "settings.local.json"
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(fill("local-settings-disabled.json"), encoding="utf-8")
    install_path = json.loads(fill(f"installed-{scope}.json"))["plugins"][PLUGIN_ID][0]["installPath"]
    if copy:
        shutil.copytree(pathlib.Path(repo) / "plugins" / "memory-router", install_path)
    return install_path
