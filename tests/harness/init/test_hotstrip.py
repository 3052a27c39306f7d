"""harness.init.hotstrip: which memories init proposes to keep always loaded, and how a user's
answer to the proposal is read."""

import pytest

from harness.init import hotstrip
from harness.memorydir import Memory


def _memory(slug, hook, type_=None):
    return Memory(slug, type_ or slug.split("_", 1)[0], hook)


@pytest.mark.parametrize("slug, hook, qualifies", [
    ("feedback_psql_begin_first", "start every manual psql session on prod with BEGIN; a table was lost 2025-11", True),
    ("env_bash_tool_env_var_caching", "setx vars never reach the Bash tool: even a full OS reboot didn't fix it",
     True),
    ("env_scratch_purge", "/scratch is purged every Sunday; a week of results was lost in March", True),
    ("feedback_never_echo_secrets", "never print a token or key to the terminal or logs", True),
    ("user_prefers_command_first", "wants the exact command first and a one-line why after it; never tables", False),
    ("project_dashboard_layout", "the dashboard shows decisions by week; never lost a week", False),
    ("feedback_python_black", "Python is formatted with black and linted with pylint", False),
    ("env_gpu_node_booking", "bothy-g01 (2x A100) is booked in the shared calendar", False),
])
def test_only_corrections_and_gotchas_with_a_trap_qualify(slug, hook, qualifies):
    assert (hotstrip.hot_score(_memory(slug, hook)) >= hotstrip.MIN_SCORE) is qualifies


def test_an_incident_outranks_a_plain_rule_and_ties_keep_the_index_order():
    memories = [_memory("feedback_rule_a", "never use tabs"),
                _memory("feedback_incident", "run migrations before deploying; prod got a half-applied schema"),
                _memory("feedback_rule_b", "never use spaces in names of prod data files")]
    assert hotstrip.propose(memories)[0] == "feedback_incident"


def test_the_proposal_stays_within_the_cap_and_the_slim_byte_budget():
    memories = [_memory(f"feedback_lost_{i}", f"never drop table {i} on prod; data was lost 2025-0{i % 9 + 1}")
                for i in range(30)]
    assert len(hotstrip.propose(memories)) == hotstrip.HOT_STRIP_CAP
    lines = hotstrip.strip_bytes(memories[:1])
    skeleton = len(hotstrip.slim.assemble_slim_index([], []).encode())
    assert len(hotstrip.propose(memories, target_bytes=skeleton + 3 * lines)) == 3
    assert hotstrip.propose(memories, target_bytes=skeleton) == []


@pytest.mark.parametrize("answer, expected", [
    ("", ["a", "b", "c"]), ("y\n", ["a", "b", "c"]), ("-", []), ("none", []),
    ("3 1", ["c", "a"]), ("b, extra", ["b", "extra"]), ("1 1 a", ["a"]),
])
def test_parse_answer(answer, expected):
    assert hotstrip.parse_answer(answer, ["a", "b", "c"], {"a", "b", "c", "extra"}) == expected


@pytest.mark.parametrize("answer, message", [("4", "1 to 3"), ("0", "1 to 3"), ("nope", "no memory")])
def test_parse_answer_names_what_it_cannot_read(answer, message):
    with pytest.raises(ValueError, match=message):
        hotstrip.parse_answer(answer, ["a", "b", "c"], {"a", "b", "c"})
