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


def test_a_tuple_of_filters_may_hold_a_key_any_of_them_holds():
    first, second = key_filter({"alpha", "bravo"}), key_filter({"charlie"})
    assert may_hold((first, second), "alpha") and may_hold((first, second), "charlie")
    assert may_hold((second, first), "bravo")
    absent = [f"zz{i}" for i in range(200)]
    assert sum(may_hold((first, second), key) for key in absent) < 20


def test_the_filter_is_a_whole_number_of_64_bit_words_of_at_least_ten_bits_a_key():
    assert len(key_filter(set())) == 8 and len(key_filter({"a"})) == 8
    assert len(key_filter({f"k{i}" for i in range(7)})) == 16    # 70 bits: two words
    assert len(key_filter({f"k{i}" for i in range(64)})) == 80   # 640 bits: ten words exactly


def test_each_key_sets_the_bits_may_hold_reads():
    bits = key_filter({"alpha"})
    assert may_hold(bits, "alpha")
    set_bits = sum(bin(byte).count("1") for byte in bits)
    assert set_bits == wordmatch.FILTER_PROBES == 7       # an odd step: seven distinct bits of 64
    assert not may_hold(bytes(len(bits)), "alpha")             # an empty filter holds nothing
    assert may_hold(b"\xff" * 8, "anything")


def test_the_filter_grows_a_64_bit_word_for_every_64_bits_of_keys():
    assert len(key_filter({f"k{i}" for i in range(65)})) == 88     # 650 bits: eleven words, not ten


def test_any_string_can_be_a_key_even_one_that_is_not_valid_unicode():
    key = "caf\udce9"        # a lone surrogate, as surrogateescape decoding leaves undecodable bytes
    bits = key_filter({key, "plain"})
    assert may_hold(bits, key) and may_hold(bits, "plain")
