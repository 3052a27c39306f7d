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
    ("user_prefers_command_first", "wants the exact command first and a one-line why after it; never tables", True),
    ("user_team_callum_lab_manager", "Callum Reid (lab manager) owns the OT-2 robots; never change a protocol", False),
    ("user_laptop_fedora", "Framework 13 laptop on Fedora 41 with the fish shell", False),
    ("project_dashboard_layout", "the dashboard shows decisions by week; never lost a week", False),
    ("feedback_python_black", "Python is formatted with black and linted with pylint", False),
    ("env_gpu_node_booking", "bothy-g01 (2x A100) is booked in the shared calendar", False),
])
def test_the_profile_and_corrections_and_gotchas_with_a_trap_qualify(slug, hook, qualifies):
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


def test_the_profile_is_proposed_first_answer_style_then_role_within_its_cap():
    """Issue 29 item 4: how the user wants answers and who they are apply to every prompt, so the
    proposal keeps them loaded (no prompt names them, so the router would never send them)."""
    memories = [_memory("user_role_bioinf", "Eilidh, bioinformatics and lab-automation engineer at Thistledown"),
                _memory("user_team_moira_cso", "Dr Moira Kinnaird signs every customer report"),
                _memory("feedback_psql_begin", "start every psql session on prod with BEGIN; a table was lost 2025-11"),
                _memory("user_prefers_command_first", "wants the exact command first; no tables unless asked, no emoji"),
                _memory("user_prefers_british", "prefers British spelling in prose"),
                _memory("user_timezone_dundee", "based in Dundee (GMT/BST); no meetings before 10:00"),
                _memory("user_side_role", "also a maintainer of a small R package")]
    proposal = hotstrip.propose(memories)
    assert proposal[:3] == ["user_prefers_command_first", "user_prefers_british", "user_role_bioinf"]
    assert "feedback_psql_begin" in proposal and "user_team_moira_cso" not in proposal
    assert "user_timezone_dundee" not in proposal and "user_side_role" not in proposal  # the cap
    assert sum(slug.startswith("user_") for slug in proposal) == hotstrip.PROFILE_CAP


def test_the_profile_counts_against_the_byte_budget():
    style = _memory("user_prefers_command_first", "wants the exact command first; no tables unless asked")
    skeleton = len(hotstrip.slim.assemble_slim_index([], []).encode())
    assert hotstrip.propose([style], target_bytes=skeleton + hotstrip.strip_bytes([style]) - 1) == []
    assert hotstrip.propose([style], target_bytes=skeleton + hotstrip.strip_bytes([style])) == [style.slug]
