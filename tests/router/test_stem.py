import pytest

from router.stem import stem


@pytest.mark.parametrize("forms", [
    ("cache", "caches", "cached", "caching"),
    ("migrate", "migrated", "migrating", "migration", "migrations"),
    ("policy", "policies"),
    ("rebase", "rebased", "rebasing"),
    ("run", "running"),
    ("deploy", "deploys", "deploying", "deployment"),
    ("decide", "decided", "decision"),
    ("extend", "extension"),
    ("fail", "fails", "failed", "failing"),
    ("quick", "quickly"),
])
def test_inflections_meet(forms):
    assert len({stem(form) for form in forms}) == 1, {form: stem(form) for form in forms}


@pytest.mark.parametrize("a, b", [
    ("need", "ne"), ("speed", "spe"), ("string", "str"), ("thing", "th"), ("container", "contain"),
    ("python", "pyth"), ("process", "proc"),
])
def test_what_must_not_be_cut(a, b):
    assert stem(a) != b


@pytest.mark.parametrize("word", ["setx", "node_extra_ca_certs", "v4", "2026", "bug", "ci"])
def test_identifiers_and_short_words_are_left_alone(word):
    assert stem(word) == word
