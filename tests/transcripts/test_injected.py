"""The injected texts of one stream, found again by content (transcripts/injected.py)."""

from transcripts.auditmodel import MIN_RESEND_CHARS
from transcripts.injected import SEPARATOR, InjectedTexts, text_digest

ROUTER = "Routed memory cluster: env-vars\n- setx-reboot \u2014 setx needs a new shell\n- path-cache \u2014 PATH is cached"
OTHER = "another hook's context, long enough to be searched for"


def remembered(*bodies):
    texts = InjectedTexts()
    for line, body in enumerate(bodies, 1):
        texts.remember(body, text_digest(body), line, line)
    return texts


def test_a_text_is_found_again_inside_a_later_line_but_not_as_itself():
    texts = remembered(ROUTER, OTHER)
    later = f"noise {ROUTER} more noise"
    assert texts.find((later,), None) == {text_digest(ROUTER): None}
    assert texts.find((later,), text_digest(ROUTER)) is None          # the injection's own line
    assert texts.find(("nothing injected here",), None) is None
    assert texts.find((f"x {OTHER} y {ROUTER}",), None).keys() == {text_digest(OTHER), text_digest(ROUTER)}


def test_short_texts_are_not_searched_for():
    short = "x" * (MIN_RESEND_CHARS - 1)
    texts = remembered(short)
    assert len(texts) == 1 and not texts.probes
    assert texts.find((f"a {short} b",), None) is None


def test_one_record_per_distinct_text_with_its_first_and_last_line():
    texts = remembered(OTHER, OTHER, ROUTER, OTHER)
    record = texts[text_digest(OTHER)]
    assert len(texts) == 2 and (record.first_line, record.last_line) == (1, 4)
    assert list(record.by_prompt) == [1, 2, 4]


def test_a_text_holding_the_separator_turns_joined_search_off():
    texts = remembered(OTHER)
    assert texts.separator_safe
    texts.remember(f"{OTHER}{SEPARATOR}tail", text_digest(f"{OTHER}{SEPARATOR}tail"), 2, 2)
    assert not texts.separator_safe


def test_member_lines_held_until_a_compaction():
    texts = InjectedTexts()
    assert texts.members_again(ROUTER.split("\n"), 3) == []                 # header skipped, both held
    assert texts.members_again(ROUTER.split("\n"), 3) == []                 # the same line again: not a re-send
    assert texts.members_again(ROUTER.split("\n"), 9) == [("setx-reboot", 3), ("path-cache", 3)]
    texts.compacted()
    assert texts.members_again(ROUTER.split("\n"), 12) == []
