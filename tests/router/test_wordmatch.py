"""router/routing/wordmatch.py: the spelling repair's key filter, made at build time, read at route time."""

from router.routing import wordmatch
from router.routing.wordmatch import deletes, key_filter, may_hold


def test_the_filter_holds_every_key_it_was_made_of():
    keys = {variant for word in ("certificate", "zscaler", "pnpm", "lockfile") for variant in deletes(word) | {word}}
    bits = key_filter(keys)
    assert all(may_hold(bits, key) for key in keys)
    assert len(bits) * 8 >= len(keys) * wordmatch.FILTER_BITS_PER_KEY


def test_the_filter_refuses_most_keys_it_was_not_made_of():
    keys = {f"word{i:05d}" for i in range(5000)}
    bits = key_filter(keys)
    strangers = [f"other{i:05d}" for i in range(5000)]
    assert sum(may_hold(bits, key) for key in strangers) < 150      # ~1% expected


class CountingPostings(dict):
    """A fuzzy postings mapping that counts its lookups (each is a shard read on a cached table)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.asked = []

    def get(self, key, default=()):
        self.asked.append(key)
        return super().get(key, default)


def _table(with_filter):
    words = {"certificate": (2.0, 1, 0), "zscaler": (3.0, 1, 0)}
    fuzzy = CountingPostings({variant: (word,) for word in words for variant in deletes(word) | {word}})
    table = {"term_postings": words, "fuzzy_postings": fuzzy}
    if with_filter:
        table["fuzzy_filter"] = key_filter(set(fuzzy))
    return table


def test_the_repair_asks_the_postings_only_for_variants_the_filter_may_hold():
    plain, filtered = _table(False), _table(True)
    prompt = {"certficate", "zscaler", "hupyelfa", "brimimonx"}
    assert wordmatch._match(prompt, filtered) == wordmatch._match(prompt, plain)
    assert wordmatch._match(prompt, filtered)["certificate"][2] == "certficate"
    asked_plain, asked_filtered = len(plain["fuzzy_postings"].asked), len(filtered["fuzzy_postings"].asked)
    assert asked_plain == sum(len(deletes(w)) + 1 for w in ("certficate", "hupyelfa", "brimimonx"))
    assert asked_filtered < asked_plain / 3
    assert set(filtered["fuzzy_postings"].asked) <= set(filtered["fuzzy_postings"]) | set(plain["fuzzy_postings"].asked)
