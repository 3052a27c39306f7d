"""The suite schema: what loads, what each problem is reported as, and on which line."""

import pytest

from canaries.cases import Case, SuiteError
from canaries.suite import (
    bundled_suites,
    load_suite,
    looks_like_suite,
    suite_files_in,
    suite_prompts,
)
from router.errors import ClusterFileError, InputError

VALID = """
description: a small suite
defaults:
  max_chars: 9000
  min_margin: 1
  tags: [smoke]
cases:
  - id: setx
    prompt: "I ran setx but the Bash tool cannot see the env var"
    routes_to: layer1_project_memory_router
    injects: env_bash_tool_env_var_caching
    tags: [spec]
  - id: two-clusters
    prompt: "decisions ledger postgres database"
    routes_to: [layer1_db, layer1_04]
    not_injects: [project_hot_strip]
    max_lines: 6
    min_margin: 0
  - id: neutral
    prompt: refactor this loop
    silent: true
    xfail: "known residual"
    note: recorded for what the router does
behavioural:
  - id: setx-cold
    prompt: "why can't the Bash tool see my setx variable?"
    fact: env_bash_tool_env_var_caching
    expect_any: ["reboot didn't fix", "user-opened terminal"]
    forbid: ["restart the session"]
"""


def test_valid_suite_loads_with_defaults_applied(write_suite, store):
    suite = load_suite(write_suite(VALID))
    assert suite.cluster_path == str(store)
    assert suite.description == "a small suite"
    assert suite.defaults == {"max_chars": 9000, "min_margin": 1, "tags": ("smoke",)}
    setx, two, neutral = suite.cases
    assert setx == Case(id="setx", prompt="I ran setx but the Bash tool cannot see the env var",
                        routes_to=("layer1_project_memory_router",), injects=("env_bash_tool_env_var_caching",),
                        max_chars=9000, min_margin=1, tags=("smoke", "spec"), line=7)
    assert two.routes_to == ("layer1_04", "layer1_db")  # order-insensitive: stored sorted
    assert two.min_margin == 0 and two.max_lines == 6  # the case's own value beats the default
    # min_margin is not applied to a case that expects silence (its margin is negative by definition)
    assert neutral.min_margin is None and neutral.max_chars == 9000
    assert neutral.xfail == "known residual" and neutral.silent is True
    assert neutral.expectations() == ["silent", "max_chars"]
    (beh,) = suite.behavioural
    assert beh.fact == "env_bash_tool_env_var_caching"
    assert beh.expect_any == ("reboot didn't fix", "user-opened terminal")
    assert beh.forbid == ("restart the session",)
    assert suite.case("neutral") is neutral and suite.behavioural_case("setx-cold") is beh


def test_suite_is_frozen(write_suite):
    suite = load_suite(write_suite(VALID))
    with pytest.raises(AttributeError):
        suite.cases[0].prompt = "changed"


def test_suite_prompts_lists_cases_then_behavioural_without_needing_the_store(tmp_path):
    path = tmp_path / "canary.yaml"
    # The cluster file does not exist and the slugs are unknown: prompts are still readable.
    path.write_text("clusters: missing.md\ncases:\n  - id: a\n    prompt: first\n    routes_to: nowhere\n"
                    "behavioural:\n  - id: b\n    prompt: second\n    fact: nothing_here\n    expect_any: [x]\n")
    assert suite_prompts(path) == ["first", "second"]


def test_suite_prompts_still_rejects_a_malformed_suite(tmp_path):
    path = tmp_path / "canary.yaml"
    path.write_text("cases:\n  - id: a\n    prompt: first\n    bogus: 1\n")
    with pytest.raises(SuiteError) as info:
        suite_prompts(path)
    assert info.value.problems[0].line == 4


def test_default_cluster_file_is_the_bundled_store(tmp_path):
    from router.config import bundled_cluster_file

    path = tmp_path / "canary.yaml"
    path.write_text("cases:\n  - id: a\n    prompt: refactor this loop\n    silent: true\n")
    assert load_suite(path).cluster_path == bundled_cluster_file()


def test_cluster_override_replaces_the_suites_clusters(write_suite, store, tmp_path):
    path = write_suite("cases:\n  - id: a\n    prompt: hi\n    routes_to: layer1_db\n", clusters=False)
    # Against the bundled store layer1_db does not exist; with the override it does.
    with pytest.raises(SuiteError):
        load_suite(path)
    assert load_suite(path, cluster_path=store).cluster_path == str(store)


def test_default_clusters_stand_in_for_a_missing_line_and_the_problems_name_it(write_suite, store, tmp_path):
    path = write_suite("cases:\n  - id: a\n    prompt: hi\n    routes_to: layer1_db\n", clusters=False)
    suite = load_suite(path, default_clusters=(str(store), "brain/ under the project"))
    assert suite.cluster_path == str(store)
    other = tmp_path / "other.md"
    other.write_text(store.read_text().replace("layer1_db", "layer1_dbx"), encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path, default_clusters=(str(other), "clusters in memory-router.toml"))
    assert (f"not in {other}, clusters in memory-router.toml: the suite has no 'clusters:' line"
            in info.value.problems[0].message)
    with pytest.raises(ClusterFileError, match="does not exist .*gone.md, brain/ under x"):
        load_suite(path, default_clusters=(str(tmp_path / "gone.md"), "brain/ under x"))
    # a suite's own clusters: line wins over the default
    written = write_suite("cases:\n  - id: a\n    prompt: hi\n    routes_to: layer1_db\n", name="own.yaml")
    assert load_suite(written, default_clusters=(str(other), "x")).cluster_path == str(store)


def _problems(path):
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    err = info.value
    assert err.exit_code == 2
    return err, [(p.line, p.message) for p in err.problems]


MALFORMED = [
    ("bad-yaml", "cases:\n  - id: a\n    prompt: [unclosed\n", 3, "invalid YAML"),
    ("tab-indent", "cases:\n\t- id: a\n", 2, "invalid YAML"),
    ("not-a-mapping", "- just\n- a list\n", 1, "a suite must be a mapping"),
    ("no-cases", "description: nothing\n", 1, "the suite has no 'cases'"),
    ("cases-not-a-list", "cases: 3\n", 1, "'cases' must be a list"),
    ("empty-cases", "cases: []\n", 1, "no cases"),
    ("unknown-top-key", "casez: []\ncases:\n  - id: a\n    prompt: p\n    silent: true\n", 1, "unknown key 'casez'"),
    ("unknown-case-key", "cases:\n  - id: a\n    prompt: p\n    rout_to: layer1_04\n", 4, "unknown key 'rout_to'"),
    ("unknown-default-key", "defaults:\n  silent: true\ncases:\n  - id: a\n    prompt: p\n    silent: true\n", 2,
     "unknown key 'silent' in defaults"),
    ("defaults-not-a-mapping", "cases:\n  - id: a\n    prompt: p\n    silent: true\ndefaults: 9500\n", 5,
     "'defaults' must be a mapping"),
    ("wrong-type-max-lines", "cases:\n  - id: a\n    prompt: p\n    max_lines: three\n", 4, "'max_lines' must be"),
    ("negative-max-chars", "cases:\n  - id: a\n    prompt: p\n    max_chars: -1\n", 4, "'max_chars' must be"),
    ("bool-is-not-a-number", "cases:\n  - id: a\n    prompt: p\n    min_margin: true\n", 4, "'min_margin' must be"),
    ("wrong-type-silent", "cases:\n  - id: a\n    prompt: p\n    silent: 'yes please'\n", 4, "'silent' must be"),
    ("wrong-type-prompt", "cases:\n  - id: a\n    prompt: 42\n    silent: true\n", 3, "'prompt' must be"),
    ("missing-prompt", "cases:\n  - id: a\n    silent: true\n", 2, "has no 'prompt'"),
    ("missing-id", "cases:\n  - prompt: p\n    silent: true\n", 2, "has no 'id'"),
    ("bad-id", "cases:\n  - id: 'two words'\n    prompt: p\n    silent: true\n", 2, "invalid id"),
    ("case-not-a-mapping", "cases:\n  - id: a\n    prompt: p\n    silent: true\n  - just a string\n", 5,
     "a case must be a mapping"),
    ("xfail-without-reason", "cases:\n  - id: a\n    prompt: p\n    silent: true\n    xfail: true\n", 5,
     "'xfail' must be the reason"),
    ("xfail-mapping-empty-reason", "cases:\n  - id: a\n    prompt: p\n    silent: true\n    xfail: {spec: ''}\n", 5,
     "mapping of provider names to reasons"),
    ("xfail-mapping-not-strings", "cases:\n  - id: a\n    prompt: p\n    silent: true\n    xfail: {spec: 3}\n", 5,
     "mapping of provider names to reasons"),
    ("routes-to-list-item-type", "cases:\n  - id: a\n    prompt: p\n    routes_to:\n      - layer1_04\n      - 7\n",
     6, "items must be non-empty strings"),
    ("routes-to-empty", "cases:\n  - id: a\n    prompt: p\n    routes_to: []\n", 4, "empty list"),
    ("unknown-cluster-id", "cases:\n  - id: a\n    prompt: p\n    routes_to: [layer1_04, layer1_nope]\n", 4,
     "unknown cluster id 'layer1_nope'"),
    ("unknown-slug-injects", "cases:\n  - id: a\n    prompt: p\n    injects:\n      - no_such_slug\n", 5,
     "unknown member slug 'no_such_slug' in injects"),
    ("unknown-slug-not-injects", "cases:\n  - id: a\n    prompt: p\n    not_injects: no_such_slug\n", 4,
     "unknown member slug 'no_such_slug' in not_injects"),
    ("duplicate-id", "cases:\n  - id: a\n    prompt: p\n    silent: true\n  - id: a\n    prompt: q\n    silent: true\n",
     5, "duplicate id 'a' (first on line 2)"),
    ("duplicate-yaml-key", "cases:\n  - id: a\n    prompt: p\n    prompt: q\n    silent: true\n", 4,
     "duplicate key 'prompt'"),
    ("silent-contradicts-routes", "cases:\n  - id: a\n    prompt: p\n    silent: true\n    routes_to: layer1_04\n",
     5, "contradicts 'routes_to'"),
    ("routes-to-three-clusters", "cases:\n  - id: a\n    prompt: p\n"
                                 "    routes_to: [layer1_04, layer1_db, layer1_project_memory_router]\n",
     4, "the router injects at most two"),
    ("silent-contradicts-min-margin", "cases:\n  - id: a\n    prompt: p\n    silent: true\n    min_margin: 0\n",
     5, "contradicts 'min_margin'"),
    ("inject-outside-routes", "cases:\n  - id: a\n    prompt: p\n    routes_to: layer1_04\n"
                              "    injects: reference_postgres_vacuum\n", 5, "which routes_to leaves out"),
    ("inject-and-not-inject", "cases:\n  - id: a\n    prompt: p\n    injects: project_hot_strip\n"
                              "    not_injects: project_hot_strip\n", 5, "in both injects and not_injects"),
    ("max-lines-below-injects", "cases:\n  - id: a\n    prompt: p\n    injects: [project_hot_strip, "
                                "env_bash_tool_env_var_caching]\n    max_lines: 1\n", 5, "max_lines 1 is below"),
    ("no-expectation", "cases:\n  - id: a\n    prompt: p\n    tags: [x]\n", 2, "has no expectation"),
    ("behavioural-unknown-fact", "cases: []\nbehavioural:\n  - id: b\n    prompt: p\n    fact: nope\n"
                                 "    expect_any: [x]\n", 5, "unknown member slug 'nope' in fact"),
    ("behavioural-no-expect-any", "cases: []\nbehavioural:\n  - id: b\n    prompt: p\n    fact: project_hot_strip\n",
     3, "has no 'expect_any'"),
    ("behavioural-unknown-key", "cases: []\nbehavioural:\n  - id: b\n    prompt: p\n    fact: project_hot_strip\n"
                                "    expect_any: [x]\n    forbidden: [y]\n", 7, "unknown key 'forbidden'"),
    ("behavioural-phrase-both", "cases: []\nbehavioural:\n  - id: b\n    prompt: p\n    fact: project_hot_strip\n"
                                "    expect_any: [Text]\n    forbid: [text]\n", 7, "both expected and forbidden"),
    ("id-shared-with-behavioural", "cases:\n  - id: b\n    prompt: p\n    silent: true\nbehavioural:\n  - id: b\n"
                                   "    prompt: p\n    fact: project_hot_strip\n    expect_any: [x]\n", 6,
     "duplicate id 'b'"),
    ("clusters-missing", "clusters: nowhere.md\ncases:\n  - id: a\n    prompt: p\n    silent: true\n", 1,
     "does not exist"),
    ("clusters-a-directory", "clusters: .\ncases:\n  - id: a\n    prompt: p\n    silent: true\n", 1,
     "is a directory, not a cluster file"),  # said "does not exist" (issue 11)
]


# Bodies that must stay exactly as written (appending a 'clusters:' line would change the error).
AS_WRITTEN = {"bad-yaml", "tab-indent", "not-a-mapping", "clusters-missing", "clusters-a-directory"}


@pytest.mark.parametrize("name,body,line,message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_suite_names_file_and_line(write_suite, name, body, line, message):
    path = write_suite(body, clusters=name not in AS_WRITTEN)
    err, problems = _problems(path)
    assert any(p_line == line and message in p_message for p_line, p_message in problems), problems
    assert f"{path}:{line}" in str(err)


def test_every_problem_is_reported_at_once(write_suite):
    path = write_suite("cases:\n  - id: a\n    prompt: p\n    bogus: 1\n  - id: a\n    prompt: q\n    max_lines: x\n"
                       "  - id: c\n    prompt: r\n    routes_to: nowhere\n")
    err, problems = _problems(path)
    assert [line for line, _ in problems] == [4, 5, 7, 10]
    text = str(err)
    for line in (4, 5, 7, 10):
        assert f"{path}:{line}: " in text
    assert "4 problems" in text


def test_a_broken_cluster_file_is_its_own_error(write_suite, store):
    store.write_text(store.read_text().replace("- layer1_db · 2 ·", "- layer1_db · 5 ·"))
    path = write_suite("cases:\n  - id: a\n    prompt: p\n    silent: true\n")
    with pytest.raises(ClusterFileError) as info:
        load_suite(path)
    assert info.value.exit_code == 2 and f"{store}:" in str(info.value)


def test_unreadable_and_non_utf8_suites_are_input_errors(tmp_path):
    with pytest.raises(InputError):
        load_suite(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"cases:\n  - id: a\n    prompt: \xff\xfe\n")
    with pytest.raises(SuiteError) as info:
        load_suite(bad)
    assert info.value.problems[0].line == 3


@pytest.mark.parametrize("text,expected", [
    ("cases:\n  - id: a\n", True),
    ("name: ci\non: push\njobs:\n  cases:\n    runs-on: x\n", False),  # 'cases' not at top level
    ("description: x\n", False),
])
def test_looks_like_suite(text, expected):
    assert looks_like_suite(text) is expected


def test_suite_files_in_picks_only_suites(tmp_path):
    (tmp_path / "a.yaml").write_text("cases: []\n")
    (tmp_path / "b.yml").write_text("cases: []\n")
    (tmp_path / "workflow.yaml").write_text("on: push\njobs: {}\n")
    (tmp_path / "notes.txt").write_text("cases:\n")
    assert [p.rsplit("/", 1)[1] for p in suite_files_in(tmp_path)] == ["a.yaml", "b.yml"]


def test_xfail_mapping_names_providers(write_suite):
    path = write_suite("""
        cases:
          - id: a
            prompt: p
            silent: true
            xfail: {spec: spec misses it, weighted: so does weighted}
    """)
    case = load_suite(path).cases[0]
    assert case.xfail is None
    assert case.xfail_by_provider == (("spec", "spec misses it"), ("weighted", "so does weighted"))
    assert (case.xfail_for("spec"), case.xfail_for("weighted"), case.xfail_for("null")) == (
        "spec misses it", "so does weighted", None)


def test_bundled_suites_are_the_package_files():
    # Lists what is shipped; the cases themselves are checked by test_cli's bundled test.
    paths = bundled_suites()
    assert [p.rsplit("/", 1)[1] for p in paths] == ["spec.yaml", "example.yaml", "paraphrase.yaml"]


def test_facts_only_judges_a_cluster_file_with_other_ids(tmp_path, run_cli):
    """A built cluster file has other ids: without --facts-only the suite is invalid against it
    (exit 2); with it, routes_to is dropped and the injects/silent expectations still decide."""
    from canaries.suite import bundled_suites, load_suite
    from router.config import bundled_cluster_file
    from router.errors import InputError

    renamed = tmp_path / "renamed.md"
    renamed.write_text(open(bundled_cluster_file(), encoding="utf-8").read().replace("layer1_", "built_"),
                       encoding="utf-8")
    example = [p for p in bundled_suites() if p.endswith("example.yaml")][0]
    with pytest.raises(InputError):
        load_suite(example, cluster_path=renamed)
    suite = load_suite(example, cluster_path=renamed, facts_only=True)
    assert all(case.routes_to is None and case.xfail is None for case in suite.cases)
    assert any(case.injects for case in suite.cases) and any(case.silent for case in suite.cases)
    result = run_cli("canary", "eval", example, "--clusters", renamed, "--facts-only", "--json")
    assert result.returncode == 0, result.stderr
    assert run_cli("canary", "eval", example, "--clusters", renamed, "--json").returncode == 2
    # the expectations still bite: removing a fact's words turns more cases red
    def failing(path):
        import json

        out = run_cli("canary", "run", example, "--clusters", path, "--facts-only", "--json")
        assert out.returncode in (0, 1), out.stderr
        return {r["id"] for r in json.loads(out.stdout)["suites"][0]["results"] if r["verdict"] == "fail"}

    broken = tmp_path / "broken.md"
    broken.write_text(renamed.read_text(encoding="utf-8").replace("setx", "regedit"), encoding="utf-8")
    newly_failing = failing(broken) - failing(renamed)
    assert newly_failing and all("setx" in case_id for case_id in newly_failing), newly_failing


# --------------------------------------------------------------------------- sessions: (issue 13)

SESSION_OK = """
    sessions:
      - id: s
        steps:
          - prompt: "first"
            injects: [env_bash_tool_env_var_caching]
            new_lines: 3
            max_chars: 900
          - compact
          - clear: true
          - prompt: "second"
            silent: true
            not_injects: project_hot_strip
        tags: [session]
"""


def test_a_session_suite_loads_its_steps_in_order(write_suite):
    suite = load_suite(write_suite(SESSION_OK))
    [case] = suite.sessions
    assert [step.kind for step in case.steps] == ["prompt", "compact", "clear", "prompt"]
    first, last = case.steps[0], case.steps[-1]
    assert (first.injects, first.new_lines, first.max_chars) == (("env_bash_tool_env_var_caching",), 3, 900)
    assert (last.silent, last.not_injects) == (True, ("project_hot_strip",))
    assert first.line == 4 and case.line == 2 and case.tags == ("session",)
    assert suite.cases == () and case.prompts == ["first", "second"]


def _session(steps, extra=""):
    return "sessions:\n  - id: s\n" + extra + "    steps:\n" + steps


SESSION_MALFORMED = [
    ("no-steps", "sessions:\n  - id: s\n    tags: [x]\n", 2, "has no 'steps'"),
    ("steps-empty", "sessions:\n  - id: s\n    steps: []\n", 3, "'steps' must be a non-empty list"),
    ("unknown-session-key", _session("      - prompt: p\n        silent: true\n", "    stepz: 1\n"), 3,
     "unknown key 'stepz' in session case"),
    ("unknown-step-key", _session("      - prompt: p\n        silently: true\n"), 5, "unknown key 'silently' in session step"),
    ("unknown-control-word", _session("      - prompt: p\n        silent: true\n      - compress\n"), 6,
     "a step must be a mapping"),
    ("control-not-true", _session("      - prompt: p\n        silent: true\n      - compact: no\n"), 6, "'compact' must be true"),
    ("control-with-prompt", _session("      - compact: true\n        prompt: p\n"), 5, "a 'compact' step takes no 'prompt'"),
    ("clear-with-expectation", _session("      - prompt: p\n        silent: true\n      - clear: true\n        silent: true\n"),
     7, "a 'clear' step takes no 'silent'"),
    ("step-without-prompt", _session("      - silent: true\n"), 4, "has no 'prompt'"),
    ("unknown-slug", _session("      - prompt: p\n        injects: [nope]\n"), 5, "unknown member slug 'nope'"),
    ("silent-and-injects", _session("      - prompt: p\n        silent: true\n        injects: project_hot_strip\n"), 6,
     "'silent: true' contradicts 'injects'"),
    ("silent-false-and-zero-lines", _session("      - prompt: p\n        silent: false\n        new_lines: 0\n"), 6,
     "contradicts 'new_lines: 0'"),
    ("new-lines-below-injects", _session("      - prompt: p\n        injects: [project_hot_strip, "
                                         "env_bash_tool_env_var_caching]\n        new_lines: 1\n"), 6,
     "new_lines 1 is below"),
    ("negative-new-lines", _session("      - prompt: p\n        new_lines: -2\n"), 5, "'new_lines' must be"),
    ("no-prompt-step", _session("      - compact\n"), 2, "has no prompt step"),
    ("no-expectation", _session("      - prompt: p\n      - compact\n"), 2, "has no expectation"),
    ("id-shared-with-a-case", "cases:\n  - id: s\n    prompt: p\n    silent: true\n"
                              + _session("      - prompt: p\n        silent: true\n"), 6, "duplicate id 's'"),
]


@pytest.mark.parametrize("name,body,line,message", SESSION_MALFORMED, ids=[m[0] for m in SESSION_MALFORMED])
def test_a_malformed_session_names_file_and_line(write_suite, name, body, line, message):
    err, problems = _problems(write_suite(body))
    assert any(p_line == line and message in p_message for p_line, p_message in problems), problems


def test_a_sessions_only_file_is_picked_as_a_suite(tmp_path):
    from canaries.suite import looks_like_suite

    assert looks_like_suite("sessions:\n  - id: s\n")
