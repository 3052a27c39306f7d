"""``memory-router gate check FILE... | -``: the gate's rules over text no write passes through."""

import json
import pathlib
import re
import shutil

import pytest

from router.gate.citations import BYPASS_MARKER

FIXTURE_LEDGER = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "citation-gate" / ".wolf" / "decisions.md"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / ".wolf").mkdir(parents=True)
    (root / ".git").mkdir()
    shutil.copyfile(FIXTURE_LEDGER, root / ".wolf" / "decisions.md")
    (root / "docs").mkdir()
    return root


def ledger_ids():
    """(a live id, a revoked id, an id the ledger lacks), read from the fixture ledger."""
    found = re.findall(r"^## (D-\d+): (\w+)", FIXTURE_LEDGER.read_text(encoding="utf-8"), re.M)
    live = [i for i, word in found if word not in ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")]
    revoked = [i for i, word in found if word == "REVOKED"]
    top = max(int(i[2:]) for i, _ in found)
    return live[0], revoked[0], f"D-{top + 900:03d}"


def test_clean_file_passes(run_cli, project):
    live, _revoked, _fake = ledger_ids()
    doc = project / "docs" / "a.md"
    doc.write_text(f"Per {live}.\n", encoding="utf-8")
    result = run_cli("gate", "check", doc, cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == f"{doc}: ok\n"


def test_fabricated_id_exits_1_and_explains(run_cli, project):
    live, _revoked, fake = ledger_ids()
    good, bad = project / "docs" / "good.md", project / "docs" / "bad.md"
    good.write_text(f"Per {live}.\n", encoding="utf-8")
    bad.write_text(f"Per {fake.lower()}.\n", encoding="utf-8")
    result = run_cli("gate", "check", good, bad, cwd=project)
    assert result.returncode == 1
    out = result.stdout.decode()
    assert f"{good}: ok\n" in out
    assert f"{bad}: BLOCKED\n  BLOCKED: {fake} is not in the decision ledger" in out
    assert "Do not substitute a lower id" in out


def test_warning_only_exits_0(run_cli, project):
    _live, revoked, _fake = ledger_ids()
    doc = project / "docs" / "a.md"
    doc.write_text(f"As {revoked} said.\n", encoding="utf-8")
    result = run_cli("gate", "check", doc, cwd=project)
    assert result.returncode == 0
    assert f"{doc}: warnings\n  warning: {revoked} is cited, but its ledger entry opens REVOKED" in result.stdout.decode()


def test_stdin_is_checked_against_the_ledgers_above_the_current_directory(run_cli, project):
    _live, _revoked, fake = ledger_ids()
    result = run_cli("gate", "check", "-", input=f"PR body: per {fake}\n".encode(), cwd=project / "docs")
    assert result.returncode == 1
    assert result.stdout.decode().startswith("<stdin>: BLOCKED\n")
    bypassed = run_cli("gate", "check", "-", input=f"per {fake} {BYPASS_MARKER}".encode(), cwd=project)
    assert bypassed.returncode == 0
    assert "bypassed by the literal" in bypassed.stdout.decode()


def test_the_skip_list_is_the_hooks(run_cli, project):
    _live, _revoked, fake = ledger_ids()
    (project / "memory-router.toml").write_text('citation_fixtures_dir = "tests/fixtures"\n', encoding="utf-8")
    (project / "tests" / "fixtures").mkdir(parents=True)
    fixture = project / "tests" / "fixtures" / "fake.json"
    fixture.write_text(f'{{"cites": "{fake}"}}\n', encoding="utf-8")
    ledger = project / ".wolf" / "decisions.md"
    with ledger.open("a", encoding="utf-8") as handle:
        handle.write(f"\n## D999: not an entry\nmentions {fake}\n")
    result = run_cli("gate", "check", fixture, ledger, cwd=project)
    assert result.returncode == 0, result.stdout
    assert result.stdout.decode() == f"{fixture}: skipped (fixtures directory)\n{ledger}: skipped (ledger file)\n"


@pytest.mark.parametrize("bad", ["missing.md", "a-directory"])
def test_unreadable_path_exits_2_with_one_line(run_cli, project, bad):
    (project / "a-directory").mkdir()
    good = project / "docs" / "a.md"
    good.write_text("fine\n", encoding="utf-8")
    result = run_cli("gate", "check", good, bad, cwd=project)
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"memory-router: error: {bad}: cannot read:")
    assert result.stdout == b""


def test_json_output(run_cli, project):
    _live, _revoked, fake = ledger_ids()
    doc = project / "docs" / "a.md"
    doc.write_text(f"Per {fake}.\n", encoding="utf-8")
    result = run_cli("gate", "check", "--json", doc, cwd=project)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["blocked"] is True
    [entry] = data["results"]
    assert entry["path"] == str(doc) and entry["verdict"] == "block" and entry["skipped"] is None


def test_memory_citations_use_the_memory_dir_option(run_cli, project, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "feedback_real_one.md").write_text("x\n", encoding="utf-8")
    doc = project / "docs" / "a.md"
    doc.write_text("(memory: feedback_real_one) and (memory: feedback_real_two)\n", encoding="utf-8")
    result = run_cli("gate", "check", "--memory-dir", memory, doc, cwd=project)
    assert result.returncode == 1
    assert "memory feedback_real_two is in neither" in result.stdout.decode()
    assert "nearest existing: feedback_real_one" in result.stdout.decode()


def test_bad_config_is_a_one_line_input_error(run_cli, project):
    (project / "memory-router.toml").write_text("citation_dead_words = 3\n", encoding="utf-8")
    doc = project / "docs" / "a.md"
    doc.write_text("D-001\n", encoding="utf-8")
    result = run_cli("gate", "check", doc, cwd=project)
    assert result.returncode == 2
    assert "citation_dead_words must be a list of non-empty strings" in result.stderr.decode()


def test_gate_without_an_action_in_argparse_prints_usage(run_cli):
    result = run_cli("gate", "check")
    assert result.returncode == 2
    assert b"the following arguments are required: FILE" in result.stderr


# --------------------------------------------------------------------------- issue 24 item 13


@pytest.fixture
def outside(tmp_path):
    """A pull request body's directory: in no git work tree and no project (like /tmp)."""
    directory = tmp_path / "outside"
    directory.mkdir()
    return directory


@pytest.mark.parametrize("planted", [False, True], ids=["alone", "beside-a-planted-ledger"])
def test_item13_a_file_outside_the_project_is_checked_against_the_current_directorys_ledgers(
        run_cli, project, outside, planted):
    live, _revoked, fake = ledger_ids()
    if planted:  # a ledger in the shared directory whitelisting the fabricated id decides nothing
        (outside / "DECISIONS.md").write_text(f"## {fake}: planted\n", encoding="utf-8")
    body = outside / "pr-body.md"
    body.write_text(f"Per {fake}, and {live}.\n", encoding="utf-8")
    result = run_cli("gate", "check", body, cwd=project / "docs")
    assert result.returncode == 1, result.stdout
    assert f"{body}: BLOCKED\n  BLOCKED: {fake} is not in the decision ledger" in result.stdout.decode()
    honest = outside / "honest.md"
    honest.write_text(f"Per {live}.\n", encoding="utf-8")
    assert run_cli("gate", "check", honest, cwd=project).stdout.decode() == f"{honest}: ok\n"


def test_item13_a_file_in_another_work_tree_keeps_that_trees_ledgers(run_cli, project, tmp_path):
    live, _revoked, fake = ledger_ids()
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "DECISIONS.md").write_text(f"## {fake}: theirs\n", encoding="utf-8")
    doc = other / "notes.md"
    doc.write_text(f"Per {fake}.\n", encoding="utf-8")
    result = run_cli("gate", "check", doc, cwd=project)
    assert result.returncode == 0, result.stdout
    assert result.stdout.decode() == f"{doc}: ok\n"


@pytest.mark.parametrize("where, expected", [
    ("outside", "cwd"), ("project/docs", "own"), ("project", "own"), ("cwd-child", "own")])
def test_ledger_start_walks_from_the_file_only_inside_a_tree(tmp_path, project, outside, where, expected):
    from harness.gate import ledger_start

    cwd = tmp_path / "plain-cwd"
    (cwd / "cwd-child").mkdir(parents=True)
    directory = {"outside": outside, "project/docs": project / "docs", "project": project,
                 "cwd-child": cwd / "cwd-child"}[where]
    start = ledger_start(str(directory / "f.md"), str(cwd))
    assert start == (str(cwd) if expected == "cwd" else str(directory))


# --------------------------------------------------------------------------- issue 30 item 1


def test_item30_a_file_named_like_an_option_is_refused_by_name(run_cli, project):
    """It was "the following arguments are required: FILE", naming no file."""
    (project / "--foo.md").write_text("Per D-001.\n", encoding="utf-8")
    result = run_cli("gate", "check", "--foo.md", cwd=project)
    assert result.returncode == 2
    assert b"--foo.md is not an option of memory-router gate check" in result.stderr
    assert b"memory-router gate check -- --foo.md" in result.stderr


def test_item30_after_double_dash_files_named_like_options_are_checked(run_cli, project):
    """pre-commit runs `gate check -- FILE...`: a committed `-h` was read as --help, and the gate
    passed whatever came after it."""
    _live, _revoked, fake = ledger_ids()
    for name in ("-h", "--foo.md"):
        (project / name).write_text(f"Per {fake}.\n", encoding="utf-8")
    result = run_cli("gate", "check", "--", "-h", "--foo.md", cwd=project)
    assert result.returncode == 1, result.stderr
    out = result.stdout.decode()
    assert out.startswith("-h: BLOCKED") and "\n--foo.md: BLOCKED" in out
