"""``memory-router canary run|eval``: exit codes, what is printed, JSON and JUnit shapes."""

import json
import xml.etree.ElementTree as ET

import pytest

from harness.cli import main

# The harness is tested with the reference scorer: these stores and expectations are in its scores.
pytestmark = pytest.mark.usefixtures("spec_provider")

# One passing and one deliberately failing case per expectation kind, on the test store
# (see tests/support/canary_store.py prompts for what each prompt routes to).
KINDS = [
    ("routes_to", "routes_to: layer1_project_memory_router", "routes_to: layer1_04",
     "routes_to: expected layer1_04 got layer1_project_memory_router"),
    ("injects", "injects: env_bash_tool_env_var_caching", "injects: feedback_never_read_decisions_raw",
     "injects: missing feedback_never_read_decisions_raw"),
    ("not_injects", "not_injects: reference_postgres_vacuum", "not_injects: env_bash_tool_env_var_caching",
     "not_injects: injected env_bash_tool_env_var_caching"),
    ("silent", "silent: false", "silent: true", "silent: expected nothing injected got layer1_project_memory_router"),
    ("max_lines", "max_lines: 1", "max_lines: 0", "max_lines: expected at most 0 got 1"),
    ("max_chars", "max_chars: 9500", "max_chars: 40", "max_chars: expected at most 40 got"),
    ("min_margin", "min_margin: 4", "min_margin: 5", "min_margin: expected at least 5 got 4"),
]


def kind_suite(prompt, passing, failing=None):
    body = f"cases:\n  - id: passing-case\n    prompt: \"{prompt}\"\n    {passing}\n"
    if failing:
        body += f"  - id: deliberately-failing-case\n    prompt: \"{prompt}\"\n    {failing}\n"
    return body


@pytest.mark.parametrize("kind,passing,failing,difference", KINDS, ids=[k[0] for k in KINDS])
def test_each_expectation_kind_fails_with_exit_1_naming_the_case(write_suite, prompts, capsys, kind, passing,
                                                                 failing, difference):
    good = write_suite(kind_suite(prompts.setx, passing), name="canary_good.yaml")
    assert main(["canary", "run", str(good)]) == 0
    assert "OK: 1 cases" in capsys.readouterr().out
    bad = write_suite(kind_suite(prompts.setx, passing, failing), name="canary_bad.yaml")
    assert main(["canary", "run", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL deliberately-failing-case at {bad}:5" in out
    assert difference in out
    assert "1 passed, 1 failed" in out


def test_silent_case_failing_the_other_way(write_suite, prompts, capsys):
    path = write_suite(kind_suite(prompts.neutral, "silent: true", "silent: false"))
    assert main(["canary", "run", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAIL deliberately-failing-case" in out and "silent: false expected an injection got nothing" in out


def test_xfail_still_failing_passes_the_gate_and_xpass_fails_it(write_suite, prompts, capsys):
    path = write_suite(f"""
        cases:
          - id: haiku-residual
            prompt: "{prompts.haiku}"
            silent: true
            xfail: a single tag hit at exactly the floor
        """)
    assert main(["canary", "run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 xfail" in out and "XFAIL" not in out  # a known residual is counted, listed only with -v
    assert main(["canary", "run", str(path), "-v"]) == 0
    out = capsys.readouterr().out
    assert "XFAIL haiku-residual" in out and "a single tag hit at exactly the floor" in out
    # The residual went away (a higher floor): the xfail case now passes, which is reported and fails.
    config = path.parent / "memory-router.toml"
    config.write_text("score_floor = 4\n")
    assert main(["canary", "run", str(path), "--config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "XPASS haiku-residual" in out and "remove 'xfail'" in out and "1 xpass" in out


MALFORMED_CLI = [
    ("bad-yaml", "cases:\n  - id: a\n    prompt: [x\n", False, 3),
    ("unknown-key", "cases:\n  - id: a\n    prompt: x\n    routez: layer1_04\n", True, 4),
    ("wrong-type", "cases:\n  - id: a\n    prompt: x\n    max_lines: [1]\n", True, 4),
    ("unknown-cluster", "cases:\n  - id: a\n    prompt: x\n    routes_to: layer1_99\n", True, 4),
    ("duplicate-id", "cases:\n  - id: a\n    prompt: x\n    silent: true\n  - id: a\n    prompt: y\n    silent: true\n",
     True, 5),
]


@pytest.mark.parametrize("body,with_store,line", [m[1:] for m in MALFORMED_CLI], ids=[m[0] for m in MALFORMED_CLI])
@pytest.mark.parametrize("command", ["run", "eval", "fit"])
def test_malformed_suite_exits_2_with_file_and_line(write_suite, capsys, command, body, with_store, line):
    path = write_suite(body, clusters=with_store)
    assert main(["canary", command, str(path)]) == 2
    captured = capsys.readouterr()
    assert f"{path}:{line}: " in captured.err
    assert "PASS" not in captured.out and "FAIL" not in captured.out


def test_all_invalid_suites_are_reported_together(write_suite, capsys):
    one = write_suite("cases:\n  - id: a\n    prompt: x\n    bogus: 1\n", name="canary_one.yaml")
    two = write_suite("cases:\n  - id: b\n    prompt: y\n    max_chars: lots\n", name="canary_two.yaml")
    assert main(["canary", "run", str(one), str(two)]) == 2
    err = capsys.readouterr().err
    assert f"{one}:4: unknown key 'bogus'" in err and f"{two}:4: 'max_chars' must be" in err


def test_broken_cluster_file_exits_2(write_suite, store, capsys):
    store.write_text(store.read_text().replace("### layer1_db\n", ""))
    path = write_suite("cases:\n  - id: a\n    prompt: x\n    silent: true\n")
    assert main(["canary", "run", str(path)]) == 2
    assert f"{store}:" in capsys.readouterr().err


def test_clusters_option_overrides_the_suite(tmp_path, store, capsys):
    path = tmp_path / "canary.yaml"
    path.write_text("cases:\n  - id: a\n    prompt: postgres vacuum\n    routes_to: layer1_db\n")
    assert main(["canary", "run", str(path)]) == 2  # bundled store: no layer1_db
    capsys.readouterr()
    assert main(["canary", "run", str(path), "--clusters", str(store)]) == 0


def test_missing_suite_file_exits_2(tmp_path, capsys):
    assert main(["canary", "run", str(tmp_path / "absent.yaml")]) == 2
    assert "cannot read suite file" in capsys.readouterr().err


def test_k_filters_and_a_filter_matching_nothing_is_an_error(write_suite, prompts, capsys):
    path = write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
            tags: [spec]
          - id: broken
            prompt: "{prompts.setx}"
            routes_to: layer1_04
            tags: [other]
        """)
    assert main(["canary", "run", str(path)]) == 1
    capsys.readouterr()
    assert main(["canary", "run", str(path), "-k", "SPEC"]) == 0
    assert "1 cases" in capsys.readouterr().out
    assert main(["canary", "run", str(path), "-k", "nothing-like-this"]) == 2
    assert "matched no case" in capsys.readouterr().err


def test_directory_argument_runs_the_suites_inside(write_suite, prompts, tmp_path, capsys):
    write_suite(kind_suite(prompts.setx, "routes_to: layer1_project_memory_router"), name="a.yaml")
    (tmp_path / "workflow.yaml").write_text("on: push\n")
    assert main(["canary", "run", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [s["suite"] for s in data["suites"]] == [str(tmp_path / "a.yaml")]


def test_json_shape(write_suite, prompts, capsys):
    path = write_suite(kind_suite(prompts.setx, "routes_to: layer1_project_memory_router", "routes_to: layer1_04"))
    assert main(["canary", "run", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False
    assert data["totals"] == {"pass": 1, "fail": 1, "xfail": 0, "xpass": 0, "total": 2}
    assert data["settings"]["score_floor"] == 3
    (suite,) = data["suites"]
    assert suite["suite"] == str(path) and suite["ok"] is False
    failing = suite["results"][1]
    assert failing["id"] == "deliberately-failing-case" and failing["verdict"] == "fail"
    assert failing["differences"] == ["routes_to: expected layer1_04 got layer1_project_memory_router"]
    assert failing["routed"] == ["layer1_project_memory_router"] and failing["line"] == 5
    assert set(failing) >= {"expected", "injected", "lines", "chars", "score", "margin", "tags", "xfail"}


def test_junit_xml(write_suite, prompts, tmp_path, capsys):
    path = write_suite(f"""
        cases:
          - id: ok
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
          - id: broken
            prompt: "{prompts.setx}"
            routes_to: layer1_04
          - id: residual
            prompt: "{prompts.haiku}"
            silent: true
            xfail: known
        """)
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    assert main(["canary", "run", str(path), "--junit", str(junit)]) == 1
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "3" and root.get("failures") == "1"
    (suite,) = root
    cases = {c.get("name"): c for c in suite}
    assert list(cases["ok"]) == []
    assert cases["broken"].find("failure").get("message").startswith("routes_to: expected layer1_04")
    assert cases["residual"].find("skipped").get("type") == "xfail"
    assert cases["broken"].get("line") == "5"


def test_settings_come_from_the_config_file(write_suite, prompts, tmp_path, capsys, monkeypatch):
    path = write_suite(kind_suite(prompts.setx, "routes_to: layer1_project_memory_router"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "memory-router.toml").write_text("score_floor = 20\n")
    assert main(["canary", "run", str(path)]) == 1  # found in the current directory
    capsys.readouterr()
    other = tmp_path / "other.toml"
    other.write_text("score_floor = 3\n")
    assert main(["canary", "run", str(path), "--config", str(other)]) == 0


def test_eval_json(write_suite, prompts, capsys):
    path = write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
            injects: env_bash_tool_env_var_caching
          - id: ledger-wrong
            prompt: "{prompts.ledger}"
            routes_to: layer1_db
          - id: neutral
            prompt: "{prompts.neutral}"
            silent: true
          - id: haiku
            prompt: "{prompts.haiku}"
            silent: true
        """)
    assert main(["canary", "eval", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    metrics = data["metrics"]
    assert metrics["cases"] == 4
    routing = metrics["routing"]
    assert routing["clusters"]["layer1_project_memory_router"]["f1"] == 1
    assert routing["clusters"]["layer1_db"]["recall"] == 0 and routing["clusters"]["layer1_04"]["precision"] == 0
    assert metrics["no_route"]["false_priming_rate"] == 0.5 and metrics["no_route"]["false_primed_ids"] == ["haiku"]
    assert metrics["fact_recall"]["recall"] == 1
    assert metrics["margins"]["expect_silent"]["max"] == 0


def test_eval_table(write_suite, prompts, capsys):
    path = write_suite(kind_suite(prompts.setx, "routes_to: layer1_project_memory_router"))
    assert main(["canary", "eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Routing per cluster" in out and "no-route false-priming rate" in out and "Margin over the floor" in out


def test_bundled_suites_run_green_on_a_fresh_install(run_cli, tmp_path):
    """The README's main command: no arguments, bundled suites against the bundled store."""
    from canaries.suite import bundled_suites, load_suite

    paths = bundled_suites()
    assert [p.rsplit("/", 1)[1] for p in paths] == ["spec.yaml", "example.yaml", "paraphrase.yaml"]
    for path in paths:
        assert load_suite(path).cases
    done = run_cli("canary", "run", cwd=tmp_path)
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "OK: " in out and all(name in out for name in ("spec.yaml", "example.yaml", "paraphrase.yaml"))


@pytest.mark.parametrize("command", ["run", "eval"])
def test_a_suite_with_only_behavioural_cases_is_not_a_pass(write_suite, capsys, command):
    path = write_suite("cases: []\nbehavioural:\n  - id: b\n    prompt: p\n    fact: project_hot_strip\n"
                       "    expect_any: [hot strip]\n")
    assert main(["canary", command, str(path)]) == 2
    err = capsys.readouterr().err
    assert "no routing cases to run" in err
    assert f"{path}: no routing cases" in err and "fix:" in err  # names the file that lacks them


@pytest.mark.parametrize("option", ["--junit", "--save-baseline"])
def test_unwritable_output_path_is_a_clear_error(write_suite, prompts, tmp_path, capsys, option):
    path = write_suite(kind_suite(prompts.setx, "routes_to: layer1_project_memory_router"))
    target = tmp_path / "no-such-dir" / "out.file"
    assert main(["canary", "run", str(path), option, str(target)]) == 2
    err = capsys.readouterr().err
    assert f"{target}: cannot write the" in err and "Traceback" not in err
    assert not target.exists()


def test_a_failing_session_fails_the_run_naming_its_step_and_shows_in_json_and_junit(write_suite, prompts, capsys,
                                                                                   tmp_path):
    body = (f"sessions:\n  - id: resend\n    steps:\n      - prompt: \"{prompts.setx}\"\n"
            f"      - prompt: \"{prompts.setx}\"\n        injects: env_bash_tool_env_var_caching\n")
    path = write_suite(body, name="canary_sessions.yaml")
    junit = tmp_path / "out.xml"
    assert main(["canary", "run", str(path), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "FAIL session resend" in out and "(the session already held it)" in out
    assert "0 passed, 1 failed" in out
    assert main(["canary", "run", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    [session] = data["suites"][0]["sessions"]
    assert session["verdict"] == "fail" and session["steps"][1]["held"] == session["steps"][0]["sent"][:3]
    failure = ET.parse(junit).getroot().find("testsuite/testcase/failure")
    assert failure is not None and "step 2" in failure.get("message")


def test_bare_canary_run_in_a_configured_project_says_it_runs_the_bundled_example(capsys, tmp_path, monkeypatch):
    # issue 36 item 7: "OK: 224 cases" for the fictional bundled store, where the user expected theirs
    project = tmp_path / "configured"
    project.mkdir()
    (project / "memory-router.toml").write_text('memory_dir = "memory"\n')
    monkeypatch.chdir(project)
    from harness.cli import main

    main(["canary", "run"])
    captured = capsys.readouterr()
    head = captured.err.splitlines()[0]
    assert "bundled example" in head and "memory-router replay" in head and "--suite" in head
    main(["canary", "run", "--json"])
    captured = capsys.readouterr()
    assert "bundled example" in captured.err
    import json

    json.loads(captured.out)


def test_bare_canary_run_outside_a_project_says_nothing_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from harness.cli import main

    main(["canary", "run", "-k", "setx"])
    assert "bundled example" not in capsys.readouterr().err
