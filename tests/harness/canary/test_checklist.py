"""``memory-router checklist`` on the example store after a slim render: the preconditions it
checks, each met and not met, and its exit codes."""

import json
import pathlib
import shutil

import pytest

from harness.cli import main


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def slim_store(tmp_path, capsys):
    """The example store after a slim render, a project with its config, and the hook installed."""
    from router.config import bundled_example_dir

    example = pathlib.Path(bundled_example_dir())
    memory = tmp_path / "memory"
    memory.mkdir()
    shutil.copy(example / "MEMORY.md", memory / "MEMORY.md")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(example / "memory-layer1-clusters.md", project / "memory-layer1-clusters.md")
    config = (example / "memory-router.toml").read_text() + f'\nmemory_dir = "{memory}"\n'
    (project / "memory-router.toml").write_text(config)
    assert cli(capsys, "install", "--project", project)[0] == 0  # slim render needs a router that runs
    code, out, err = cli(capsys, "slim", "render", "--memory-dir", memory, "--config", project / "memory-router.toml",
                         "--project", project)
    assert code == 0, err
    return project, memory


def test_checklist_ready_on_the_slim_example_store(capsys, slim_store):
    project, memory = slim_store
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project)
    assert code == 0
    assert "- [ ]" not in out.split("For you to do and tick:")[0]
    assert out.count("- [x]") == 7
    assert "```text\nmy PUBLIC_ env var is undefined in the Cloudflare Workers build, I set it as a Secret \u2014 why?\n```" in out
    assert "memory-router canary verdict" in out and "--case cloudflare-cold" in out
    assert "memory-router transcript locate --project" in out
    assert "claude -p" in out and "**Ready:**" in out


def test_checklist_ignores_its_own_verdict_records(capsys, slim_store):
    project, _memory = slim_store
    record = project / ".claude" / "memory-router" / "behavioural-canaries.jsonl"
    record.write_text('{"case": "cloudflare-cold", "evidence": "env_cloudflare_workers_build_secret_vs_text"}\n')
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project)
    assert code == 0 and f"--record {record}" in out


def test_checklist_flags_a_flat_index_and_a_hot_fact(capsys, slim_store):
    project, memory = slim_store
    from router.config import bundled_flat_index

    shutil.copy(bundled_flat_index(), memory / "MEMORY.md")
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project, "--json")
    assert code == 1
    report = json.loads(out)["cases"][0]
    status = {c["text"].split(" (")[0]: c["status"] for c in report["preconditions"]}
    assert status["Phase 2 slim index in place"] == "not met"
    assert report["ready"] is False
    assert any(c["status"] == "not met" and "MEMORY.md" in c["evidence"] and "named at" in c["evidence"]
               for c in report["preconditions"])


def test_checklist_without_hook_or_memory(capsys, tmp_path):
    project = tmp_path / "bare"
    project.mkdir()
    code, out, _ = cli(capsys, "checklist", "--project", project, "--memory-dir", tmp_path / "none")
    assert code == 1
    assert out.count("# Behavioural canary:") == 2  # both bundled cases
    assert "- [?] Phase 2 slim index in place" in out
    assert "- [ ] The router hook is installed" in out


def test_checklist_when_the_installed_hook_finds_no_cluster_file(capsys, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    assert cli(capsys, "install", "--project", project)[0] == 0
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project, "--no-scan")
    assert code == 1 and "the installed hook finds no cluster file" in out


def test_checklist_flags_a_repo_file_naming_the_fact(capsys, slim_store):
    project, _memory = slim_store
    (project / "NOTES.md").write_text("remember env_cloudflare_workers_build_secret_vs_text\n")
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project)
    assert code == 1 and "named in NOTES.md" in out


def test_checklist_unknown_case(capsys, tmp_path):
    code, _, err = cli(capsys, "checklist", "--case", "nope", "--project", tmp_path)
    assert code == 2 and "cloudflare-cold" in err


def test_checklist_excepts_every_file_clusters_build_and_convert_write(capsys, slim_store):
    # The Quick start's `clusters build` writes <name>.md and .tsv (archiving different ones beside
    # them); each names every slug, and the checklist flagged the .tsv: always "Not ready" (issue 11).
    project, memory = slim_store
    flat = next(memory.glob("MEMORY.archive-*"))
    clusters = project / "memory-layer1-clusters.md"  # the config's cluster file
    assert cli(capsys, "clusters", "build", "--index", flat, "--out", clusters)[0] == 0
    assert cli(capsys, "clusters", "convert", clusters, "--to", "md", "--out", project / "copy.md")[0] == 0
    clusters.write_text(clusters.read_text().replace("\n\n", "\n\n\n", 1))
    assert cli(capsys, "clusters", "build", "--index", flat, "--out", clusters)[0] == 0
    written = sorted(p.name for p in project.iterdir())
    assert "memory-layer1-clusters.tsv" in written and any(".archive-" in name for name in written), written
    suite = project / "my-canaries.yaml"  # the Quick start keeps the suite in the project; it names the fact
    suite.write_text((pathlib.Path(__file__).resolve().parents[3] / "canaries" / "spec.yaml").read_text()
                     .replace("\nclusters:", "\n# clusters:"))
    (project / "copy.md").unlink()  # a copy under another name is not memory-router's: it would be flagged
    code, out, _ = cli(capsys, "checklist", suite, "--case", "cloudflare-cold", "--project", project)
    leak_line = next(line for line in out.splitlines() if "No project file names" in line)
    assert leak_line.startswith("- [x]"), leak_line
    assert code == 0 and "**Ready:**" in out


def test_checklist_still_flags_a_copy_of_the_cluster_file_under_another_name(capsys, slim_store):
    project, _memory = slim_store
    assert cli(capsys, "clusters", "convert", project / "memory-layer1-clusters.md", "--to", "tsv",
               "--out", project / "notes.tsv")[0] == 0
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project)
    assert code == 1 and "named in notes.tsv" in out


def test_checklist_names_the_store_it_read_and_how(capsys, slim_store):
    project, memory = slim_store
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project, "--json")
    (case,) = json.loads(out)["cases"]
    store = case["store"]
    assert store["memory_dir"] == str(memory) and store["memory_dir_from"] == f"memory_dir in {project / 'memory-router.toml'}"
    assert store["cluster_file"] == str(project / "memory-layer1-clusters.md")
    assert store["cluster_file_from"].startswith("read by the hook in the ")
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project, "--clusters",
                       project / "memory-layer1-clusters.md")
    assert f"- cluster file: {project / 'memory-layer1-clusters.md'} (--clusters)\n" in out
    assert f"- memory directory: {memory} (memory_dir in {project / 'memory-router.toml'})\n" in out


def test_checklist_without_a_hook_reads_the_suites_store_and_says_so(capsys, tmp_path):
    code, out, _ = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", tmp_path, "--memory-dir",
                       tmp_path / "mem", "--json")
    (case,) = json.loads(out)["cases"]
    assert case["store"]["cluster_file_from"] == "the suite's: no hook is installed"
    assert case["store"]["memory_dir_from"] == "--memory-dir"


def test_checklist_refuses_a_case_whose_fact_is_not_in_the_store(capsys, slim_store):
    # issue 36 item 7: in a project whose store lacks the bundled case's fact, checklist ticked
    # "[x] the fact ... is not always loaded" for a memory the user does not have
    project, _memory = slim_store
    clusters = project / "memory-layer1-clusters.md"
    text = clusters.read_text()
    assert "env_cloudflare_workers_build_secret_vs_text" in text
    # the user's store: the same clusters, that memory under another name
    clusters.write_text(text.replace("env_cloudflare_workers_build_secret_vs_text", "env_workers_public_vars"))
    code, out, err = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project)
    assert code == 1 and out == ""
    assert "env_cloudflare_workers_build_secret_vs_text" in err and "not in the store" in err
    assert str(clusters) in err and "fix:" in err and "behavioural" in err


def test_checklist_in_a_configured_project_without_a_hook_reads_the_projects_store(capsys, tmp_path):
    # issue 36 item 7: with no hook installed yet it checked the bundled example store, although
    # the project's memory-router.toml names the project's own
    from router.config import bundled_cluster_file

    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    text = pathlib.Path(bundled_cluster_file()).read_text()
    (project / "brain" / "memory-layer1-clusters.md").write_text(
        text.replace("env_cloudflare_workers_build_secret_vs_text", "env_workers_public_vars"))
    (project / "memory-router.toml").write_text('clusters = "brain/memory-layer1-clusters.md"\n')
    code, out, err = cli(capsys, "checklist", "--case", "cloudflare-cold", "--project", project,
                         "--memory-dir", tmp_path / "mem")
    assert code == 1 and out == "" and "not in the store" in err
    assert str(project / "brain" / "memory-layer1-clusters.md") in err and "the project's store" in err
