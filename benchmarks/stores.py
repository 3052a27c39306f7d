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
