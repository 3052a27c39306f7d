"""Phrase matching for the behavioural verdict (canaries/phrases.py): whole words, quotes and line
breaks, negation, and the router's member line."""

import pytest

from canaries.phrases import find_phrases, forbidden_hits, member_line
from support.verdict_sessions import SLUG, router_context


@pytest.mark.parametrize("phrases, text, found", [
    (["Text"], "set it to text", ["Text"]),
    (["Text"], "the build context is empty; plaintext too", []),
    (["Plaintext"], "use Plaintext.", ["Plaintext"]),
    (["reboot didn't fix"], "even a full reboot didn\u2019t fix it", ["reboot didn't fix"]),
    (["user-opened terminal"], "check in a user-opened\nterminal", ["user-opened terminal"]),
    (["user-opened terminal"], "check in a user opened terminal", []),
    (["restart the session"], "just restart the\nsession", ["restart the session"]),
])
def test_find_phrases(phrases, text, found):
    assert find_phrases(phrases, text) == found


@pytest.mark.parametrize("text, negated", [
    ("You should restart the session.", False),
    ("You don't need to restart the session.", True),
    ("No. Restart the session.", False),
    ("Rather than restart the session, open a new terminal.", True),
    ("Never restart the session for this. Then restart the session anyway.", False),
])
def test_forbidden_hits_negation(text, negated):
    assert forbidden_hits(["restart the session"], text) == {"restart the session": negated}


def test_member_line():
    text = router_context()
    line, hook = member_line(text, SLUG)
    assert line.startswith(f"- {SLUG} \u2014 ") and hook in line
    assert member_line(text, "env_cloudflare") is None
