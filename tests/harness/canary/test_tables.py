"""``canary run``'s output for people (harness.canary.tables): one line per suite, one per failure
and the total by default; with -v every case in a table that fits 80 columns with every id whole."""

import json
import os

import pytest

from harness.cli import main

pytestmark = pytest.mark.usefixtures("spec_provider")


SESSION = "sessions:\n  - id: resend\n    steps:\n      - prompt: \"{prompt}\"\n      - prompt: \"{prompt}\"\n"


@pytest.fixture
def eighty_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")


def longest_table_line(text):
    """The widest line of the tables in ``text`` (a failure stays one line, however long)."""
    from rich.cells import cell_len

    return max(cell_len(line) for line in text.splitlines() if line[:1] in "┏┃┡│└")


def test_a_passing_bundled_run_prints_a_line_per_suite_and_the_total(capsys, eighty_columns):
    assert main(["canary", "run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert main(["canary", "run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # the store line, one line per suite, the total and the -v hint: nothing else
    assert len(lines) == len(data["suites"]) + 3, lines
    assert lines[0].startswith("clusters: ") and lines[0].endswith("(the suite's clusters: line: the bundled example store)")
    totals = data["totals"]
    assert lines[-2] == (f"OK: {totals['total']} cases in {len(data['suites'])} suite(s): {totals['pass']} passed, "
                         f"{totals['fail']} failed, {totals['xfail']} xfail, {totals['xpass']} xpass")
    assert not any(line.startswith(("PASS", "XFAIL", "┏", "│")) for line in lines)


def test_each_failure_is_one_line_with_every_difference(write_suite, prompts, capsys, eighty_columns):
    path = write_suite(f"""
        cases:
          - id: passes
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
          - id: fails-twice
            prompt: "{prompts.setx}"
            routes_to: layer1_04
            injects: feedback_never_read_decisions_raw
          - id: fails-silent
            prompt: "{prompts.neutral}"
            silent: false
        """)
    assert main(["canary", "run", str(path)]) == 1
    out = capsys.readouterr().out
    failures = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert failures == [
        f"FAIL fails-twice at {path}:5: routes_to: expected layer1_04 got layer1_project_memory_router; "
        "injects: missing feedback_never_read_decisions_raw",
        f"FAIL fails-silent at {path}:9: silent: false expected an injection got nothing (top score 0, floor 3)",
    ]
    assert "passes" not in out
    assert out.splitlines()[-2].startswith("FAILED: 3 cases in 1 suite(s): 1 passed, 2 failed")


def test_a_failing_session_is_one_line_naming_its_step(write_suite, prompts, capsys):
    path = write_suite(SESSION.format(prompt=prompts.setx) + "        injects: env_bash_tool_env_var_caching\n")
    assert main(["canary", "run", str(path)]) == 1
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("FAIL ")]
    assert line.startswith(f"FAIL session resend at {path}:2: step 2") and "(the session already held it)" in line


def test_verbose_table_fits_80_columns_and_keeps_every_id_and_header_whole(capsys, eighty_columns):
    from router.config import DEFAULTS

    DEFAULTS["provider"] = "weighted"  # the bundled suites' own provider (spec_provider is undone after)
    assert main(["canary", "run", "-v"]) == 0
    out = capsys.readouterr().out
    assert main(["canary", "run", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert longest_table_line(out) <= 80
    cells = {part.strip() for line in out.splitlines() for part in line.split("│")}
    for suite in data["suites"]:
        for case in suite["results"]:
            assert case["id"] in cells, case["id"]                 # on a line of its own, never cut
            for name in case["routed"]:
                assert name in out
    for header in ("verdict", "score", "margin", "case"):
        assert f" {header} " in out
    xfails = [line for line in out.splitlines() if line.startswith("XFAIL ")]
    assert len(xfails) == data["totals"]["xfail"]


def test_verbose_session_table_lists_each_step(write_suite, prompts, capsys, eighty_columns):
    path = write_suite(SESSION.format(prompt=prompts.setx) + "        new_lines: 0\n")
    assert main(["canary", "run", str(path), "-v"]) == 0
    out = capsys.readouterr().out
    assert "session resend" in out and "already held: env_bash_tool_env_var_caching" in out
    assert longest_table_line(out) <= 80


def test_suites_on_different_stores_name_each_store(write_suite, prompts, store, tmp_path, capsys):
    one = write_suite(f"cases:\n  - id: a\n    prompt: \"{prompts.setx}\"\n    silent: false\n", name="one.yaml")
    other_store = tmp_path / "other" / "clusters.md"
    other_store.parent.mkdir()
    other_store.write_text(store.read_text())
    two = other_store.parent / "two.yaml"
    two.write_text(f"clusters: clusters.md\ncases:\n  - id: b\n    prompt: \"{prompts.setx}\"\n    silent: false\n")
    assert main(["canary", "run", str(one), str(two)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not lines[0].startswith("clusters:")
    assert lines[0].endswith(f"; clusters: {store} (the suite's clusters: line)")
    assert lines[1].endswith(f"; clusters: {other_store} (the suite's clusters: line)")


def test_a_suite_without_clusters_names_the_project_store_and_why(tmp_path, store, prompts, capsys, monkeypatch):
    project = tmp_path / "project"
    (project / "brain").mkdir(parents=True)
    (project / "brain" / "memory-layer1-clusters.md").write_text(store.read_text())
    suite = project / "mine.yaml"
    suite.write_text(f"cases:\n  - id: a\n    prompt: \"{prompts.setx}\"\n    silent: false\n")
    monkeypatch.chdir(project)
    assert main(["canary", "run", "mine.yaml"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"clusters: brain/memory-layer1-clusters.md (brain/ under {project})"
    assert main(["canary", "run", "mine.yaml", "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["suites"]
    assert entry["clusters"] == str(project / "brain" / "memory-layer1-clusters.md")
    assert entry["clusters_from"] == f"brain/ under {project}"
    assert main(["canary", "run", "mine.yaml", "--clusters", str(store)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"clusters: {store} (--clusters)"


def test_files_shipped_in_the_package_are_named_as_in_the_package_wherever_it_is_installed(tmp_path, monkeypatch):
    """A non-editable install puts the bundled suites under site-packages; `canary run` prints the
    same lines there as in a checkout (the README quotes them)."""
    import canaries.suite
    from harness.canary.tables import display_path

    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "canaries").mkdir(parents=True)
    monkeypatch.setattr(canaries.suite, "bundled_suite_dir", lambda: str(site / "canaries"))
    monkeypatch.chdir(tmp_path)
    assert display_path(site / "canaries" / "spec.yaml") == os.path.join("canaries", "spec.yaml")
    assert display_path(site / "router" / "data" / "example" / "m.md") == os.path.join("router", "data", "example",
                                                                                      "m.md")
    assert display_path(tmp_path / "mine.yaml") == "mine.yaml"                      # the user's own: as before
    assert display_path(site / "other" / "x.yaml") == os.path.join("venv", "lib", "python3.11", "site-packages",
                                                                "other", "x.yaml")  # not shipped: relative
