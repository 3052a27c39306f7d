"""Configuration: one file, documented defaults, unknown keys refused.

The file is ``memory-router.toml`` in the project (top-level keys) or the
``[tool.memory-router]`` table of the project's ``pyproject.toml``. This module holds the keys:
the settings, their defaults, documentation and ranges, and where files are looked for. Checking a
parsed table against them is ``router.configcheck``; reading a config file (``tomllib``, ~9 ms to
import) is ``router.configfile``; the hook imports both only when its cache misses.
"""

import os

from router.providerbudget import INSTALLED_HOOK_TIMEOUT_S, max_provider_budget_ms

# The spec's constants (spec §10) plus the knobs this implementation adds. Every one is shown
# in --help through ``describe_defaults``.
DEFAULTS = {
    "score_floor": 3,
    "tag_weight": 3,
    "member_weight": 1,
    "line_cap": 12,
    "second_ratio": 0.75,
    "max_context_chars": 9500,
    "max_prompt_chars": 20000,
    "lines_per_injection": 4,
    "line_evidence_share": 0.5,
    "provider": "weighted",
    "provider_timeout_ms": 150,
    "min_confidence": 0.0,
    "weighted_floor": 8.0,
    "weighted_tag_boost": 1.5,
    "weighted_spread": 0.0,
    "intent_gate": True,
    "intent_gate_focus": 4,
    "rare_word_rule": True,
    "word_priors": False,
    "word_prior_knee": 3.5,
    "utterances": True,
    "utterance_weight": 0.0,
    "utterance_floor": 8.0,
    "utterance_coverage": 0.45,
    "utterance_strong": 15.0,
    "utterance_line_share": 0.5,
    "utterance_line_limit": 0,
    "utterance_keep_plain": False,
    "veto": True,
    "veto_k": 5,
    "veto_margin": 0.1,
    "veto_power": 1.0,
    "veto_measure": "coverage",
    "veto_strong": 15.0,
    "veto_floor": 0.0,
    "veto_protect": 0.8,
}

# Claude Code replaces hook output over this many characters with a preview and a file path.
CLAUDE_CODE_OUTPUT_CAP = 10_000

DOCS = {
    "score_floor": "spec provider: a cluster fires only at or above this score (weighted uses weighted_floor)",
    "tag_weight": "points per prompt token found among a cluster's tag words",
    "member_weight": "points per prompt token found in its member slugs/hooks (minus tag words)",
    "line_cap": "most member lines injected per prompt",
    "second_ratio": "a second cluster joins only if it scores at least this share of the top one "
                    "and strictly more than the third",
    "max_context_chars": "injected text stays under this (Claude Code previews output over 10,000)",
    "max_prompt_chars": "longest prompt scored in full; longer ones score their first and last halves",
    "lines_per_injection": "most member lines sent per prompt, the best by evidence for it (0: up to line_cap); "
                           "lines the session already holds are never sent again",
    "line_evidence_share": "a member line is sent only with at least this share of the best line's evidence "
                           "for the prompt (0: no cut)",
    "provider": "who routes: null (never injects), spec (the reference scorer: points per tag and member word), weighted "
                "(IDF-weighted, stemmed), or package.module:factory",
    "provider_timeout_ms": "a custom provider (import, factory and call) past this budget injects nothing",
    "min_confidence": "a decision whose confidence (0-1) is under this injects nothing",
    "weighted_floor": "weighted provider: a cluster fires only at or above this score (IDF units)",
    "weighted_tag_boost": "weighted provider: multiplier of a tag word's weight",
    "weighted_spread": "weighted provider: share counted of member words outside the best-matching line",
    "intent_gate": "weighted provider: general requests (explain, what is, write a ...) with no "
                   "we/our/my/I inject nothing",
    "intent_gate_focus": "weighted provider: the gate lets a prompt through when one member line holds this many "
                         "of its words",
    "rare_word_rule": "weighted provider: the rarest matched word held by one member line brings its cluster",
    "word_priors": "weighted provider: discount common English words (needs the optional wordfreq package at "
                   "build time; its data is CC BY-SA 4.0)",
    "word_prior_knee": "weighted provider, word_priors: words commoner than this Zipf frequency lose weight",
    "utterances": "weighted provider: route on the utterances file beside the cluster file "
                  "(<cluster file stem>.utterances.tsv, written by clusters enrich) when there is one",
    "utterance_weight": "weighted provider, utterances: extra weight of an utterance word beyond the member word it "
                        "already is, x its idf among the members' utterances (0: none)",
    "utterance_floor": "weighted provider, utterances: weighted_floor when routing on utterances (IDF units)",
    "utterance_coverage": "weighted provider, utterances (near-miss gate): the top cluster's tags and best member "
                          "must explain this share of the prompt's words the store knows (0: off)",
    "utterance_strong": "weighted provider, utterances: a best member this strong (idf units) passes the near-miss "
                        "gate anyway (0: never)",
    "utterance_line_share": "weighted provider, utterances: a member line is sent only with this share of the best "
                            "member's evidence",
    "utterance_line_limit": "weighted provider, utterances: most member lines sent per prompt (0: line_cap)",
    "utterance_keep_plain": "weighted provider, utterances: a prompt the router without utterances routes at "
                            "weighted_floor is not dropped under utterance_floor (the gate and the veto still judge it)",
    "veto": "weighted provider, utterances: drop a decision whose prompt is nearer the near-misses and generic "
            "requests than the routed members' own exemplars (router.routing.veto)",
    "veto_k": "weighted provider, utterances (veto): how many nearest exemplars vote",
    "veto_margin": "weighted provider, utterances (veto): the negatives must beat the routed members by more than "
                   "this summed similarity (negative: vetoes more)",
    "veto_floor": "weighted provider, utterances (veto): a decision none of whose routed members has an exemplar "
                  "this near the prompt is dropped (0: off)",
    "veto_protect": "weighted provider, utterances (veto): a decision whose top cluster explains this share of the "
                    "prompt's known words (utterance_coverage's measure) is never vetoed (0: any can be)",
    "veto_strong": "weighted provider, utterances (veto): a best member this strong (idf units) is never vetoed "
                   "(0: any can be)",
    "veto_power": "weighted provider, utterances (veto): each of the k nearest votes its similarity to this power "
                  "(2: the nearest count most)",
    "veto_measure": "weighted provider, utterances (veto): how a prompt's nearness to an exemplar is measured: "
                    "cosine, balanced or coverage (router.routing.veto)",
}

# The feedback loop (router/store/learned.py, docs/learning.md): off unless the config turns it on.
LEARNING_DEFAULTS = {
    "learning": False,
    "learned_cap": 24,
}

LEARNED_SUFFIX = ".learned.tsv"
UTTERANCES_SUFFIX = ".utterances.tsv"
NEARMISSES_SUFFIX = ".nearmisses.tsv"


def learned_path(cluster_path):
    """The learned-terms file of a cluster file: ``brain/x.md`` -> ``brain/x.learned.tsv``. Here,
    not in ``router.store.learned``, because the hook needs the path on every prompt while learning is
    on, and the reader (with its regular expressions and record type) only on a cache miss."""
    return _beside(cluster_path, LEARNED_SUFFIX)


def hook_learned_file(cluster_path, config):
    """The learned-terms file the hook's table is built with (and keyed on): the one beside
    ``cluster_path`` when ``config`` turns learning on, else ``None``. The hook and every command
    that compiles its table ask here, so they build the same table."""
    return learned_path(os.path.abspath(cluster_path)) if config and config.get("learning") else None


def nearmisses_path(cluster_path):
    """The near-misses file of a cluster file: ``brain/x.md`` -> ``brain/x.nearmisses.tsv``."""
    return _beside(cluster_path, NEARMISSES_SUFFIX)


def _beside(cluster_path, suffix):
    base, ext = os.path.splitext(os.fspath(cluster_path))
    if ext.lower() not in (".md", ".markdown", ".tsv"):
        base = os.fspath(cluster_path)
    return base + suffix


def utterances_path(cluster_path):
    """The utterances file of a cluster file: ``brain/x.md`` -> ``brain/x.utterances.tsv``
    (docs/enrich.md). Here beside ``learned_path`` for the same reason: the hook needs the path
    (for the cache key) on every prompt, the reader only on a cache miss."""
    return _beside(cluster_path, UTTERANCES_SUFFIX)


LEARNING_DOCS = {
    "learning": "record feedback (MCP record_feedback, memory-router learn) as learned terms in "
                "<cluster file stem>.learned.tsv",
    "learned_cap": "most learned terms kept per cluster; the oldest leave first",
}

# --- citation gate (memory-router gate; docs/citation-gate.md) ---------------------------------
CITATION_DEFAULTS = {
    "citation_id_pattern": r"D-\d+",
    "citation_ledgers": [".wolf/decisions.md", "DECISIONS.md"],
    "citation_dead_words": ["REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT"],
    "citation_fixtures_dir": "",
}

CITATION_DOCS = {
    "citation_id_pattern": "regular expression of a decision id (matched case-insensitively, never inside "
                           "a hyphenated identifier)",
    "citation_ledgers": "ledger file names looked for in every directory from the edited file's up to the "
                        "outermost git work tree or project directory",
    "citation_dead_words": "a cited entry whose text opens with one of these words is warned about, not blocked",
    "citation_fixtures_dir": "directory (relative to the config file) whose files the gate never checks; "
                             "empty: none",
}
# --- end citation gate ------------------------------------------------------------------------

# Keys that are not routing settings.
OTHER_KEYS = {
    "clusters": "path of the cluster file (.md or .tsv), relative to the config file",
    "memory_dir": "the Claude Code memory directory holding MEMORY.md",
    "hot_strip": "slugs always loaded in the slim MEMORY.md (confabulation catchers)",
}

CONFIG_FILENAME = "memory-router.toml"
DEFAULT_CLUSTER_RELPATHS = (
    os.path.join("brain", "memory-layer1-clusters.md"),
    os.path.join("brain", "memory-layer1-clusters.tsv"),
)


def describe_defaults():
    """One line per setting, for --help epilogs."""
    lines = [f"  {key} = {value!r}: {DOCS[key]}" for key, value in DEFAULTS.items()]
    lines += [f"  {key} = {str(value).lower()}: {LEARNING_DOCS[key]}" for key, value in LEARNING_DEFAULTS.items()]
    return "\n".join(lines)


def describe_citation_defaults():
    """One line per citation gate setting, for ``gate --help``."""
    return "\n".join(f"  {key} = {value!r}: {CITATION_DOCS[key]}" for key, value in CITATION_DEFAULTS.items())


def citation_settings_of(config):
    """The citation gate settings of a parsed config (a fresh dict), or the defaults."""
    found = (config or {}).get("citation") or {}
    return {key: found.get(key, list(value) if isinstance(value, list) else value)
            for key, value in CITATION_DEFAULTS.items()}


def default_settings():
    return dict(DEFAULTS)


def settings_of(config):
    """The routing settings of a parsed config (a fresh dict), or the defaults when there is none."""
    return dict(config["settings"]) if config else default_settings()




# The range each setting must lie in, and why: a value outside it cannot route sensibly (a
# line_cap of 0 injects a bare header, a NaN ratio compares false with everything, a prompt cap
# of 1 scored the whole prompt).
RANGES = {
    "score_floor": (1, None, "a floor of 0 would fire on any single shared word"),
    "tag_weight": (0, None, "a weight is points per shared word"),
    "member_weight": (0, None, "a weight is points per shared word"),
    "line_cap": (1, None, "a cap of 0 injects a header without a single member line"),
    "second_ratio": (0.0, 1.0, "it is the share of the top score a second cluster needs"),
    "max_context_chars": (200, CLAUDE_CODE_OUTPUT_CAP, "below 200 no header and member line fit; above "
                          f"{CLAUDE_CODE_OUTPUT_CAP:,} Claude Code replaces hook output with a preview"),
    "max_prompt_chars": (200, 1_000_000, "a long prompt is scored on its first and last halves of this; "
                         "past a million characters the hook is no longer fast"),
    "lines_per_injection": (0, None, "0 means up to line_cap"),
    "line_evidence_share": (0.0, 1.0, "it is a share of the best line's evidence"),
    "provider_timeout_ms": (1, max_provider_budget_ms(INSTALLED_HOOK_TIMEOUT_S),
                            f"a budget in milliseconds that leaves the hook its own time inside the "
                            f"{INSTALLED_HOOK_TIMEOUT_S} s timeout install writes (router.providerbudget)"),
    "min_confidence": (0.0, 1.0, "a confidence lies between 0 and 1"),
    "weighted_floor": (0.0, None, "a floor in IDF units"),
    "weighted_tag_boost": (0.0, None, "a multiplier of a tag word's weight"),
    "weighted_spread": (0.0, 1.0, "it is a share of the words outside the best line"),
    "intent_gate_focus": (1, None, "a count of the prompt's words on one member line"),
    "word_prior_knee": (0.0, 8.0, "a Zipf frequency lies between 0 and 8"),
    "utterance_weight": (0.0, None, "a multiplier of an utterance word's weight"),
    "utterance_floor": (0.0, None, "a floor in IDF units"),
    "utterance_coverage": (0.0, 1.0, "it is a share of the prompt's known words"),
    "utterance_strong": (0.0, None, "a weight in IDF units (0: never)"),
    "utterance_line_share": (0.0, 1.0, "it is a share of the best member's evidence"),
    "utterance_line_limit": (0, None, "0 means up to line_cap"),
    "veto_k": (1, 50, "it is a count of exemplars"),
    "veto_margin": (-1.0, 1.0, "it is a difference of summed cosine similarities"),
    "veto_strong": (0.0, None, "a weight in IDF units (0: never)"),
    "veto_floor": (0.0, 1.0, "it is a similarity between 0 and 1"),
    "veto_power": (0.5, 4.0, "it is an exponent of a similarity"),
    "veto_protect": (0.0, 1.0, "it is a share of the prompt's known words"),
}


# Settings that name one of a few methods (the hook reads the value as it is).
CHOICES = {"veto_measure": ("cosine", "balanced", "coverage")}


def config_candidates(project_dir):
    """Config files to look for in ``project_dir``, in order."""
    return (os.path.join(project_dir, CONFIG_FILENAME), os.path.join(project_dir, "pyproject.toml"))


def project_dirs(cwd=None):
    """Where a project's config and brain/ directory are looked for: $CLAUDE_PROJECT_DIR, then cwd."""
    dirs = []
    env_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if env_dir:
        dirs.append(env_dir)
    dirs.append(cwd or os.getcwd())
    return dirs


def find_default_cluster_file(dirs):
    for project_dir in dirs:
        if not project_dir:
            continue
        for rel in DEFAULT_CLUSTER_RELPATHS:
            candidate = os.path.join(project_dir, rel)
            if os.path.isfile(candidate):
                return candidate
    return None


def resolve_cluster_path(explicit=None, config=None, dirs=()):
    """The cluster file by the documented order: --clusters, $MEMORY_ROUTER_CLUSTERS, the config
    file, then brain/memory-layer1-clusters.md (or .tsv) under each project dir. ``None`` if none."""
    if explicit:
        return explicit
    env_path = os.environ.get("MEMORY_ROUTER_CLUSTERS")
    if env_path:
        return env_path
    if config and config.get("clusters"):
        return config["clusters"]
    return find_default_cluster_file(dirs)


def bundled_example_dir():
    return os.path.join(os.path.dirname(__file__), "data", "example")


def bundled_cluster_file():
    """The bundled example store's cluster file (package data)."""
    return os.path.join(bundled_example_dir(), "memory-layer1-clusters.md")


def bundled_flat_index():
    """The bundled example store's flat MEMORY.md."""
    return os.path.join(bundled_example_dir(), "MEMORY.md")
