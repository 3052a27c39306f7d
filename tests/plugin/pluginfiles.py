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
