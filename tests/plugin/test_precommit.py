"""The hooks of .pre-commit-hooks.yaml, run the way a user runs them: ``pre-commit try-repo`` on a
fixture repository, once with files each hook passes and once with files each hook fails.

The hooks repository is a clone of this checkout's HEAD with the working tree's
.pre-commit-hooks.yaml on top (try-repo on the checkout itself would also pick up whatever is
uncommitted in it). try-repo builds a fresh environment each time (pip installs memory-router),
so each case is one try-repo run of all three hooks, about 10 s."""

import re
import shutil
import subprocess
import sys

import pytest
import yaml

from plugin.pluginfiles import REPO_ROOT, clone_head, git

HOOK_NAMES = {"memory-router-clusters-check": "memory-router clusters check",
              "memory-router-canaries": "memory-router canary run",
              "memory-router-gate": "memory-router gate check"}
FIXTURE_LEDGER = REPO_ROOT / "tests" / "fixtures" / "citation-gate" / ".wolf" / "decisions.md"
SETX_PROMPT = "why doesn't the Bash tool pick up env vars I set with setx? I even rebooted"


def manifest():
    return yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_manifest_declares_the_three_hooks_with_the_names_the_runs_report():
    assert {hook["id"]: hook["name"] for hook in manifest()} == HOOK_NAMES
    for hook in manifest():
        assert hook["language"] == "python", hook["id"]


@pytest.mark.parametrize("path, hook_id, selected", [
    ("brain/memory-layer1-clusters.md", "memory-router-clusters-check", True),
    ("brain/memory-layer1-clusters.tsv", "memory-router-clusters-check", True),
    ("brain/memory-layer1-clusters.learned.tsv", "memory-router-clusters-check", False),
    ("notes.md", "memory-router-clusters-check", False),
    ("notes.md", "memory-router-gate", True),
    ("docs/decisions-and-notes.md", "memory-router-gate", True),
    (".wolf/decisions.md", "memory-router-gate", False),
    ("DECISIONS.md", "memory-router-gate", False),
    ("sub/DECISIONS.md", "memory-router-gate", False),
    ("brain/memory-layer1-clusters.md", "memory-router-gate", False),
    ("canaries/suite.yaml", "memory-router-canaries", True),
    ("memory-router.toml", "memory-router-canaries", True),
    ("brain/memory-layer1-clusters.tsv", "memory-router-canaries", True),
    ("src/app.py", "memory-router-canaries", False),
])
def test_which_files_each_hook_runs_on(path, hook_id, selected):
    """pre-commit's own rule: ``files`` searched (re.search), then ``exclude`` searched."""
    hook = next(h for h in manifest() if h["id"] == hook_id)
    chosen = bool(re.search(hook.get("files", ""), path)) and not (
        hook.get("exclude") and re.search(hook["exclude"], path))
    assert chosen is selected


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory):
    if not (REPO_ROOT / ".git").exists():
        pytest.fail(f"{REPO_ROOT} is not a git checkout: pre-commit installs hooks from a git repository",
                    pytrace=False)
    return clone_head(tmp_path_factory.mktemp("hooks") / "memory-router", overlay=[".pre-commit-hooks.yaml"])


def fixture_repo(root, *, cluster_file, case, note):
    (root / "brain").mkdir(parents=True)
    (root / ".wolf").mkdir()
    (root / "canaries").mkdir()
    (root / "brain" / "memory-layer1-clusters.md").write_text(cluster_file, encoding="utf-8")
    shutil.copyfile(FIXTURE_LEDGER, root / ".wolf" / "decisions.md")
    (root / "notes.md").write_text(note, encoding="utf-8")
    suite = {"clusters": "../brain/memory-layer1-clusters.md", "cases": [dict(id="setx", prompt=SETX_PROMPT, **case)]}
    (root / "canaries" / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    git("init", "--quiet", cwd=root)
    git("add", "-A", cwd=root)
    return root


def try_repo(hooks_repo, repo, *extra):
    done = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", "--color", "never", str(hooks_repo),
                           "--all-files", *extra], cwd=repo, capture_output=True, text=True, timeout=600)
    verdicts = {}
    for hook_id, name in HOOK_NAMES.items():
        found = re.search(rf"^{re.escape(name)}\.+(Passed|Failed|\(no files to check\)Skipped)$", done.stdout, re.M)
        verdicts[hook_id] = found.group(1) if found else None
    return done, verdicts


def test_every_hook_passes_on_a_sound_repository(tmp_path, hooks_repo, example_cluster_file):
    repo = fixture_repo(tmp_path / "repo", cluster_file=example_cluster_file.read_text(encoding="utf-8"),
                        case={"injects": ["env_bash_tool_env_var_caching"]},
                        note="Retention follows D-003.\n")
    done, verdicts = try_repo(hooks_repo, repo)
    assert verdicts == dict.fromkeys(HOOK_NAMES, "Passed"), done.stdout + done.stderr
    assert done.returncode == 0


def test_every_hook_fails_on_its_own_fault(tmp_path, hooks_repo, example_cluster_file):
    broken = example_cluster_file.read_text(encoding="utf-8").replace("- layer1_01 · 5 ·", "- layer1_01 · five ·", 1)
    repo = fixture_repo(tmp_path / "repo", cluster_file=broken,
                        case={"silent": True},
                        note="Retention is 30 days per D-910.\n")
    # the canary suite routes against the sound store: its failure is its own expectation's
    (repo / "brain" / "sound-clusters.md").write_text(example_cluster_file.read_text(encoding="utf-8"),
                                                      encoding="utf-8")
    suite = repo / "canaries" / "suite.yaml"
    suite.write_text(suite.read_text(encoding="utf-8").replace("memory-layer1-clusters.md", "sound-clusters.md"),
                     encoding="utf-8")
    git("add", "-A", cwd=repo)
    done, verdicts = try_repo(hooks_repo, repo)
    assert verdicts == dict.fromkeys(HOOK_NAMES, "Failed"), done.stdout + done.stderr
    assert done.returncode == 1
    assert "brain/memory-layer1-clusters.md:11:13: expected the size (an integer)" in done.stdout
    assert "FAIL setx" in done.stdout
    assert "BLOCKED: D-910 is not in the decision ledger" in done.stdout


def test_files_named_like_options_are_checked_as_files_and_canaries_skip_without_a_suite(
        tmp_path, hooks_repo, example_cluster_file):
    """issue 30 item 1 and issue 29 item 9. A committed `-h` sorts first: pre-commit ran `gate check
    -h ...`, usage was printed, exit 0, and every file passed; `--foo.md` failed naming no file.
    Every entry now ends with `--`, so both are files and the gate's verdict is theirs. And in a
    repository without `canaries/` the canary hook skips (it was exit 2), saying why."""
    repo = tmp_path / "repo"
    (repo / "brain").mkdir(parents=True)
    (repo / ".wolf").mkdir()
    shutil.copyfile(FIXTURE_LEDGER, repo / ".wolf" / "decisions.md")
    (repo / "-h").write_text("Retention is 30 days per D-910.\n", encoding="utf-8")
    (repo / "--foo.md").write_text("Retention is 30 days per D-911.\n", encoding="utf-8")
    (repo / "notes.md").write_text("Retention follows D-003.\n", encoding="utf-8")
    broken = example_cluster_file.read_text(encoding="utf-8").replace("- layer1_01 · 5 ·", "- layer1_01 · five ·", 1)
    (repo / "brain" / "--memory-layer1-clusters.md").write_text(broken, encoding="utf-8")
    (repo / "memory-router.toml").write_text("", encoding="utf-8")
    git("init", "--quiet", cwd=repo)
    git("add", "-A", cwd=repo)
    done, verdicts = try_repo(hooks_repo, repo, "--verbose")
    assert verdicts == {"memory-router-clusters-check": "Failed", "memory-router-canaries": "Passed",
                        "memory-router-gate": "Failed"}, done.stdout + done.stderr
    assert "brain/--memory-layer1-clusters.md:11:13: expected the size (an integer)" in done.stdout
    assert "\n-h: BLOCKED\n  BLOCKED: D-910 is not in the decision ledger" in done.stdout
    assert "\n--foo.md: BLOCKED\n  BLOCKED: D-911 is not in the decision ledger" in done.stdout
    assert "notes.md: ok" in done.stdout
    assert "no canaries/ directory; canaries skipped" in done.stdout
