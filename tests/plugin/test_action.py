"""The composite action in action.yml, run here step by step: each ``run`` step's script under
``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``), its ``env`` expressions
resolved from a stub context (the inputs and the pull request), in a fixture repository.

The install step is run for real once, into a fresh virtual environment, installing a clone of
this checkout's HEAD (``install-from``); every other step runs the memory-router it installed.
``actions/setup-python`` is GitHub's and is not run."""

import os
import re
import shutil
import subprocess
import venv

import pytest
import yaml

from plugin.pluginfiles import REPO_ROOT, clone_head, git

ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = {step.get("name", step.get("uses")): step for step in ACTION["runs"]["steps"]}
FIXTURE_LEDGER = REPO_ROOT / "tests" / "fixtures" / "citation-gate" / ".wolf" / "decisions.md"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def expand(value, context):
    """``value`` with every ``${{ expr }}`` replaced from ``context``; an unknown one fails."""
    def one(match):
        assert match.group(1) in context, f"no stub for the expression {match.group(1)!r}"
        return context[match.group(1)]
    return EXPRESSION.sub(one, str(value))


def stub_context(inputs=None, pull_request=None):
    """What GitHub would put in the expressions: the inputs (defaults, themselves expanded from
    the pull request) and the pull request event."""
    pr = {"base.sha": "", "head.sha": "", "body": ""} | (pull_request or {})
    context = {f"github.event.pull_request.{key}": value for key, value in pr.items()}
    for name, spec in ACTION["inputs"].items():
        value = (inputs or {}).get(name, spec.get("default", ""))
        context[f"inputs.{name}"] = expand(value, context)
    context["steps.canaries.outputs.junit"] = ""
    return context


def run_step(name, cwd, path, inputs=None, pull_request=None, extra_env=None):
    step = STEPS[name]
    context = stub_context(inputs, pull_request)
    script = cwd.parent / f"step-{abs(hash(name))}.sh"
    script.write_text(step["run"], encoding="utf-8")
    env = {"PATH": path, "HOME": os.environ["HOME"], "LANG": "C.UTF-8",
           "GITHUB_OUTPUT": str(cwd.parent / "github-output")}
    env.update({key: expand(value, context) for key, value in step.get("env", {}).items()})
    env.update(extra_env or {})
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


# --- the file itself -------------------------------------------------------------------------

def test_every_input_is_documented_and_every_step_named():
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description", "").strip(), name
        assert "default" in spec, name
    assert ACTION["runs"]["using"] == "composite"
    assert [s.get("name") for s in ACTION["runs"]["steps"][1:]] == [
        "Install memory-router", "memory-router clusters check", "memory-router canary run",
        "memory-router gate check"]


def test_setup_python_is_pinned_to_a_major_version():
    first = ACTION["runs"]["steps"][0]
    assert re.fullmatch(r"actions/setup-python@v\d+", first["uses"])
    assert first["with"]["python-version"] == "${{ inputs.python-version }}"


def test_scripts_take_inputs_only_through_the_environment():
    """A pull request's body is text anyone can write: an expression inside ``run`` would be
    pasted into the script before bash reads it (script injection)."""
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
            assert step["shell"] == "bash"


def test_the_default_install_is_the_actions_own_revision_not_an_index_release():
    # issue 29: memory-router==0.1.0 is on no package index; the action's own directory is the
    # commit or tag `uses:` pinned, so it always exists
    assert ACTION["inputs"]["version"]["default"] == ""
    assert ACTION["inputs"]["install-from"]["default"] == ""
    assert "GITHUB_ACTION_PATH" in STEPS["Install memory-router"]["run"]


def test_an_unknown_expression_has_no_stub():
    with pytest.raises(AssertionError, match="no stub"):
        expand("${{ secrets.TOKEN }}", stub_context())


# --- the steps, run ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """PATH holding the memory-router the install step put into a fresh virtual environment."""
    root = tmp_path_factory.mktemp("action")
    source = clone_head(root / "memory-router")
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    path = os.pathsep.join([str(root / "venv" / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    (root / "work").mkdir()
    # the default install: the action's own directory (GitHub sets GITHUB_ACTION_PATH to it)
    done = run_step("Install memory-router", root / "work", path, extra_env={"GITHUB_ACTION_PATH": str(source)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"installing memory-router from {source}" in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("memory-router ")
    return path


def test_install_step_installs_the_actions_own_revision_unless_told_otherwise(tmp_path):
    """Run with a ``python`` stub that records its arguments: the default is the action's own
    directory; ``version`` names an index release, ``install-from`` anything pip takes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, body in (("python", 'printf "%s\\n" "$*" >> "$RECORD"'), ("memory-router", "echo memory-router 9")):
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (bin_dir / tool).chmod(0o755)
    (tmp_path / "work").mkdir()
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    action = str(tmp_path / "action")
    for inputs, expected in (({}, action), ({"version": "0.2.0"}, "memory-router==0.2.0"),
                             ({"install-from": "."}, "."), ({"install-from": ".", "version": "0.2.0"}, ".")):
        record = tmp_path / "record"
        record.unlink(missing_ok=True)
        done = run_step("Install memory-router", tmp_path / "work", path, inputs=inputs,
                        extra_env={"RECORD": str(record), "GITHUB_ACTION_PATH": action})
        assert done.returncode == 0, done.stderr
        assert record.read_text(encoding="utf-8").split()[-1] == expected


def project(root, cluster_text, note="Retention follows D-003.\n"):
    """A repository with a ledger, a cluster file and a suite: its first commit is the base."""
    (root / ".wolf").mkdir(parents=True)
    (root / "brain").mkdir()
    (root / "canaries").mkdir()
    shutil.copyfile(FIXTURE_LEDGER, root / ".wolf" / "decisions.md")
    (root / "brain" / "memory-layer1-clusters.md").write_text(cluster_text, encoding="utf-8")
    (root / "notes.md").write_text(note, encoding="utf-8")
    git("init", "--quiet", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "base", cwd=root)
    return root


def suite(root, expectation):
    (root / "canaries" / "suite.yaml").write_text(yaml.safe_dump({
        "clusters": "../brain/memory-layer1-clusters.md",
        "cases": [{"id": "setx", "prompt": "why doesn't the Bash tool pick up env vars I set with setx?",
                   **expectation}]}), encoding="utf-8")


@pytest.fixture
def sound(tmp_path, example_cluster_file):
    return project(tmp_path / "repo", example_cluster_file.read_text(encoding="utf-8"))


def test_clusters_step_passes_a_sound_file_and_fails_a_broken_one(sound, installed):
    done = run_step("memory-router clusters check", sound, installed)
    assert done.returncode == 0, done.stdout + done.stderr
    cluster = sound / "brain" / "memory-layer1-clusters.md"
    cluster.write_text(cluster.read_text(encoding="utf-8").replace("- layer1_01 · 5 ·", "- layer1_01 · five ·"),
                       encoding="utf-8")
    done = run_step("memory-router clusters check", sound, installed)
    assert done.returncode == 1
    assert "brain/memory-layer1-clusters.md:11:13: expected the size" in done.stdout


def test_clusters_step_takes_a_list_and_none(sound, installed):
    (sound / "other.md").write_text("not a cluster file\n", encoding="utf-8")
    done = run_step("memory-router clusters check", sound, installed,
                    inputs={"clusters": "brain/memory-layer1-clusters.md\nother.md"})
    assert done.returncode == 1 and "other.md" in done.stdout + done.stderr
    done = run_step("memory-router clusters check", sound, installed, inputs={"clusters": "none"})
    assert done.returncode == 0 and "skipped" in done.stdout


def test_canary_step_writes_junit_and_fails_a_failing_case(sound, installed):
    suite(sound, {"injects": ["env_bash_tool_env_var_caching"]})
    done = run_step("memory-router canary run", sound, installed)
    assert done.returncode == 0, done.stdout + done.stderr
    junit = (sound / "memory-router-canaries.xml").read_text(encoding="utf-8")
    assert "<testsuite" in junit and 'failures="0"' in junit
    assert (sound.parent / "github-output").read_text(encoding="utf-8") == "junit=memory-router-canaries.xml\n"
    suite(sound, {"silent": True})
    done = run_step("memory-router canary run", sound, installed)
    assert done.returncode == 1 and "FAIL setx" in done.stdout
    assert 'failures="1"' in (sound / "memory-router-canaries.xml").read_text(encoding="utf-8")


def test_canary_step_is_skipped_without_suites(sound, installed):
    shutil.rmtree(sound / "canaries")
    done = run_step("memory-router canary run", sound, installed)
    assert done.returncode == 0 and "canaries skipped" in done.stdout
    assert not (sound / "memory-router-canaries.xml").exists()


def pull_request(repo, files, body=""):
    """Commit ``files`` (``{path: text or bytes}``) on top of the base; the stub event of that change."""
    base = git("rev-parse", "HEAD", cwd=repo).strip()
    for name, content in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            (repo / name).write_bytes(content)
        else:
            (repo / name).write_text(content, encoding="utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "--quiet", "-m", "change", cwd=repo)
    return {"base.sha": base, "head.sha": git("rev-parse", "HEAD", cwd=repo).strip(), "body": body}


def test_gate_step_passes_live_citations(sound, installed):
    event = pull_request(sound, {"docs/retention.md": "Kept 14 days (D-003).\n", "logo.bin": bytes(range(256))},
                         body="Documents D-003.")
    done = run_step("memory-router gate check", sound, installed, pull_request=event)
    assert done.returncode == 0, done.stdout + done.stderr


def test_gate_step_fails_a_fabricated_id_in_a_changed_file(sound, installed):
    event = pull_request(sound, {"docs/retention.md": "Kept 30 days per D-910.\n"})
    done = run_step("memory-router gate check", sound, installed, pull_request=event)
    assert done.returncode == 1
    assert "BLOCKED: D-910 is not in the decision ledger" in done.stdout


def test_gate_step_fails_a_fabricated_id_in_the_body_only(sound, installed):
    event = pull_request(sound, {"docs/retention.md": "Kept 14 days (D-003).\n"},
                         body="Implements D-910 as agreed.\n$(touch pwned) `touch pwned`")
    done = run_step("memory-router gate check", sound, installed, pull_request=event)
    assert done.returncode == 1 and "D-910" in done.stdout
    assert not (sound / "pwned").exists()


def test_gate_step_leaves_ledgers_and_cluster_files_out(sound, installed):
    ledger = (sound / ".wolf" / "decisions.md").read_text(encoding="utf-8")
    event = pull_request(sound, {".wolf/decisions.md": ledger + "\nSee D-911 later.\n", "DECISIONS.md": "- D-912 — x\n"})
    done = run_step("memory-router gate check", sound, installed, pull_request=event)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no changed text file to check" in done.stdout


def test_gate_step_off_and_outside_a_pull_request(sound, installed):
    done = run_step("memory-router gate check", sound, installed, inputs={"gate": "false"})
    assert done.returncode == 0 and "gate skipped" in done.stdout
    done = run_step("memory-router gate check", sound, installed)
    assert done.returncode == 0 and "not a pull request" in done.stdout



def test_changed_files_named_like_options_are_checked_as_files(sound, installed, example_cluster_file):
    """issue 30 item 1: a changed file named -h first made `gate check -h ...` print usage and exit
    0, passing the pull request; the steps now end options with --."""
    event = pull_request(sound, {"-h": "Kept 30 days per D-910.\n", "--x.md": "Kept 30 days per D-911.\n"})
    done = run_step("memory-router gate check", sound, installed, pull_request=event)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "-h: BLOCKED" in done.stdout and "--x.md: BLOCKED" in done.stdout
    broken = example_cluster_file.read_text(encoding="utf-8").replace("- layer1_01 · 5 ·", "- layer1_01 · five ·")
    (sound / "--memory-layer1-clusters.md").write_text(broken, encoding="utf-8")
    git("add", "-A", cwd=sound)
    done = run_step("memory-router clusters check", sound, installed)
    assert done.returncode == 1
    assert "--memory-layer1-clusters.md:11:13: expected the size" in done.stdout


def test_the_docs_pin_only_tags_the_repository_has():
    """issue 29: pre-commit's `rev: v0.1.0` and the action's `@v0.1.0` named a tag no one had
    created. A pinned `vX.Y.Z` must be a tag of this repository (a release creates it:
    docs/development.md); otherwise the docs pin a commit."""
    tags = set(git("tag", "--list", cwd=REPO_ROOT).split()) if (REPO_ROOT / ".git").exists() else set()
    pins = []
    for name in ("README.md", "docs/plugin.md", "plugins/memory-router/README.md"):
        text = (REPO_ROOT / name).read_text(encoding="utf-8")
        pins += [(name, tag) for tag in re.findall(r"(?:rev:\s*|memory-router@)(v\d+\.\d+\.\d+)", text)]
    assert [(name, tag) for name, tag in pins if tag not in tags] == []
