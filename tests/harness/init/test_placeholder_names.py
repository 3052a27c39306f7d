"""init says that the cluster names it built without an engine are placeholders, and how to have
a model name them (issue 29 item 9: the agent reads ``layer1_unless_binaries`` in the slim index)."""

import json
import os
import shutil

from harness.init.cli import PLACEHOLDER_NAMES
from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git_project  # noqa: F401 - a fixture
from support.settings_project import cli

from .test_cli import HELDOUT2_MEMORY


def test_a_zero_ai_init_says_its_cluster_names_are_placeholders(git_project, monkeypatch, capsys):  # noqa: F811
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", os.path.dirname(hookcommand.router_executable()[0]) + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    code, out, err = cli(capsys, "init", "--yes", "--dry-run")
    assert code == 0, out + err
    assert PLACEHOLDER_NAMES in out
    assert "memory-router clusters build --engine claude" in PLACEHOLDER_NAMES
    code, out, err = cli(capsys, "init", "--yes", "--dry-run", "--json")
    assert json.loads(out)["cluster_file"]["names"] == "placeholders"
