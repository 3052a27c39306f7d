"""harness.canary.suiteargs: a suite without ``clusters:`` reads the project's store, found as every
command finds it (issue 22 item 2), and says which file it read; the bundled store is named whole."""

import json
import textwrap

import pytest

from harness.canary import suiteargs
from support.canary_store import STORE
from support.settings_project import cli

# injects a member of the small store, which the bundled example store does not hold
SUITE = textwrap.dedent("""\
    cases:
      - id: migrations
        prompt: "who reviews database migrations in postgres?"
        injects: [feedback_migrations_reviewed]
""")


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with its own store in brain/ and a suite without ``clusters:`` in it; the
    command runs in the project, as a user would run it."""
    root = tmp_path / "project"
    (root / "brain").mkdir(parents=True)
    (root / "brain" / "memory-layer1-clusters.md").write_text(STORE, encoding="utf-8")
    (root / "my-canaries.yaml").write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def _run_json(capsys, *args):
    code, out, err = cli(capsys, "canary", "run", "--json", *args)
    return code, (json.loads(out) if out.strip() else None), err


def test_a_suite_without_clusters_in_a_project_checks_the_projects_store(project, capsys):
    code, report, _ = _run_json(capsys, "my-canaries.yaml")
    assert code == 0 and report["ok"]
    assert report["suites"][0]["clusters"] == str(project / "brain" / "memory-layer1-clusters.md")


@pytest.mark.parametrize("where", ["config", "environment"])
def test_the_config_and_the_environment_name_the_store_as_for_the_hook(project, tmp_path, capsys, monkeypatch,
                                                                        where):
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text(STORE, encoding="utf-8")
    (project / "brain" / "memory-layer1-clusters.md").unlink()
    if where == "config":
        (project / "memory-router.toml").write_text(f'clusters = "{elsewhere}"\n')
    else:
        monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", str(elsewhere))
    code, report, _ = _run_json(capsys, "my-canaries.yaml")
    assert code == 0 and report["suites"][0]["clusters"] == str(elsewhere)


def test_outside_a_project_the_error_names_the_bundled_store_whole_and_why(project, tmp_path, capsys,
                                                                           monkeypatch):
    from router.config import bundled_cluster_file

    monkeypatch.chdir(tmp_path)
    code, _out, err = cli(capsys, "canary", "run", str(project / "my-canaries.yaml"))
    assert code == 2
    assert f"not in {bundled_cluster_file()}, the bundled example store: the suite has no 'clusters:' line" in err
    # the old message named only "memory-layer1-clusters.md": the project's own file's name
    assert "(not in memory-layer1-clusters.md)" not in err


def test_clusters_on_the_command_line_and_in_the_suite_still_win(project, tmp_path, capsys, example_cluster_file):
    code, _report, err = _run_json(capsys, "my-canaries.yaml", "--clusters", str(example_cluster_file))
    assert code == 2 and f"(not in {example_cluster_file.name})" in err
    (project / "with-line.yaml").write_text(SUITE + f"clusters: {example_cluster_file}\n", encoding="utf-8")
    code, _report, err = _run_json(capsys, "with-line.yaml")
    assert code == 2 and "with-line.yaml:4" in err


def test_a_missing_project_store_is_named_with_how_it_was_found(project, capsys):
    (project / "memory-router.toml").write_text('clusters = "brain/gone.md"\n')
    code, _report, err = _run_json(capsys, "my-canaries.yaml")
    assert code == 2
    assert "gone.md" in err and "clusters in " in err and "memory-router.toml" in err


def test_project_store_default_is_the_bundled_store_with_no_project(tmp_path, monkeypatch):
    from harness.project import BUNDLED_STORE
    from router.config import bundled_cluster_file

    monkeypatch.chdir(tmp_path)
    assert suiteargs.project_store_default() == (bundled_cluster_file(), BUNDLED_STORE)
