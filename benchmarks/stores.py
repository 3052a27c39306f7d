"""Deterministic synthetic cluster stores for benchmarks (no randomness beyond a fixed seed)."""

import random

_SYLLABLES = ["ka", "lo", "mi", "ren", "tu", "vas", "zor", "pe", "qui", "dan", "sol", "bri", "mon", "tek",
              "fa", "gli", "hup", "jin", "nex", "orb", "pry", "sku", "tor", "ulm", "vek", "wyn", "xan", "yel"]


def _word(rng):
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))


def generate_store(clusters=2000, members_per_cluster=5, vocabulary=20000, seed=7):
    """A valid Markdown cluster file with ``clusters * members_per_cluster`` members."""
    rng = random.Random(seed)
    words = sorted({_word(rng) for _ in range(vocabulary)})
    layer0 = []
    layer1 = []
    for c in range(clusters):
        cid = f"layer1_{c:05d}"
        tags = ", ".join(rng.sample(words, 4))
        layer0.append(f"- {cid} \u00b7 {members_per_cluster} \u00b7 tags: {tags} \u00b7 label: synthetic cluster {c}")
        layer1.append(f"\n### {cid}")
        for m in range(members_per_cluster):
            hook = " ".join(rng.sample(words, 14))
            layer1.append(f"- m_{c:05d}_{m} - project; {hook}")
    return ("# Memory clusters\n\n## Layer 0 - Cluster Router\n\n" + "\n".join(layer0)
            + "\n\n## Layer 1 - Member Lines\n" + "\n".join(layer1) + "\n")


_EVERYDAY = ("why", "broken", "again", "slow", "fails", "error", "missing", "weird", "stuck", "help", "keeps",
             "after", "update", "install", "config", "setting", "crash", "login", "file", "folder", "build",
             "deploy", "test", "timeout", "page", "button", "screen", "script", "server", "network")


def generate_utterances(cluster_text, per_member=10, seed=11):
    """``{slug: (utterance, ...)}``: ``per_member`` synthetic utterances for every member of a
    ``generate_store`` text, each 6-10 words: everyday words (a few very common across the store,
    the rest drawn with a Zipf-like skew), one or two of the member's own hook words, and words of a
    vocabulary no hook uses, so the postings have the long tail and the few heavy words a real
    store's utterances have."""
    rng = random.Random(seed)
    vocabulary = sorted({_word(rng) + "x" for _ in range(5000)})
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    out = {}
    for line in cluster_text.splitlines():
        if not line.startswith("- m_"):
            continue
        slug, _sep, rest = line[2:].partition(" - ")
        hook_words = rest.split("; ", 1)[-1].split()
        texts = []
        for _ in range(per_member):
            words = rng.sample(_EVERYDAY, 2) + rng.sample(hook_words, rng.randint(1, 2))
            words += rng.choices(vocabulary, weights=weights, k=rng.randint(3, 6))
            rng.shuffle(words)
            texts.append(" ".join(words))
        out[slug] = tuple(texts)
    return out
