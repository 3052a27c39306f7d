"""Validate the real-wording benchmark's stores (format only, never routing; issue 34).

Each folder under benchmarks/realwording/ is one store built from public threads (layout:
benchmarks/realwording/README.md). A store is worth something only while its labels were made
without looking at a router, so this checker never routes a prompt. It checks, per store:

- README.md exists; a held-out store's README carries the rule of benchmarks/heldout/README.md
  ("The rule" section: its opening paragraph and bullets, ``heldout_rule``) word for word;
- memory-router.toml names clusters.md and memory (relative); the cluster file parses;
- every memory file has front matter (name = slug, description, type one of TYPES), is listed in
  memory/MEMORY.md and is a member of clusters.md with the same type and hook, and vice versa;
  the store holds MIN_MEMORIES to MAX_MEMORIES memories;
- people.yaml (never canary*.yaml) loads with the suite loader against clusters.md; every case's
  first tag is its kind (identifier, member, paraphrase, near-miss-people) and its second a
  cluster id (or ``none`` for a near-miss); a topical case routes to the cluster of the one memory
  it injects; a near-miss expects silence; each topical case's kind is what the word-overlap
  rule says (``overlap_kind``) and each near-miss shares a content word with the store; at least
  MIN_TOPICAL topical and MIN_NEAR_MISS near-miss cases;
- sources.tsv has ``<id>\\t<url>`` rows (https, no header) for every case id and every memory
  slug, and names nothing else;
- the blind files, once written, name only the store's slugs and cluster ids, with
  BLIND_PER_MEMORY utterances a memory and BLIND_PER_CLUSTER requests a cluster.

The word-overlap rule (DATA-FORMAT.md) is plain text counting, no router code: words are the
lowercased alphanumeric runs minus English function words, crudely suffix-stripped; a
code-like token is a whitespace-separated token with ``_``, ``.`` (not a trailing full stop),
``/``, a digit or an inner capital; the prompt and the memory share it when both hold it
(compared lowercased) and it is code-like in at least one of them.

    python benchmarks/realwording_data.py [STORE_DIR ...] [--json | --table]

Without a directory every store under benchmarks/realwording/ is checked. Exit 0 when all are
valid (prints the counts per store), 1 with one line per problem. --table prints the counts as
the Markdown table of benchmarks/realwording/README.md ("The stores").
"""

import argparse
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from heldout_data import check_store_files, load_store_suite  # noqa: E402

ROOT = os.path.join(HERE, "realwording")
HELDOUT_README = os.path.join(HERE, "heldout", "README.md")
SUITE_NAME = "people.yaml"
SOURCES_NAME = "sources.tsv"
BLIND_UTTERANCES = "blind-utterances.tsv"
BLIND_NEARMISSES = "blind-nearmisses.tsv"
BLIND_PER_MEMORY = 10
BLIND_PER_CLUSTER = 12

# Stores nothing may ever be fitted on (their README carries the held-out rule).
HELD_OUT_STORES = ("neovim", "flutter")

TYPES = ("user", "feedback", "project", "env", "reference")
TOPICAL_KINDS = ("identifier", "member", "paraphrase")
NEAR_MISS_KIND = "near-miss-people"
KINDS = TOPICAL_KINDS + (NEAR_MISS_KIND,)
MIN_MEMORIES, MAX_MEMORIES = 25, 40
MIN_TOPICAL = 30
MIN_NEAR_MISS = 20
# Aimed for, reported, not required: people's paraphrases are what the corpus holds.
PARAPHRASE_AIM = 8

# English function words: articles, pronouns, prepositions, conjunctions, auxiliaries, modals,
# question words and a few fillers. Fixed here; never chosen by looking at a router's result.
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its it's i me my mine we us our ours you your yours
he him his she her hers they them their theirs one ones some any each every all both either
neither no nor not none other another such own same so than too very just only also even still
yet again ever never always often then once now when where why how what which who whom whose
whether while if else because since until unless although though as at by for from in into of
off on onto out over under up down with within without about above below after before between
through during against among across along around behind beyond upon via per to and or but
is am are was were be been being do does did done doing have has had having can could shall
should will would may might must ought let lets get gets got getting make makes made
i'm i've i'd i'll you're we're they're isn't aren't wasn't weren't don't doesn't didn't can't
cannot won't wouldn't shouldn't couldn't hasn't haven't hadn't s t d ll ve re m
more most less least much many few lot lots quite rather really please thanks thank hi hello
like way thing things something anything nothing everything someone anyone
""".split())

_WORD_RE = re.compile(r"[a-z0-9]+")
_EDGE_PUNCT = "\"'`()[]{}<>,;:!?*"


def _stem(word):
    """A crude suffix strip, so `files`, `filed` and `file` count as one word."""
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def content_words(text):
    """The text's content words (lowercased, function words dropped, suffix-stripped)."""
    return {_stem(word) for word in _WORD_RE.findall(text.lower())
            if word not in FUNCTION_WORDS and not word.isdigit()}


def _is_code_like(token):
    if any(mark in token for mark in "_/") or any(ch.isdigit() for ch in token):
        return True
    if "." in token:  # sentence full stops are stripped before this; `.loc` is a method
        return True
    return any(a.islower() and b.isupper() for a, b in zip(token, token[1:]))


def _tokens(text):
    """Whitespace-separated tokens, edge punctuation and full stops stripped, lowercased when
    compared (a person types `settingwithcopywarning` for the same identifier)."""
    for raw in text.split():
        token = raw.strip(_EDGE_PUNCT).rstrip(".")
        if token:
            yield token


def code_tokens(text):
    """The text's code-like tokens, lowercased (``SettingWithCopyWarning``, ``ERR_SSL``, ``0x80``)."""
    return {token.lower() for token in _tokens(text) if _is_code_like(token)}


def shared_identifiers(prompt, memory_text):
    """Code-like tokens (code-like on either side) that both texts hold, compared lowercased."""
    both = {t.lower() for t in _tokens(prompt)} & {t.lower() for t in _tokens(memory_text)}
    return both & (code_tokens(prompt) | code_tokens(memory_text))


def overlap_kind(prompt, memory_text):
    """``identifier``, ``member`` or ``paraphrase``: what the prompt shares with the memory."""
    if shared_identifiers(prompt, memory_text):
        return "identifier"
    if content_words(prompt) & content_words(memory_text):
        return "member"
    return "paraphrase"


def memory_text(found):
    """A memory file's words as the rule counts them: slug words, description and body."""
    return " ".join((found.slug.replace("_", " "), found.description or "", found.body or ""))


def heldout_rule():
    """The rule of benchmarks/heldout/README.md's "The rule" section, as pieces a held-out store's
    README must carry word for word: its opening paragraph and each of its bullets, except the
    one about that directory's own suite file name (a store here names ``people.yaml`` instead)
    and the paragraph after the list, which tells that store's own provenance."""
    with open(HELDOUT_README, encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"^## The rule\n(.*?)(?=^## )", text, re.S | re.M)
    if not match:
        return []
    blocks = [block for block in match.group(1).strip().split("\n\n")]
    opening, bullets = blocks[0], blocks[1] if len(blocks) > 1 else ""
    pieces = [opening] + ["- " + item for item in bullets.lstrip("- ").split("\n- ")]
    return [" ".join(piece.split()) for piece in pieces if "heldout.yaml" not in piece]


def _check_readme(directory, problems):
    path = os.path.join(directory, "README.md")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        problems.append(f"{path}: missing (the project, the persona, counts, the threads used)")
        return
    if os.path.basename(os.path.abspath(directory)) in HELD_OUT_STORES:
        flat = " ".join(text.split())
        rule = heldout_rule()
        missing = [piece for piece in rule if piece not in flat]
        if not rule or missing:
            problems.append(f"{path}: a held-out store's README must carry the rule of "
                            f"benchmarks/heldout/README.md ('The rule' section) word for word; missing: "
                            f"{(missing or ['the rule'])[0][:60]}...")


def _check_store(directory, problems):
    """``(index, memory files by slug)`` after the checks shared with the held-out stores
    (heldout_data.check_store_files), the memory_dir setting, the types and the memory count."""
    config, index, by_file = check_store_files(directory, problems)
    if config is not None:
        config_path = os.path.join(directory, "memory-router.toml")
        expected = os.path.join(directory, "memory")
        if os.path.abspath(config.get("memory_dir") or "") != os.path.abspath(expected):
            problems.append(f"{config_path}: memory_dir is {config.get('memory_dir')}, expected {expected} (relative)")
    if index is None:
        return None, {}
    for found in by_file.values():
        if found.type and found.type not in TYPES:
            where = os.path.relpath(found.path, directory)
            problems.append(f"{where}: type {found.type!r} is not one of {', '.join(TYPES)}")
    memory_dir = os.path.join(directory, "memory")
    if by_file and not MIN_MEMORIES <= len(by_file) <= MAX_MEMORIES:
        problems.append(f"{memory_dir}: {len(by_file)} memories, expected {MIN_MEMORIES} to {MAX_MEMORIES}")
    return index, by_file


def _check_suite(directory, index, by_file, problems):
    """``(counts per kind, case ids)``; empty when the suite does not load."""
    counts = dict.fromkeys(KINDS, 0)
    for path in glob.glob(os.path.join(directory, "canary*.yaml")):
        problems.append(f"{path}: never name a store's suite canary*.yaml (the pytest plugin would "
                        f"route it on every run); it is {SUITE_NAME}")
    suite_path = os.path.join(directory, SUITE_NAME)
    cluster_path = os.path.join(directory, "clusters.md")
    suite = load_store_suite(suite_path, cluster_path, problems)
    if suite is None:
        return counts, set()
    store_words = set()
    for found in by_file.values():
        store_words |= content_words(memory_text(found))
    for case in suite.cases:
        where = f"{suite_path}:{case.line}"
        kind = case.tags[0] if case.tags else None
        if kind not in KINDS:
            problems.append(f"{where}: {case.id}'s first tag must be its kind, one of {', '.join(KINDS)}")
            continue
        counts[kind] += 1
        second = case.tags[1] if len(case.tags) > 1 else None
        known_cluster = index is not None and second is not None and index.has_cluster(second)
        if kind == NEAR_MISS_KIND:
            if case.silent is not True or case.routes_to or case.injects:
                problems.append(f"{where}: {case.id} is {kind}, so it must expect silence and no cluster")
            if second != "none" and not known_cluster:
                problems.append(f"{where}: {case.id}'s second tag must be the cluster it grazes or none")
            if store_words and not content_words(case.prompt) & store_words:
                problems.append(f"{where}: {case.id} shares no content word with the store "
                                f"(a near-miss must graze it)")
            continue
        if not known_cluster:
            problems.append(f"{where}: {case.id}'s second tag must be its cluster id")
        if not case.routes_to or len(case.routes_to) != 1 or case.routes_to[0] != second:
            problems.append(f"{where}: {case.id} must route to exactly its cluster (its second tag)")
        if len(case.injects) != 1:
            problems.append(f"{where}: {case.id} must inject exactly one memory")
            continue
        slug = case.injects[0]
        home = index.find_member(slug) if index is not None else None
        if home is not None and case.routes_to and home[0].cluster_id != case.routes_to[0]:
            problems.append(f"{where}: {case.id} injects {slug}, a member of {home[0].cluster_id}, "
                            f"but routes to {case.routes_to[0]}")
        if slug in by_file:
            actual = overlap_kind(case.prompt, memory_text(by_file[slug]))
            if actual != kind:
                problems.append(f"{where}: {case.id} is tagged {kind} but the word-overlap rule makes it "
                                f"{actual} (against {slug})")
    topical = sum(counts[kind] for kind in TOPICAL_KINDS)
    if topical < MIN_TOPICAL:
        problems.append(f"{suite_path}: {topical} topical cases, at least {MIN_TOPICAL} needed")
    if counts[NEAR_MISS_KIND] < MIN_NEAR_MISS:
        problems.append(f"{suite_path}: {counts[NEAR_MISS_KIND]} {NEAR_MISS_KIND} cases, "
                        f"at least {MIN_NEAR_MISS} needed")
    return counts, {case.id for case in suite.cases}


def _read_tsv(path, problems, required):
    """Rows ``(line, first, second)`` of a two-column TSV; ``None`` when absent and not required."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError:
        if required:
            problems.append(f"{path}: missing (one '<id>\\t<url>' row per case id and memory slug)")
        return None
    rows = []
    for number, line in enumerate(lines, 1):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            problems.append(f"{path}:{number}: expected two tab-separated fields")
            continue
        rows.append((number, parts[0].strip(), parts[1].strip()))
    return rows


def _check_sources(directory, case_ids, slugs, problems):
    path = os.path.join(directory, SOURCES_NAME)
    rows = _read_tsv(path, problems, required=True)
    if rows is None:
        return
    cited = set()
    for number, key, url in rows:
        if not url.startswith("https://"):
            problems.append(f"{path}:{number}: {key}'s source is not an https URL: {url}")
        if key not in case_ids and key not in slugs:
            problems.append(f"{path}:{number}: {key} is neither a case id nor a memory slug")
        cited.add(key)
    for key in sorted((set(case_ids) | set(slugs)) - cited):
        problems.append(f"{path}: {key} has no source URL")


def _check_blind(directory, index, slugs, problems):
    """The blind files, once written: known slugs and cluster ids only, BLIND_PER_MEMORY
    utterances for every memory and BLIND_PER_CLUSTER requests for every cluster."""
    cluster_ids = set(index.cluster_ids) if index is not None else set()
    for name, known, what, per in ((BLIND_UTTERANCES, set(slugs), "memory slug", BLIND_PER_MEMORY),
                                   (BLIND_NEARMISSES, cluster_ids, "cluster id", BLIND_PER_CLUSTER)):
        path = os.path.join(directory, name)
        rows = _read_tsv(path, problems, required=False)
        if rows is None:
            continue
        seen = dict.fromkeys(sorted(known), 0)
        for number, key, _text in rows:
            if key not in known:
                problems.append(f"{path}:{number}: {key} is not a {what} of this store")
            else:
                seen[key] += 1
        for key, count in seen.items():
            if count != per:
                problems.append(f"{path}: {what} {key} has {count} rows, expected {per}")


def check_store(directory):
    """``(problems, counts)`` for one store: every problem (one line each) and the case and
    memory counts."""
    problems = []
    _check_readme(directory, problems)
    index, by_file = _check_store(directory, problems)
    counts, case_ids = _check_suite(directory, index, by_file, problems)
    _check_sources(directory, case_ids, by_file, problems)
    _check_blind(directory, index, by_file, problems)
    counts = dict(counts, memories=len(by_file), clusters=len(index) if index is not None else 0)
    # An invalid cluster file is reported by both the store and the suite check: say it once.
    return list(dict.fromkeys(problems)), counts


def store_dirs(root=ROOT):
    """Every store folder under ``root`` (one holding a memory-router.toml), sorted."""
    return sorted(os.path.dirname(path) for path in glob.glob(os.path.join(root, "*", "memory-router.toml")))


TABLE_HEADER = ("| store | held out | memories | clusters | identifier | member | paraphrase | near-miss-people |\n"
                "|---|---|---:|---:|---:|---:|---:|---:|")


def table_rows(report):
    """The README's store table for ``{directory: {"counts": ...}}``, one row a store."""
    rows = [TABLE_HEADER]
    for directory, entry in report.items():
        counts = entry["counts"]
        name = os.path.basename(os.path.abspath(directory))
        held = "**yes**" if name in HELD_OUT_STORES else "no"
        cells = [name, held] + [str(counts[key]) for key in ("memories", "clusters") + KINDS]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directories", nargs="*", metavar="STORE_DIR",
                        help=f"store folders (default: every store under {ROOT})")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="machine-readable output")
    output.add_argument("--table", action="store_true", help="the counts as the README's Markdown table")
    args = parser.parse_args(argv)
    directories = args.directories or store_dirs()
    if not directories:
        print(f"{ROOT}: no store found (a store is a folder with a memory-router.toml)")
        return 1
    report = {}
    for directory in directories:
        problems, counts = check_store(directory)
        report[directory] = {"ok": not problems, "problems": problems, "counts": counts}
    failed = sum(len(entry["problems"]) for entry in report.values())
    if args.json:
        print(json.dumps({"ok": not failed, "stores": report}, indent=2))
    elif args.table:
        print(table_rows(report))
        for directory, entry in report.items():
            for problem in entry["problems"]:
                print(problem, file=sys.stderr)
    else:
        print(f"{'ok' if not failed else f'{failed} problems'}: {len(report)} stores")
        for directory, entry in report.items():
            counts = entry["counts"]
            kinds = ", ".join(f"{kind} {counts[kind]}" for kind in KINDS)
            name = os.path.basename(os.path.abspath(directory))
            note = "" if counts["paraphrase"] >= PARAPHRASE_AIM else f" (paraphrases below the aim of {PARAPHRASE_AIM})"
            print(f"{name}: {counts['memories']} memories, {counts['clusters']} clusters; {kinds}{note}")
            for problem in entry["problems"]:
                print(f"  {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
