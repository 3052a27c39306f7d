"""The pytest plugin (entry point ``memory_router_canaries``): same verdicts as ``canary run``."""

import textwrap

import pytest

# The harness is tested with the reference scorer: these stores and expectations are in its scores.
pytestmark = pytest.mark.usefixtures("spec_provider")

pytest_plugins = ["pytester"]

# The hypothesis plugin costs ~2 s per inner session and plays no part here.
FAST = ("-p", "no:hypothesispytest")


def run(pytester, *args):
    return pytester.runpytest(*FAST, *args)


@pytest.fixture
def project(pytester, store, prompts):
    """A pytester dir holding the test store; ``write(name, body)`` writes a suite next to it."""
    (pytester.path / "clusters.md").write_text(store.read_text())

    def write(name, body):
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        rel = "../" * (len(path.relative_to(pytester.path).parts) - 1) + "clusters.md"
        path.write_text(f"clusters: {rel}\n" + textwrap.dedent(body).lstrip("\n"))
        return path

    write.prompts = prompts
    return write


def four_verdicts(p):
    return f"""
        cases:
          - id: passing
            prompt: "{p.setx}"
            routes_to: layer1_project_memory_router
            tags: [spec]
          - id: deliberately-failing
            prompt: "{p.setx}"
            routes_to: layer1_04
            injects: feedback_never_read_decisions_raw
          - id: residual-still-failing
            prompt: "{p.haiku}"
            silent: true
            xfail: one tag hit at the floor
          - id: residual-gone
            prompt: "{p.neutral}"
            silent: true
            xfail: this one no longer fails
        """


def test_one_item_per_case_with_the_same_verdicts(pytester, project):
    project("canary_routing.yaml", four_verdicts(project.prompts))
    result = run(pytester, "-rA")
    result.assert_outcomes(passed=1, failed=2, xfailed=1)
    text = result.stdout.str()
    assert "canary deliberately-failing failed" in text
    assert "routes_to: expected layer1_04 got layer1_project_memory_router" in text
    assert "injects: missing feedback_never_read_decisions_raw" in text
    assert "XPASS(strict)" in text and "this one no longer fails" in text
    assert "canary_routing.yaml::residual-still-failing" in text


def test_k_selects_by_tag(pytester, project):
    project("canary_routing.yaml", four_verdicts(project.prompts))
    result = run(pytester, "-k", "spec")
    result.assert_outcomes(passed=1, deselected=3)


def test_malformed_suite_is_a_collection_error_naming_file_and_line(pytester, project):
    path = project("canary_bad.yaml", """
        cases:
          - id: a
            prompt: hi
            routes_to: layer1_nowhere
        """)
    result = run(pytester)
    result.assert_outcomes(errors=1)
    assert f"{path}:5: unknown cluster id 'layer1_nowhere'" in result.stdout.str()


def test_only_canary_suites_are_collected(pytester, project):
    # A workflow (no top-level cases), a config, and a YAML with 'cases' outside canaries/ that
    # is not named canary*: none of them is a canary suite.
    workflow = "on: push\njobs:\n  cases:\n    runs-on: x\n"
    for folder in (".github/workflows", "workflows"):
        (pytester.path / folder).mkdir(parents=True)
        (pytester.path / folder / "ci.yaml").write_text(workflow)
    (pytester.path / "canary_workflow.yaml").write_text(workflow)  # named canary*, but no top-level cases
    (pytester.path / "config.yaml").write_text("cases:\n  - not: ours\n")
    (pytester.path / "canaries").mkdir()
    (pytester.path / "canaries" / "notes.yaml").write_text("title: no cases here\n")
    assert run(pytester).ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert run(pytester, ".github").ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_suites_in_a_canaries_directory_are_collected(pytester, project):
    project("canaries/spec.yaml", f"""
        cases:
          - id: neutral
            prompt: "{project.prompts.neutral}"
            silent: true
        """)
    result = run(pytester, "canaries")
    result.assert_outcomes(passed=1)


def test_canary_clusters_option_overrides_the_suite(pytester, project, tmp_path):
    path = project("canary_routing.yaml", """
        cases:
          - id: db
            prompt: postgres vacuum
            routes_to: layer1_db
        """)
    path.write_text(path.read_text().replace("clusters: clusters.md\n", "clusters: missing.md\n"))
    assert run(pytester).ret != 0
    result = run(pytester, "--canary-clusters", str(pytester.path / "clusters.md"))
    result.assert_outcomes(passed=1)


def test_canary_config_option_sets_the_routing_settings(pytester, project):
    project("canary_routing.yaml", f"""
        cases:
          - id: setx
            prompt: "{project.prompts.setx}"
            routes_to: layer1_project_memory_router
        """)
    (pytester.path / "strict.toml").write_text("score_floor = 50\n")
    run(pytester).assert_outcomes(passed=1)
    run(pytester, "--canary-config", "strict.toml").assert_outcomes(failed=1)


def test_pytest_collects_every_bundled_case_and_session(pytester):
    from canaries.suite import bundled_suite_dir, bundled_suites, load_suite

    expected = sum(len(s.cases) + len(s.sessions) for s in map(load_suite, bundled_suites()))
    result = run(pytester, "--collect-only", "-q", bundled_suite_dir())
    assert result.ret == 0
    assert f"{expected} tests collected" in result.stdout.str()


def test_the_canaries_directory_holds_only_the_bundled_suites():
    # pytest collects every suite in canaries/; fitting data (benchmarks/fitting/) the router
    # is not meant to pass would turn into failures of the README's test command.
    from canaries.suite import bundled_suite_dir, bundled_suites, suite_files_in

    assert sorted(suite_files_in(bundled_suite_dir())) == sorted(bundled_suites())


def test_session_cases_are_items_with_the_same_verdicts(pytester, project):
    p = project.prompts
    project("canary_sessions.yaml", f"""
        sessions:
          - id: once-per-context
            steps:
              - prompt: "{p.setx}"
                injects: env_bash_tool_env_var_caching
              - prompt: "{p.setx}"
                silent: true
          - id: expects-a-resend
            steps:
              - prompt: "{p.setx}"
              - prompt: "{p.setx}"
                injects: env_bash_tool_env_var_caching
          - id: known-resend-gap
            xfail: the repeat is held
            steps:
              - prompt: "{p.setx}"
              - prompt: "{p.setx}"
                silent: false
        """)
    result = run(pytester, "-rA")
    result.assert_outcomes(passed=1, failed=1, xfailed=1)
    assert "injects: missing env_bash_tool_env_var_caching (the session already held it)" in result.stdout.str()
