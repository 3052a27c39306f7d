"""Mutation testing of the scorer, the tokeniser, the canary expectation checks and the citation
gate (docs/mutation.md).

Runs mutmut 3 (the ``mutation`` extra: ``pip install -e '.[test,mutation]'``) with the
configuration in pyproject.toml (``[tool.mutmut]``: which files are mutated, which tests run),
then reads ``mutmut results`` and prints, per target and per module, how many mutants the tests
killed. A mutant that times out counts as killed (the tests noticed); one no selected test
reaches ("no tests"), one that survived and a "suspicious" one count against the rate.

Every mutant not killed is looked up (by its diff, via ``mutmut show``) in ``EQUIVALENT``, the
mutants argued in docs/mutation.md not to change behaviour; one that is not there is printed as
UNEXPLAINED with its diff, so "every survivor is equivalent" is checked, not claimed.

    python benchmarks/mutation.py [--target NAME]... [--max-children N] [--keep] [--report-only]
                                  [--goal PCT] [--json]

By default the previous run's ``mutants/`` directory is removed first, so the figures are those
of the current source and tests (mutmut does not re-test a survivor after a test changes);
``--keep`` resumes it instead. All targets take 8-12 minutes on 2 busy cores. Exit 1 when a
target kills fewer than ``--goal`` percent of its mutants or a survivor is unexplained.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
GOAL_PERCENT = 90.0

# target name -> the modules mutated for it (keep in step with [tool.mutmut] only_mutate)
TARGETS = {
    "scorer": ("router.routing.score",),
    "tokeniser": ("router.tokens",),
    "canary checks": ("canaries.runner", "canaries.cases"),
    "citation gate": ("router.gate.citations", "router.gate.citation_text", "router.gate.citation_ledger"),
    # the default route (issue 38): the weighted provider, its utterance scoring and the veto
    "weighted route": ("router.routing.weighted", "router.routing.weightedscore", "router.routing.wordmatch"),
    "utterance route": ("router.routing.utterscore",),
    "veto": ("router.routing.veto", "router.routing.exemplars"),
    # the hook's compiled table: when it is built, where it is kept and whether it is current;
    # and how it is read back (apart: one target of all three runs too long)
    "compiled table": ("router.hooks.compiled", "router.cache"),
    "table format": ("router.cacheformat",),
}
# short names accepted by --target
TARGET_ALIASES = {"gate": "citation gate", "weighted": "weighted route", "utterances": "utterance route",
                  "compiled": "compiled table", "format": "table format"}

DETECTED = frozenset({"killed", "timeout", "caught by type check"})

_SORTED_LINES = "candidates = sorted(sorted(candidates, key=relevance)[:line_cap], key=lambda row: (row[0], row[2]))"
_FIRST_LINE = 'first = text.split("\\n", 1)[0].strip()'
_NAMES = 'names = first[len(prefix):].split(" (", 1)[0]'
_OPEN_STOPWORDS = 'with open(path, encoding="utf-8") as handle:'
_STOPWORD_LINE = 'for word in (line.split("#", 1)[0].strip() for line in handle)'
_PROBLEMS = 'for problem in getattr(self, "problems", ()):'
_ONLY_FIRST = "only element [0] is used: the first piece of a split is the same for any maxsplit"
_ASCII_FILE = ("the shipped stopwords.txt is ASCII, which every locale encoding decodes alike "
               "(docs/mutation.md: equivalent for the shipped file)")
_DEAD_DEFAULT = "dead default: __init__ sets problems before anything calls format()"

_NEW_RECORD = 'record = new_record(case.id, ["canary", 0, 0])'
_FORGET = 'record = held or new_record(case.id, ["canary", 0, 0])'
_AFTER_COMPACTION = ('text, held = (after_compaction(record, settings["max_context_chars"], float(number))')
_SESSION_STEP = 'plan, updated = session_step(record, decision, step.prompt, settings, now=float(number))'
_UNREAD_IDENTITY = ("the simulated session record is never saved nor checked: plan_injection and "
                    "after_compaction never read its session id or store (docs/mutation.md)")
_UNREAD_TIME = "the simulated record's time stamp ('updated') is never read by plan_injection or after_compaction"


def _record_variants(line):
    """The mutants of a ``new_record(case.id, ["canary", 0, 0])`` call: its id and store, which
    the simulation never reads."""
    return [line.replace("case.id", "None"), line.replace('"canary"', '"XXcanaryXX"'),
            line.replace('"canary"', '"CANARY"'), line.replace('"canary", 0, 0', '"canary", 1, 0'),
            line.replace('"canary", 0, 0', '"canary", 0, 1')]


_SIMILARITIES = 'def similarities(terms, postings, measure="cosine"):'
_COSINE_DEFAULT = ("every measure but 'coverage' and 'balanced' is cosine: a default that is any other "
                   "string is the same default")
_OWN_EXEMPLAR = "exemplars.append((member_code(position, member_index, 0), exemplar_terms(own, memo)))"
_UTTERANCE_EXEMPLAR = ("exemplars.append((member_code(position, member_index, number), "
                       "exemplar_terms(text, memo)))")
_NEAR_MISS_EXEMPLAR = "exemplars.append((near_miss_code(position, number), exemplar_terms(text, memo)))"
_GENERIC_EXEMPLAR = "exemplars.append((generic_code(number), exemplar_terms(text, memo)))"
_MEMO = ("the memo only remembers word_stems, a pure function of the word: without it (None: a fresh "
         "one per call) the terms are the same, computed again")


def _without_memo(line):
    """The two mutants of passing ``memo`` on: ``None``, and the argument dropped."""
    return [line.replace("memo)))", "None)))"), line.replace(", memo)))", ", )))")]


_TAUGHT = "lambda positions: learned_hits_by_line(tokenize(text), table, positions), settings)"
_TAUGHT_ALL = ("the positions only spare work: the hits are looked up by (position, index) of the lines "
               "sent, which are all in the chosen clusters")
_PATTERN_GET = "found = _COMPILED.get(source)"
_RECOMPILED = "a cache miss compiles the pattern again, and re.compile keeps its own cache: only time differs"
_STOPSTEMS_OPEN = 'with open_regular(path, encoding="utf-8") as handle:'
_ASCII_STOPSTEMS = ("the shipped stopstems.txt is ASCII, which every locale encoding decodes alike "
                    "(as router/tokens.py's stopword file)")
_STEM_FORM = 'key = token if "_" in token else stem(token)'
_WORD_STEM = 'key = stem(token) if "_" not in token else token   # as stem_forms keys a prompt token'
_IDENTIFIER_STEM = "stem() returns a word with a non-letter unchanged, so an identifier (it has a _) keeps its form"
_CONFIDENCE = ('"confidence": round(top / (top + floor), 4) if top > 0 and floor > 0 else '
               '(1.0 if top > 0 else 0.0),')
_NON_NEGATIVE = ("scores are sums of positive idf weights and floors are at least 0 (config ranges): "
                 "where the branches differ, top / (top + floor) gives the same 0.0 or 1.0")
_LINE_SORT = "candidates = sorted(sorted(candidates, key=relevance)[:line_cap], key=lambda row: (row[0], row[2]))"
_WHOLE_ROW = "a rank names one position and (rank, index) is unique: whole-row order is (rank, index) order"


_EXPLAINED = 'explained.update(parts["line_words"].get(best[1], ()))'
_EVERY_LINE_HAS_WORDS = "a line with a weight always has its words (both are added together): the default is never read"
_FIRST_OF_RANK = "first = next((row for row in ranked if row[1] == rank), None)"
_OTHER_RANK = ("at most two clusters are chosen and utterance_line_share is at most 1: taking each rank's best from "
               "the other rank keeps the same rows, and alone the best row qualifies by share anyway")
_UTTERANCES = "router.routing.utterscore"
_FILTERS = 'filters = (table.get("fuzzy_filter"), table.get("utterance_fuzzy_filter"))'
_VIEW_FILTER = 'view["fuzzy_filter"] = filters if None not in filters else None   # a key in either may be asked for'
_NO_FILTER = ("without the key filters the repair asks the postings for every variant: the same answers, more "
              "reads (a filter only skips keys the postings do not hold)")


_PROBE_KEY = 'data = key.encode("utf-8", "surrogateescape")'
_PROBE_STEP = "first, step = zlib.crc32(data), zlib.adler32(data) | 1"
_PROBES = "return [(first + i * step) % size for i in range(FILTER_PROBES)]"
_SAME_PROBES = ("the filter is made and read with the same probes: seven distinct bits of a 64 x n bit filter either "
                "way (a step of 2 mod 4 has no factor 4, backwards steps the same bits mirrored), so every key "
                "it was made of still answers True")


_COMPILED_MODULE = "router.hooks.compiled"
_KIND_IN_ENTRY = ("the entry's name holds the kind (entry_path), and a key is only ever compared with the entry "
                  "of its own path and kind: the kind in the key adds nothing")
_LAST_INDEX = ("SEPARATE_KINDS holds one kind, so its index is the last blob: the offset after it is read by "
               "nothing")
_END = "end = TABLE_HEAD.size + header_len + (spans[-1][0] + spans[-1][1] if spans else 0)"
_TMP_OPEN = 'fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)'
_NO_O_BINARY = ("os.O_BINARY exists only on Windows: elsewhere the flag is 0 whatever the lookup (and 1 is "
                "O_WRONLY, already set); measured on Linux")
_HOOK_TABLE = "return cache.load_routing_table(path, build, companions_of(learned_file), fallback=on_miss)"
_STARTED = "failed = None if started else rebuild_failure(path)"
_MARKER_TEXT = 'text = read_regular_bytes(marker)[:2000].decode("utf-8", "replace")'
_NOTE = 'os.write(fd, (FAILED + problem.replace("\\n", " ") + "\\n").encode("utf-8", "replace"))'
_ALONE_BUILD = "return build_table_of(os.path.abspath(path), learned_file, beside=False, log=log)"
_ALONE_LOAD = "companions_of(learned_file), beside=False)"
_ALONE_LAMBDA = ("return cache.load_routing_table(path, lambda p: build_table_of(p, learned_file, beside=False, "
                 "log=log),")
_ON_MISS_ALONE = "return build_table_of(p, learned_file, beside=False, log=log)"
_BESIDE_FALSY = "beside is only tested for truth (build_table, _table_kind, _companions): None is False there"


# (module, removed line, added line) -> why the mutant cannot change behaviour (docs/mutation.md)
EQUIVALENT = {
    (_COMPILED_MODULE, _HOOK_TABLE, _HOOK_TABLE.replace("(path, build,", "(path, None,")):
        "on_miss never returns None, so load_routing_table never calls build",
    (_COMPILED_MODULE, _STARTED, _STARTED.replace("if started else", "if (started) and False else")):
        "a rebuild just started holds an empty marker: rebuild_failure is None, as the branch gives",
    (_COMPILED_MODULE, _MARKER_TEXT, _MARKER_TEXT.replace('"utf-8"', '"UTF-8"')): "the same codec",
    (_COMPILED_MODULE, _NOTE, _NOTE.replace('"utf-8"', '"UTF-8"')): "the same codec",
    (_COMPILED_MODULE, "problem = None", 'problem = ""'): "assigned on every path before it is read",
    ("router.cache", "key, st = _stat_key(path, kind)", "key, st = _stat_key(path, None)"): _KIND_IN_ENTRY,
    ("router.cache", "key, st = _stat_key(path, kind, _companions(path, companions, beside))",
     "key, st = _stat_key(path, None, _companions(path, companions, beside))"): _KIND_IN_ENTRY,
    ("router.cache", "def _table_kind(companions, beside=True):", "def _table_kind(companions, beside=False):"):
        "every caller passes beside",
    ("router.cache", "def _companions(path, companions, beside=True):", "def _companions(path, companions, beside=False):"):
        "every caller passes beside",
    (_COMPILED_MODULE, "terms = None", 'terms = ""'): "extend_table reads learned_terms or {}: '' is no terms, as None is",
    **{("router.cacheformat", _END, _END.replace(old, new)): "a table always has a postings shard and a cluster shard: spans is never empty"
       for old, new in (("if spans else 0)", "if (spans) or True else 0)"), ("if spans else 0)", "if spans else 1)"))},
    **{("router.cache", _TMP_OPEN, _TMP_OPEN.replace('getattr(os, "O_BINARY", 0)', new)): _NO_O_BINARY
       for new in ('getattr(None, "O_BINARY", 0)', 'getattr(os, "XXO_BINARYXX", 0)', 'getattr(os, "o_binary", 0)',
                   'getattr(os, "O_BINARY", 1)')},
    ("router.cache", 'digest = zlib.crc32(path.encode("utf-8", "surrogateescape"))',
     'digest = zlib.crc32(path.encode("UTF-8", "surrogateescape"))'): "the same codec",
    ("router.cacheformat", 'return zlib.crc32(token.encode("utf-8", "surrogateescape")) % shards',
     'return zlib.crc32(token.encode("UTF-8", "surrogateescape")) % shards'): "the same codec",
    ("router.cacheformat", "offset += len(index_blob)", "offset = len(index_blob)"): _LAST_INDEX,
    ("router.cacheformat", "offset += len(index_blob)", "offset -= len(index_blob)"): _LAST_INDEX,
    ("router.cacheformat", "if len(data) < _ENTRY_HEAD.size:", "if len(data) <= _ENTRY_HEAD.size:"):
        "a 12-byte entry has an empty body, which marshal refuses (EOFError): every caller takes either as a miss",
    **{(_COMPILED_MODULE, line, line.replace("beside=False", "beside=None")): _BESIDE_FALSY
       for line in (_ALONE_BUILD, _ALONE_LOAD, _ALONE_LAMBDA, _ON_MISS_ALONE)},
    ("router.routing.wordmatch", _PROBE_KEY, _PROBE_KEY.replace('"utf-8"', '"UTF-8"')): "the same codec",
    ("router.routing.wordmatch", _PROBE_STEP, _PROBE_STEP.replace("| 1", "| 2")): _SAME_PROBES,
    ("router.routing.wordmatch", _PROBES, _PROBES.replace("first + i", "first - i")): _SAME_PROBES,
    (_UTTERANCES, _EXPLAINED, _EXPLAINED.replace("best[1], ())", "best[1], None)")): _EVERY_LINE_HAS_WORDS,
    (_UTTERANCES, _EXPLAINED, _EXPLAINED.replace("best[1], ())", "best[1], )")): _EVERY_LINE_HAS_WORDS,
    (_UTTERANCES, "top = max((row[0] for row in candidates), default=0.0)",
     "top = max((row[0] for row in candidates), default=1.0)"):
        "no candidates means no member: either way nothing is selected ([], 0)",
    (_UTTERANCES, _FIRST_OF_RANK, _FIRST_OF_RANK.replace("row[1] == rank", "row[1] != rank")): _OTHER_RANK,
    (_UTTERANCES, "kept_plain = False", "kept_plain = None"): "only ever tested for truth",
    **{(_UTTERANCES, _FILTERS, _FILTERS.replace(old, new)): _NO_FILTER
       for old, new in (('get("fuzzy_filter")', "get(None)"), ('get("fuzzy_filter")', 'get("FUZZY_FILTER")'),
                        ('get("fuzzy_filter")', 'get("XXfuzzy_filterXX")'),
                        ('get("utterance_fuzzy_filter")', "get(None)"),
                        ('get("utterance_fuzzy_filter")', 'get("XXutterance_fuzzy_filterXX")'),
                        ('get("utterance_fuzzy_filter")', 'get("UTTERANCE_FUZZY_FILTER")'))},
    (_UTTERANCES, _VIEW_FILTER, _VIEW_FILTER.replace("filters if None not in filters else None", "None")): _NO_FILTER,
    (_UTTERANCES, _VIEW_FILTER, _VIEW_FILTER.replace("if None not in filters", "if (None not in filters) and False")):
        _NO_FILTER,
    (_UTTERANCES, _TAUGHT.replace("table, positions)", "view, positions)"),
     _TAUGHT.replace("table, positions)", "view, None)")): _TAUGHT_ALL,
    (_UTTERANCES, _TAUGHT.replace("table, positions)", "view, positions)"),
     _TAUGHT.replace("table, positions)", "view, )")): _TAUGHT_ALL,
    (_UTTERANCES, "near_miss = False", "near_miss = None"): "only ever tested for truth",
    ("router.routing.weighted", _TAUGHT, _TAUGHT.replace("table, positions)", "table, None)")): _TAUGHT_ALL,
    ("router.routing.weighted", _TAUGHT, _TAUGHT.replace("table, positions)", "table, )")): _TAUGHT_ALL,
    ("router.routing.weightedscore", _PATTERN_GET, "found = None"): _RECOMPILED,
    ("router.routing.weightedscore", _PATTERN_GET, "found = _COMPILED.get(None)"): _RECOMPILED,
    ("router.routing.weightedscore", _STOPSTEMS_OPEN, _STOPSTEMS_OPEN.replace('"utf-8"', "None")): _ASCII_STOPSTEMS,
    ("router.routing.weightedscore", _STOPSTEMS_OPEN, _STOPSTEMS_OPEN.replace(', encoding="utf-8"', ", ")):
        _ASCII_STOPSTEMS,
    ("router.routing.weightedscore", _STOPSTEMS_OPEN, _STOPSTEMS_OPEN.replace('"utf-8"', '"UTF-8"')): "the same codec",
    ("router.routing.weightedscore", _STEM_FORM, _STEM_FORM.replace('if "_" in token', 'if ("_" in token) and False')):
        _IDENTIFIER_STEM,
    ("router.routing.weightedscore", _STEM_FORM, _STEM_FORM.replace('"_"', '"XX_XX"')): _IDENTIFIER_STEM,
    ("router.routing.weightedscore", _WORD_STEM, _WORD_STEM.replace('if "_" not in token', 'if ("_" not in token) or True')):
        _IDENTIFIER_STEM,
    ("router.routing.weightedscore", _WORD_STEM, _WORD_STEM.replace('"_"', '"XX_XX"')): _IDENTIFIER_STEM,
    ("router.routing.wordmatch", "return 1.0 if zipf <= knee else 1.0 / (1.0 + zipf - knee)",
     "return 1.0 if zipf < knee else 1.0 / (1.0 + zipf - knee)"): "at zipf == knee the other branch is 1 / (1 + 0) = 1.0",
    ("router.routing.wordmatch", "if abs(la - lb) > 1:", "if abs(la - lb) > 2:"):
        "two words two letters apart fall through to the one-deletion test, which cannot match them either",
    ("router.routing.wordmatch", "if la > lb:", "if la >= lb:"): "reached only when la != lb",
    ("router.routing.weightedscore", "return form.group(0).split()[0]", "return form.group(1).split()[0]"):
        "the pattern is \\b(...)\\b: group 1 is the whole match, the word boundaries being empty",
    ("router.routing.weightedscore",
     "if rare is None or weight > rare[1] or (weight == rare[1] and word < rare[0]):",
     "if rare is None or weight > rare[1] or (weight == rare[1] and word <= rare[0]):"):
        "each word of found is seen once, so it is never compared with itself",
    ("router.routing.weightedscore",
     'return min(best_member.get(position, 0.0), parts["member_only"].get(position, 0.0))',
     'return min(best_member.get(position, 1.0), parts["member_only"].get(position, 0.0))'):
        "a member-only word adds its weight to its lines too, so a position with no best line has member-only 0",
    ("router.routing.weightedscore", "if total > line_cap:", "if total >= line_cap:"):
        "at total == line_cap the branch keeps every line and restores their (rank, index) order",
    ("router.routing.weightedscore", _LINE_SORT, _LINE_SORT.replace("key=lambda row: (row[0], row[2])", "key=None")):
        _WHOLE_ROW,
    ("router.routing.weightedscore", _LINE_SORT, _LINE_SORT.replace("key=lambda row: (row[0], row[2])", "")): _WHOLE_ROW,
    ("router.routing.weightedscore", _CONFIDENCE, _CONFIDENCE.replace("if top > 0 and floor > 0", "if top > 0 or floor > 0")):
        _NON_NEGATIVE,
    ("router.routing.weightedscore", _CONFIDENCE, _CONFIDENCE.replace("if top > 0 and floor > 0", "if top >= 0 and floor > 0")):
        _NON_NEGATIVE,
    ("router.routing.weightedscore", _CONFIDENCE, _CONFIDENCE.replace("if top > 0 and floor > 0", "if top > 0 and floor >= 0")):
        _NON_NEGATIVE,
    ("router.routing.veto", _SIMILARITIES, _SIMILARITIES.replace('"cosine"', '"XXcosineXX"')): _COSINE_DEFAULT,
    ("router.routing.veto", _SIMILARITIES, _SIMILARITIES.replace('"cosine"', '"COSINE"')): _COSINE_DEFAULT,
    ("router.routing.exemplars", "memo = {}", "memo = None"): _MEMO,
    **{("router.routing.exemplars", line, variant): _MEMO
       for line in (_OWN_EXEMPLAR, _UTTERANCE_EXEMPLAR, _NEAR_MISS_EXEMPLAR, _GENERIC_EXEMPLAR)
       for variant in _without_memo(line)},
    ("router.routing.exemplars", "if norm <= 0:", "if norm < 0:"):
        "every idf is > 0, so the norm is 0 only when no term is kept, and then the loop it skips adds nothing",
    **{("canaries.runner", line, variant): _UNREAD_IDENTITY
       for line in (_NEW_RECORD, _FORGET) for variant in _record_variants(line)},
    ("canaries.runner", _AFTER_COMPACTION, _AFTER_COMPACTION.replace("float(number))", "None)")): _UNREAD_TIME,
    ("canaries.runner", _SESSION_STEP, _SESSION_STEP.replace("now=float(number)", "now=None")): _UNREAD_TIME,
    ("router.routing.score", "if total > line_cap:", "if total >= line_cap:"):
        "at total == line_cap the branch keeps every line and restores their (rank, index) order",
    ("router.routing.score", _SORTED_LINES, _SORTED_LINES.replace("key=lambda row: (row[0], row[2])", "key=None")):
        "a rank names one position and (rank, index) is unique: whole-row order is (rank, index) order",
    ("router.routing.score", _SORTED_LINES, _SORTED_LINES.replace("key=lambda row: (row[0], row[2])", "")):
        "a rank names one position and (rank, index) is unique: whole-row order is (rank, index) order",
    ("router.routing.score", _FIRST_LINE, _FIRST_LINE.replace(", 1)", ", )")): _ONLY_FIRST,
    ("router.routing.score", _FIRST_LINE, _FIRST_LINE.replace(", 1)", ", 2)")): _ONLY_FIRST,
    ("router.routing.score", _NAMES, _NAMES.replace(", 1)", ", )")): _ONLY_FIRST,
    ("router.routing.score", _NAMES, _NAMES.replace(", 1)", ", 2)")): _ONLY_FIRST,
    ("router.tokens", _OPEN_STOPWORDS, _OPEN_STOPWORDS.replace('"utf-8"', '"UTF-8"')): "the same codec",
    ("router.tokens", _OPEN_STOPWORDS, _OPEN_STOPWORDS.replace('"utf-8"', "None")): _ASCII_FILE,
    ("router.tokens", _OPEN_STOPWORDS, _OPEN_STOPWORDS.replace('encoding="utf-8"', "")): _ASCII_FILE,
    ("router.tokens", _STOPWORD_LINE, _STOPWORD_LINE.replace(", 1)", ", )")): _ONLY_FIRST,
    ("router.tokens", _STOPWORD_LINE, _STOPWORD_LINE.replace(", 1)", ", 2)")): _ONLY_FIRST,
    ("router.tokens", 'core = word.strip("_")', 'core = word.strip("XX_XX")'):
        "strip takes a set of characters; a lowercased word holds no uppercase X",
    ("router.tokens", 'return tokenize(slug.replace("_", " ")) | {slug.lower()}',
     'return tokenize(slug.replace("XX_XX", " ")) | {slug.lower()}'):
        "for a slug of [a-z0-9_] (all the cluster parser accepts) an identifier's parts are its words",
    ("canaries.cases", _PROBLEMS, _PROBLEMS.replace("()", "None")): _DEAD_DEFAULT,
    ("canaries.cases", _PROBLEMS, _PROBLEMS.replace(', ())', ', )')): _DEAD_DEFAULT,
}

# "    router.routing.score.x_route_prompt__mutmut_3: survived"; methods read "module.xǁClassǁname__mutmut_N"
_RESULT_LINE = re.compile(r"^\s*(?P<mutant>\S+__mutmut_\d+): (?P<status>.+?)\s*$")
_MODULE_OF = re.compile(r"^(?P<module>.+?)\.x[_\u01c1]")


def parse_results(text):
    """(mutant name, module, status) for each line of ``mutmut results --all true``."""
    rows = []
    for line in text.splitlines():
        match = _RESULT_LINE.match(line)
        if not match:
            continue
        mutant = match["mutant"]
        module = _MODULE_OF.match(mutant)
        if module is None:
            raise ValueError(f"cannot tell the module of mutant {mutant!r}: has mutmut's naming changed?")
        rows.append((mutant, module["module"], match["status"]))
    return rows


def changed_lines(diff):
    """The first removed and the first added line of a ``mutmut show`` diff, stripped."""
    removed = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return (removed[0] if removed else "", added[0] if added else "")


def explain(module, diff, equivalent=EQUIVALENT):
    """Why the mutant with this diff is equivalent, or ``None`` if it is not a known one."""
    return equivalent.get((module, *changed_lines(diff)))


def _tally(rows, reasons):
    detected = sum(1 for _m, _mod, status in rows if status in DETECTED)
    survivors = [mutant for mutant, _mod, status in rows if status not in DETECTED]
    equivalent = [mutant for mutant in survivors if reasons.get(mutant)]
    killable = len(rows) - len(equivalent)
    return {
        "mutants": len(rows),
        "killed": detected,
        "survived": survivors,
        "equivalent": equivalent,
        "unexplained": [mutant for mutant in survivors if not reasons.get(mutant)],
        "kill_rate": round(100.0 * detected / len(rows), 1) if rows else None,
        "kill_rate_of_killable": round(100.0 * detected / killable, 1) if killable else None,
    }


def summarise(rows, reasons=None, targets=TARGETS, goal=GOAL_PERCENT):
    """Per-target and per-module tallies over ``targets``. ``reasons`` maps a surviving mutant to
    why it is equivalent (``None`` when it is not known to be). ``ok``: every target reaches
    ``goal`` and no survivor is unexplained."""
    reasons = reasons or {}
    every_module = {module for modules in TARGETS.values() for module in modules}
    stray = sorted({module for _m, module, _s in rows} - every_module)
    if stray:
        raise ValueError(f"mutants of modules outside the targets: {', '.join(stray)} "
                         "(keep TARGETS in step with [tool.mutmut] only_mutate)")
    out = {"goal": goal, "targets": {}, "modules": {}}
    for target, modules in targets.items():
        target_rows = [row for row in rows if row[1] in modules]
        if not target_rows:
            raise ValueError(f"no mutants for target {target!r} ({', '.join(modules)}): was it mutated?")
        out["targets"][target] = _tally(target_rows, reasons)
        for module in modules:
            out["modules"][module] = _tally([row for row in target_rows if row[1] == module], reasons)
    out["reasons"] = {mutant: reason for mutant, reason in reasons.items() if reason}
    out["ok"] = all(t["kill_rate"] >= goal and not t["unexplained"] for t in out["targets"].values())
    return out


def _mutmut(*args):
    exe = pathlib.Path(sys.executable).with_name("mutmut")
    if not exe.exists():
        sys.exit("mutmut is not installed in this environment: pip install -e '.[test,mutation]'")
    return subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True)


def run_mutmut(max_children, keep, targets):
    if not keep:
        shutil.rmtree(REPO / "mutants", ignore_errors=True)
    patterns = [] if targets == TARGETS else [f"{module}.*" for modules in targets.values() for module in modules]
    done = _mutmut("run", "--max-children", str(max_children), *patterns)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        sys.exit(f"mutmut run failed (exit {done.returncode})")


def _percent(value):
    return "-" if value is None else f"{value:g}%"


def print_summary(summary, targets, diffs):
    print(f"{'target / module':<28} {'mutants':>8} {'killed':>7} {'survived':>9} {'equivalent':>10} "
          f"{'kill rate':>9} {'of killable':>11}")

    def row(name, t):
        print(f"{name:<28} {t['mutants']:>8} {t['killed']:>7} {len(t['survived']):>9} {len(t['equivalent']):>10} "
              f"{_percent(t['kill_rate']):>9} {_percent(t['kill_rate_of_killable']):>11}")

    for target, modules in targets.items():
        row(target, summary["targets"][target])
        for module in modules:
            row("  " + module, summary["modules"][module])
    print()
    for target in targets:
        for mutant in summary["targets"][target]["survived"]:
            reason = summary["reasons"].get(mutant)
            print(f"{mutant}: {'equivalent: ' + reason if reason else 'UNEXPLAINED'}")
            if not reason:
                print("".join(f"    {line}\n" for line in diffs.get(mutant, "").splitlines()
                              if line[:1] in "-+" and line[:3] not in ("---", "+++")), end="")
    ok = "every target reaches" if summary["ok"] else "a target misses"
    print(f"\n{ok} the goal: at least {summary['goal']:g}% killed and every survivor a known equivalent")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--target", action="append", choices=list(TARGETS) + list(TARGET_ALIASES),
                        help="test only this target's mutants (repeatable; default: every target; "
                             + ", ".join(f"{short} = {name!r}" for short, name in TARGET_ALIASES.items()) + ")")
    parser.add_argument("--max-children", type=int, default=min(2, os.cpu_count() or 1),
                        help="mutants tested in parallel")
    parser.add_argument("--keep", action="store_true", help="resume the previous run's mutants/ instead of a fresh run")
    parser.add_argument("--report-only", action="store_true", help="only summarise the last run's results")
    parser.add_argument("--goal", type=float, default=GOAL_PERCENT, help="percent of mutants each target must kill")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    chosen_names = [TARGET_ALIASES.get(name, name) for name in args.target or ()]
    targets = {name: TARGETS[name] for name in chosen_names} if chosen_names else TARGETS
    if not args.report_only:
        run_mutmut(args.max_children, args.keep, targets)
    results = _mutmut("results", "--all", "true")
    if results.returncode != 0:
        sys.exit(f"mutmut results failed (exit {results.returncode}): {results.stderr.strip()[-2000:]}")
    chosen = {module for modules in targets.values() for module in modules}
    rows = [row for row in parse_results(results.stdout) if row[1] in chosen or row[1] not in
            {module for modules in TARGETS.values() for module in modules}]
    diffs = {mutant: _mutmut("show", mutant).stdout for mutant, _module, status in rows if status not in DETECTED}
    reasons = {mutant: explain(module, diffs[mutant]) for mutant, module, status in rows if mutant in diffs}
    summary = summarise(rows, reasons, targets=targets, goal=args.goal)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary, targets, diffs)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
