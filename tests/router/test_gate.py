"""``memory-router gate`` as Claude Code runs it: the installed console script, a PreToolUse payload
on stdin, JSON (or nothing) on stdout, always exit 0. The self-check runs every case over every
payload shape; the ids come from the fixture ledger at run time."""

import json
import shutil

import pytest

from router.gate.citations import BYPASS_MARKER
from router.store.memorystore import project_key


def run_gate(run_cli, payload, *options, env=None):
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    result = run_cli("gate", *options, input=raw, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    if not result.stdout.strip():
        return None
    result.stdout.decode("ascii")  # the hook prints ASCII JSON whatever the locale
    return json.loads(result.stdout)


def verdict(output):
    """``"block"``, ``"notice"`` (visible, not blocking) or ``"silent"``; checks the exact form."""
    if output is None:
        return "silent"
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    if "permissionDecision" in output["hookSpecificOutput"]:
        assert set(output) == {"hookSpecificOutput"}
        assert set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        assert specific["permissionDecision"] == "deny"
        return "block"
    assert set(output) == {"systemMessage", "hookSpecificOutput"}
    assert set(specific) == {"hookEventName", "additionalContext"}
    assert output["systemMessage"] == specific["additionalContext"]
    return "notice"


def message(output):
    specific = output["hookSpecificOutput"]
    return specific.get("permissionDecisionReason") or specific["additionalContext"]


def self_check_cases(ids):
    """(name, added text, expected verdict, a phrase the message must hold)."""
    live, fake = ids["live"][0], ids["fabricated"]
    cases = [
        ("clean path", f"Per {live}, routing reads the cluster file.", "silent", None),
        ("fabricated id", f"The 14-day window follows {fake}.", "block", f"{fake} is not in the decision ledger"),
        ("lowercase fabricated id", f"per {fake.lower()}", "block", f"{fake} is not in the decision ledger"),
        ("unrecorded owner ruling", f"Per {live} (owner ruling 1999-12-31).", "notice",
         "'owner ruling 1999-12-31' names a date the ledger does not contain"),
        ("bypass marker", f"Post-mortem: {fake} was invented. {BYPASS_MARKER}", "notice",
         f"bypassed by the literal {BYPASS_MARKER}"),
        ("id inside a hyphenated identifier", f"branch fix-{fake}-retention", "silent", None),
        ("plural is not a citation", f"{fake}s", "silent", None),
        ("possessive is a citation", f"{fake}'s window", "block", f"{fake} is not in the decision ledger"),
    ]
    cases += [  # issue 24: what is not certainly a citation never blocks; what hides one does not hide it
        ("code with d-1", "x = arr[d-1] + $((d-1))", "silent", None),
        ("id in a path", "see /docs/D-42/setup", "silent", None),
        ("id after a name", "shot on a Nikon D-500", "notice", "may not be citations"),
        ("id in underscore emphasis", f"per _{fake}_", "block", f"{fake} is not in the decision ledger"),
        ("non-breaking hyphen", "per " + fake.replace("-", "\u2011"), "block", f"{fake} is not in the decision ledger"),
        ("zero-width joiner", "per " + fake.replace("-", "\u200d-"), "block", f"{fake} is not in the decision ledger"),
    ]
    cases += [(f"dead status {word}", f"As {entry_id} decided.", "notice", f"opens {word}")
              for word, entry_id in sorted(ids["dead"].items())]
    return cases


@pytest.fixture
def cases(ledger_ids):
    return self_check_cases(ledger_ids)


def test_self_check_over_every_shape(run_cli, gate_project, payloads, ledger_ids, shape):
    target = gate_project / "docs" / "retention.md"
    failures = []
    for name, text, expected, phrase in self_check_cases(ledger_ids):
        output = run_gate(run_cli, payloads(text, target)[shape])
        got = verdict(output)
        if got != expected or (phrase and phrase not in message(output)):
            failures.append(f"{name}: expected {expected}, got {got}: {output}")
    assert failures == []


def test_the_refusal_says_how_to_recover(run_cli, gate_project, payloads, ledger_ids):
    output = run_gate(run_cli, payloads(f"per {ledger_ids['fabricated']}", gate_project / "docs" / "a.md")["claude-write"])
    reason = message(output)
    top = max(ledger_ids["all"], key=lambda i: int(i[2:]))
    assert f"highest id visible here: {top}" in reason
    assert "refresh the ledger from main" in reason
    assert "Do not substitute a lower id that happens to exist" in reason
    assert str(gate_project / ".wolf" / "decisions.md") in reason


def test_ledger_file_itself_is_skipped(run_cli, gate_project, payloads, ledger_ids, shape):
    payload = payloads(f"## {ledger_ids['fabricated']}: newly minted", gate_project / ".wolf" / "decisions.md")[shape]
    assert run_gate(run_cli, payload) is None


def test_configured_fixtures_dir_is_skipped(run_cli, gate_project, payloads, ledger_ids):
    (gate_project / "memory-router.toml").write_text('citation_fixtures_dir = ".claude/hooks"\n', encoding="utf-8")
    text = f"fixture citing {ledger_ids['fabricated']}"
    inside = payloads(text, gate_project / ".claude" / "hooks" / "fixtures.json", cwd=gate_project)["claude-write"]
    outside = payloads(text, gate_project / "docs" / "a.md", cwd=gate_project)["claude-write"]
    assert run_gate(run_cli, inside) is None
    assert verdict(run_gate(run_cli, outside)) == "block"


def test_content_and_edits_together_audit_both(run_cli, gate_project, ledger_ids):
    payload = {"tool_name": "Write", "cwd": str(gate_project), "tool_input": {
        "file_path": str(gate_project / "docs" / "a.md"), "content": f"per {ledger_ids['live'][0]}",
        "edits": [{"old_string": "x", "new_string": f"per {ledger_ids['fabricated']}"}]}}
    assert verdict(run_gate(run_cli, payload)) == "block"


def test_non_string_new_string_is_serialised_not_dropped(run_cli, gate_project, ledger_ids):
    payload = {"tool_name": "Edit", "cwd": str(gate_project), "tool_input": {
        "file_path": str(gate_project / "docs" / "a.md"), "old_string": "x",
        "new_string": {"text": f"per {ledger_ids['fabricated']}"}, "replace_all": False}}
    assert verdict(run_gate(run_cli, payload)) == "block"


def test_fabrication_in_a_later_edit_is_found(run_cli, gate_project, ledger_ids):
    edits = [{"old_string": "a", "new_string": f"per {ledger_ids['live'][0]}"},
             {"old_string": "b", "new_string": "nothing"},
             {"old_string": "c", "new_string": f"per {ledger_ids['fabricated']}"}]
    payload = {"tool_name": "MultiEdit", "cwd": str(gate_project),
               "tool_input": {"file_path": str(gate_project / "docs" / "a.md"), "edits": edits}}
    output = run_gate(run_cli, payload)
    assert verdict(output) == "block" and ledger_ids["fabricated"] in message(output)


def test_removing_a_fabricated_citation_is_never_refused(run_cli, gate_project, ledger_ids):
    payload = {"tool_name": "Edit", "cwd": str(gate_project), "tool_input": {
        "file_path": str(gate_project / "docs" / "a.md"), "old_string": f"per {ledger_ids['fabricated']}",
        "new_string": "per nothing", "replace_all": False}}
    assert run_gate(run_cli, payload) is None


@pytest.mark.parametrize("worktree_git", [None, "file", "directory"])
def test_stale_worktree_ledger_sees_the_checkouts_fresher_ledger(run_cli, gate_project, payloads, ledger_ids,
                                                                 worktree_git):
    newest = max(ledger_ids["all"], key=lambda i: int(i[2:]))
    worktree = gate_project / ".claude" / "worktrees" / "builder"
    (worktree / ".wolf").mkdir(parents=True)
    (worktree / "docs").mkdir()
    if worktree_git == "file":  # a git worktree: .git is a file naming the checkout's git directory
        (worktree / ".git").write_text(f"gitdir: {gate_project / '.git' / 'worktrees' / 'builder'}\n", encoding="utf-8")
    elif worktree_git == "directory":  # a second clone inside the checkout
        (worktree / ".git").mkdir()
    full = (gate_project / ".wolf" / "decisions.md").read_text(encoding="utf-8")
    stale = full.split(f"## {newest}")[0]
    assert newest not in stale
    # No trailing newline: the merge must not fuse this file's last line with the next file's first.
    (worktree / ".wolf" / "decisions.md").write_text(stale.rstrip("\n"), encoding="utf-8")
    target = worktree / "docs" / "note.md"
    assert run_gate(run_cli, payloads(f"Per {newest}, this holds.", target)["claude-edit"]) is None
    output = run_gate(run_cli, payloads(f"Per {ledger_ids['fabricated']}, this holds.", target)["claude-edit"])
    assert verdict(output) == "block"
    assert f"highest id visible here: {newest}" in message(output)
    shutil.rmtree(gate_project / ".wolf")
    output = run_gate(run_cli, payloads(f"Per {newest}, this holds.", target)["claude-edit"])
    assert verdict(output) == "block", "without the checkout's ledger the worktree's stale one must refuse"


def test_no_ledger_anywhere_says_the_ids_were_not_checked(run_cli, tmp_path, payloads):
    output = run_gate(run_cli, payloads("Per D-030.", tmp_path / "a.md")["claude-write"])
    assert verdict(output) == "notice"
    assert "not checked: D-030 cited but no decision ledger was found" in message(output)


@pytest.mark.parametrize("raw", [b"", b"not json", b"\xff\xfe", bytes(range(256)), b"[1, 2]", b'"text"', b"null",
                                 b'{"tool_input": "x"}', b'{"tool_name": "Read", "tool_input": {"file_path": "/x"}}'])
def test_bad_or_unknown_payloads_never_block(run_cli, raw, tmp_path):
    log = tmp_path / "gate.log"
    output = run_gate(run_cli, raw, env={"MEMORY_ROUTER_LOG": str(log)})
    assert verdict(output) in ("silent", "notice")
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize("raw", [b"not json", b"[" * 100_000])
def test_unparseable_payload_is_announced(run_cli, tmp_path, raw):
    output = run_gate(run_cli, raw, env={"MEMORY_ROUTER_LOG": str(tmp_path / "log")})
    assert verdict(output) == "notice"
    assert "NOT checked" in message(output)


@pytest.mark.parametrize("breakage", ["bad toml", "bad pattern", "unknown option"])
def test_internal_error_lets_the_write_through_visibly(run_cli, gate_project, payloads, ledger_ids, tmp_path, breakage):
    options = []
    if breakage == "bad toml":
        (gate_project / "memory-router.toml").write_text("citation_ledgers = [\n", encoding="utf-8")
    elif breakage == "bad pattern":
        (gate_project / "memory-router.toml").write_text('citation_id_pattern = "D-("\n', encoding="utf-8")
    else:
        options = ["--bogus", "1"]
    log = tmp_path / "gate.log"
    payload = payloads(f"per {ledger_ids['fabricated']}", gate_project / "docs" / "a.md", cwd=gate_project)
    output = run_gate(run_cli, payload["claude-write"], *options, env={"MEMORY_ROUTER_LOG": str(log)})
    assert verdict(output) == "notice"
    assert "internal error, this write was NOT checked for citations" in message(output)
    logged = log.read_text(encoding="utf-8").splitlines()
    assert len(logged) == 1 and "memory-router gate: internal error" in logged[0]


def test_config_pattern_and_dead_words_apply(run_cli, gate_project, payloads):
    (gate_project / "memory-router.toml").write_text(
        'citation_id_pattern = "ADR-\\\\d{4}"\ncitation_ledgers = ["docs/adr/INDEX.md"]\n'
        'citation_dead_words = ["VOID"]\n', encoding="utf-8")
    (gate_project / "docs" / "adr").mkdir()
    (gate_project / "docs" / "adr" / "INDEX.md").write_text("- ADR-0001 \u2014 VOID\n- ADR-0002 \u2014 Live\n",
                                                            encoding="utf-8")
    target = gate_project / "a.md"
    run = lambda text: run_gate(run_cli, payloads(text, target, cwd=gate_project)["claude-write"])  # noqa: E731
    assert run("Per ADR-0002 and D-999.") is None
    assert verdict(run("Per ADR-0003.")) == "block"
    assert "opens VOID" in message(run("Per adr-0001."))


@pytest.fixture
def memory_project(gate_project):
    memory = gate_project / "memory"
    memory.mkdir()
    for name in ("feedback_killed_agent_work_verification.md", "MEMORY.md", "project-hot-strip.md"):
        (memory / name).write_text("---\nname: x\n---\nbody\n", encoding="utf-8")
    (gate_project / "brain").mkdir()
    clusters = gate_project / "brain" / "memory-layer1-clusters.md"
    clusters.write_text(
        "# Memory clusters\n\n## Layer 0 - Cluster Router\n\n- layer1_env \u00b7 1 \u00b7 tags: env, bash \u00b7 "
        "label: env\n\n## Layer 1 - Member Lines\n\n### layer1_env\n- env_bash_tool_env_var_caching - env; "
        "setx vars never reach the Bash tool\n", encoding="utf-8")
    (gate_project / "memory-router.toml").write_text('memory_dir = "memory"\n', encoding="utf-8")
    return gate_project


@pytest.mark.parametrize("text, expected", [
    ("(native memory: feedback_killed_agent_work_verification)", "silent"),
    ("memory: project-hot-strip", "silent"),
    ("Memory: env_bash_tool_env_var_caching", "silent"),
    ("per memory: feedback_killed_agent_verification", "block"),
    ("memory: MEMORY_index_file", "block"),
])
def test_memory_citations(run_cli, memory_project, payloads, text, expected, shape):
    output = run_gate(run_cli, payloads(text, memory_project / "docs" / "a.md", cwd=memory_project)[shape])
    assert verdict(output) == expected
    if expected == "block":
        assert "nearest existing" in message(output) or "no existing slug is close" in message(output)


def test_memory_block_names_the_nearest_slug(run_cli, memory_project, payloads):
    output = run_gate(run_cli, payloads("per memory: feedback_killed_agent_verification",
                                        memory_project / "docs" / "a.md", cwd=memory_project)["claude-write"])
    assert "nearest existing: feedback_killed_agent_work_verification" in message(output)


def test_memory_dir_defaults_to_claude_codes_location(run_cli, gate_project, payloads, tmp_path):
    config_dir = tmp_path / "claude-config"
    memory = config_dir / "projects" / project_key(gate_project) / "memory"
    memory.mkdir(parents=True)
    (memory / "user_prefers_tabs.md").write_text("x\n", encoding="utf-8")
    env = {"CLAUDE_CONFIG_DIR": str(config_dir)}
    target = gate_project / "docs" / "a.md"
    assert run_gate(run_cli, payloads("memory: user_prefers_tabs", target, cwd=gate_project)["claude-write"],
                    env=env) is None
    output = run_gate(run_cli, payloads("memory: user_prefers_spaces", target, cwd=gate_project)["claude-write"],
                      env=env)
    assert "nearest existing: user_prefers_tabs" in message(output)


def test_hook_options_choose_the_memory_sources(run_cli, memory_project, payloads, tmp_path):
    other = tmp_path / "other-memory"
    other.mkdir()
    (other / "reference_other_store.md").write_text("x\n", encoding="utf-8")
    payload = payloads("memory: reference_other_store", memory_project / "docs" / "a.md",
                       cwd=memory_project)["claude-write"]
    assert verdict(run_gate(run_cli, payload)) == "block"
    assert run_gate(run_cli, payload, "--memory-dir", str(other)) is None
    assert run_gate(run_cli, payload, f"--memory-dir={other}") is None


def test_without_cwd_the_project_is_the_git_root_above_the_file(run_cli, memory_project, payloads):
    payload = payloads("memory: project-hot-strip", memory_project / "docs" / "a.md")["claude-write"]
    del payload["cwd"]
    assert run_gate(run_cli, payload) is None
    payload["tool_input"]["content"] = "memory: project_cold_strip"
    assert verdict(run_gate(run_cli, payload)) == "block"


def test_relative_file_path_resolves_against_the_payload_cwd(run_cli, gate_project, ledger_ids):
    payload = {"tool_name": "Write", "cwd": str(gate_project / "docs"),
               "tool_input": {"file_path": "a.md", "content": f"per {ledger_ids['fabricated']}"}}
    assert verdict(run_gate(run_cli, payload)) == "block"
    payload["tool_input"]["file_path"] = "../.wolf/decisions.md"
    assert run_gate(run_cli, payload) is None


def test_gate_help_is_argparse_not_the_hook(run_cli):
    result = run_cli("gate", "--help")
    assert result.returncode == 0
    assert b"citation_id_pattern" in result.stdout and b"PreToolUse" in result.stdout


def test_a_corrupt_cluster_file_lets_memory_citations_through_visibly(run_cli, memory_project, payloads, tmp_path):
    (memory_project / "brain" / "memory-layer1-clusters.md").write_text("## Layer 0 - Cluster Router\n- broken\n",
                                                                        encoding="utf-8")
    log = tmp_path / "gate.log"
    output = run_gate(run_cli, payloads("memory: feedback_not_there", memory_project / "docs" / "a.md",
                                        cwd=memory_project)["claude-write"], env={"MEMORY_ROUTER_LOG": str(log)})
    assert verdict(output) == "notice"
    assert "internal error, this write was NOT checked" in message(output)
    assert "memory-layer1-clusters.md" in log.read_text(encoding="utf-8")


# --- issue 24 items 9, 10, 12 as Claude Code runs the gate ----------------------------------------

@pytest.mark.parametrize("raw, why", [
    (b"[1, 2]", "the payload is a JSON array, not an object"),
    (b'"text"', "the payload is a JSON string, not an object"),
    (b"null", "the payload is a JSON null, not an object"),
    (b'{"tool_name": "Write", "tool_input": "x"}', "its tool_input is a JSON string, not an object"),
    (b'{"tool_name": "Write", "tool_input": {"file_path": "/p/a.md"}}', "Write carries no text where a write adds it"),
    (b'{"tool_name": "Edit", "tool_input": {"file_path": "/p/a.md", "old_string": "x"}}', "Edit carries no text"),
    (b'{"tool_name": "MultiEdit", "tool_input": {"file_path": "/p/a.md", "edits": []}}', "MultiEdit carries no text"),
    (b'{"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/p/n.ipynb"}}', "NotebookEdit carries no text"),
], ids=["array", "string", "null", "tool-input-string", "write-without-content", "edit-without-new-string",
        "multiedit-no-edits", "notebookedit-without-source"])
def test_item9_every_unreadable_write_payload_gets_the_not_checked_notice(run_cli, tmp_path, raw, why):
    log = tmp_path / "gate.log"
    output = run_gate(run_cli, raw, env={"MEMORY_ROUTER_LOG": str(log)})
    assert verdict(output) == "notice"
    assert message(output).startswith(f"memory-router gate: this write was NOT checked for citations: {why}")
    assert len(log.read_text(encoding="utf-8").splitlines()) == 1


def test_item9_another_tools_payload_stays_silent(run_cli, tmp_path):
    raw = b'{"tool_name": "Read", "tool_input": {"file_path": "/x"}}'
    assert run_gate(run_cli, raw, env={"MEMORY_ROUTER_LOG": str(tmp_path / "log")}) is None


def test_item10_a_ledger_with_5000_malformed_lines_adds_a_short_notice(run_cli, gate_project, payloads, ledger_ids):
    with (gate_project / ".wolf" / "decisions.md").open("a", encoding="utf-8") as handle:
        handle.write("".join(f"## D{n:04d}: malformed\n" for n in range(5000)))
    result = run_cli("gate", input=json.dumps(payloads(f"Per {ledger_ids['live'][0]}.", gate_project / "docs" / "a.md")
                                               ["claude-write"]).encode())
    assert len(result.stdout) < 4_000
    output = json.loads(result.stdout)
    assert verdict(output) == "notice"
    assert message(output).endswith("and 4997 more lines that look like entries but do not parse")


def test_item10_a_14_kb_csv_of_order_codes_gets_a_short_refusal(run_cli, gate_project, payloads):
    csv = "code,item,qty\n" + "".join(f"D-{n:03d},widget-blue,{n % 7}\n" for n in range(100, 1000))
    assert len(csv) > 14_000
    result = run_cli("gate", input=json.dumps(payloads(csv, gate_project / "orders.csv")["claude-write"]).encode())
    assert len(result.stdout) < 8_000
    output = json.loads(result.stdout)
    assert verdict(output) == "block"
    assert "BLOCKED: and 895 more citations of ids or memories that do not exist: D-105" in message(output)


@pytest.mark.parametrize("layout", ["git checkout", "project directory"])
def test_item12_a_ledger_planted_in_a_shared_ancestor_is_not_merged(run_cli, gate_project, payloads, ledger_ids,
                                                                     layout):
    fake = ledger_ids["fabricated"]
    (gate_project.parent / "DECISIONS.md").write_text(f"## {fake}: planted in a shared directory\n", encoding="utf-8")
    if layout == "project directory":
        shutil.rmtree(gate_project / ".git")
    payload = payloads(f"Per {fake}.", gate_project / "docs" / "a.md", cwd=gate_project)["claude-edit"]
    output = run_gate(run_cli, payload)
    assert verdict(output) == "block"
    assert str(gate_project.parent / "DECISIONS.md") not in message(output)
