"""What reverting each citation gate behaviour turns red.

For each behaviour the source document's reviews fixed (and a few more), a copy of ``router/``
with that one behaviour reverted is put first on ``PYTHONPATH`` and the gate's tests run against
it (the unit tests in-process, the hook and CLI tests through the installed console script, which
inherits ``PYTHONPATH``). Each revert must turn at least one test red; the script prints how many
and which, and exits 1 if any revert leaves the suite green.

    python benchmarks/gate_reverts.py [--only NAME]        # ~25 s per revert on 2 cores
    python benchmarks/gate_reverts.py --check-anchors      # every anchor still in the source

Complements benchmarks/mutation_gate.sh (mutmut's blind mutants of router/citation*.py) with
named, behaviour-level reverts across the hook, the CLI and the config defaults.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = ["tests/router/test_citations.py", "tests/router/test_citations_text.py", "tests/router/test_citations_ledger.py",
         "tests/router/test_citations_issue24.py", "tests/router/test_gate.py", "tests/harness/test_gate.py",
         "tests/router/test_config.py"]

_ID_RE = 'return re.compile(r"(?<![\\w-])(?P<u>_{0,2})(?P<id>(?:" + pattern + r"))(?P=u)(?![\\w-])" + _PROSE_AFTER, re.I)'
_OLD_LEAD = '_ENTRY_LEAD = r"[ \\t]{0,3}(?:#{1,6}[ \\t]+|(?:[-*+]|\\d{1,9}[.)])[ \\t]+)?(?:\\*\\*|`)?"\n_X = ('
_SERIALISED = 'return "\\n".join(_strings(value))'

# (name, file under router/, original text, reverted text)
REVERTS = [
    ("MultiEdit's tool_input.edits not read", "gate/citations.py",
     'if tool_input.get("edits") is not None:', "if False:"),
    ("Cursor's flat edits not read", "gate/citations.py", 'if payload.get("edits") is not None:', "if False:"),
    ("NotebookEdit new_source not read", "gate/citations.py",
     'TEXT_FIELDS = ("content", "new_string", "new_source")', 'TEXT_FIELDS = ("content", "new_string")'),
    ("non-string field dropped instead of read", "gate/citations.py", _SERIALISED, 'return ""'),
    ("first source wins instead of every source audited", "gate/citations.py",
     'return "\\n".join(body for _label, body in texts)', 'return texts[0][1] if texts else ""'),
    ("citation pattern case-sensitive", "gate/citation_text.py", _ID_RE, _ID_RE.replace(", re.I)", ")")),
    ("hyphen guard dropped (ids read inside hyphenated identifiers)", "gate/citation_text.py", _ID_RE,
     _ID_RE.replace("(?<![\\w-])", "(?<!\\w)").replace("(?![\\w-])", "(?!\\w)")),
    ("RETIRED and MOOT missing from the dead-status words", "config.py",
     '"citation_dead_words": ["REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT"],',
     '"citation_dead_words": ["REVOKED", "SUPERSEDED", "AMENDED"],'),
    ("bypass marker ignored", "gate/citations.py", "bypassed = BYPASS_MARKER in text", "bypassed = False"),
    ("merged ledgers joined without a separator", "gate/citation_ledger.py",
     'merged = "\\n".join(texts)', 'merged = "".join(texts)'),
    ("only the nearest directory's ledger read (no up-tree merge)", "gate/citation_ledger.py",
     "        if current == boundary or parent == current", "        if True or parent == current"),
    ("skip list not applied", "gate/citations.py", "    if not path:\n        return None\n    normalised",
     "    return None\n    normalised"),
    ("refusal does not warn against a lower id", "gate/citations.py",
     '"(merge or pull main into this checkout) and retry. Do not substitute a lower id that "',
     '"(merge or pull main into this checkout) and retry. Pick the nearest id that "'),
    ("unparseable ledger lines not reported", "gate/citation_ledger.py",
     "            problems.append((source, lineno, problem))", "            pass"),
    ("fenced code read as ledger entries", "gate/citation_ledger.py", "        if fenced:\n            fence =",
     "        if False:\n            fence ="),
    ("internal error passes silently", "gate/gate.py",
     '        return notice("memory-router gate: internal error, this write was NOT checked for citations "\n'
     '                      f"({message}); see $MEMORY_ROUTER_LOG")',
     "        return None"),
    ("memory citations not checked", "gate/citations.py", '    memories = cited["memories"]\n', "    memories = {}\n"),
    # issue 24
    ("issue 24: any digit width blocks (the ledger's id shape ignored)", "gate/citations.py",
     "    if not fits_shape(entry_id, shapes):", "    if False:"),
    ("issue 24: lower-case ids outside prose read as citations", "gate/citation_text.py",
     "            if not in_code and match.group(\"post\") is not None and _behind(_PROSE_BEHIND_RE, backwards, "
     "match.start()):", "            if True:"),
    ("issue 24: a name before an id ignored", "gate/citation_text.py",
     "        elif _is_name(name):", "        elif False:"),
    ("issue 24: ids in URLs and paths read as citations", "gate/citation_text.py",
     "        if inside(urls, start):\n            continue", "        if False:\n            continue"),
    ("issue 24: memory phrases and code read as certain citations", "gate/citation_text.py",
     '        doubt = _slug_doubt(raw, bool(opened), match.group("code"))',
     '        doubt = None if "_" in raw or "-" in raw else ""'),
    ("issue 24: only the old ledger layouts read", "gate/citation_ledger.py", "_ENTRY_LEAD = (", _OLD_LEAD),
    ("issue 24: a ledger without entries blocks", "gate/citations.py",
     '        return "no entry could be read from the ledger"', "        return None"),
    ("issue 24: an id only in a ledger's text blocks", "gate/citations.py",
     '        mention = ledger["mentions"].get(entry_id)', "        mention = None"),
    ("issue 24: UTF-16 and UTF-32 byte-order marks not read", "gate/citation_ledger.py",
     "    for mark, codec in _BOMS:", "    for mark, codec in ():"),
    ("issue 24: a UTF-8 byte-order mark kept", "gate/citation_ledger.py",
     '_NO_BOM_CODEC = "utf-8-sig"', '_NO_BOM_CODEC = "utf-8"'),
    ("issue 24: look-alike hyphens and invisible characters not folded", "gate/citation_text.py",
     "    return text.translate(_FOLD)", "    return text"),
    ("issue 24: underscore emphasis hides an id", "gate/citation_text.py", _ID_RE, _ID_RE.replace("_{0,2}", "")),
    ("issue 24: emphasis around a slug hides it", "gate/citation_text.py", "(?P<open>`|\\*{1,2}|_{1,2})?", "(?P<open>`)?"),
    ("issue 24: non-string fields serialised as JSON text", "gate/citations.py", _SERIALISED,
     "return json.dumps(value, sort_keys=True, default=str)"),
    ("issue 24: unreadable write payloads pass silently", "gate/gate.py",
     "    why = citations.unreadable(payload, texts)", "    why = None"),
    ("issue 24: blocks not capped", "gate/citations.py", "MAX_BLOCKS = 5", "MAX_BLOCKS = 10 ** 9"),
    ("issue 24: warnings not capped", "gate/citations.py", "MAX_WARNINGS = 12", "MAX_WARNINGS = 10 ** 9"),
    ("issue 24: every ledger problem listed", "gate/citations.py", "MAX_PROBLEMS_PER_LEDGER = 3",
     "MAX_PROBLEMS_PER_LEDGER = 10 ** 9"),
    ("issue 24: the ledger walk goes up to the root", "gate/gate.py",
     "        boundary = citations.ledger_boundary(start, dirs)", '        boundary = "/"'),
]


def check_anchors():
    """Each revert's anchor, found exactly once (``None``) or the reverts whose anchor is not."""
    missing = []
    for name, filename, original, _reverted in REVERTS:
        with open(os.path.join(REPO, "router", filename), encoding="utf-8") as handle:
            if handle.read().count(original) != 1:
                missing.append(f"{name} (router/{filename})")
    return missing


def run_revert(name, filename, original, reverted):
    with tempfile.TemporaryDirectory(prefix="gate-revert-") as tmp:
        shutil.copytree(os.path.join(REPO, "router"), os.path.join(tmp, "router"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        path = os.path.join(tmp, "router", filename)
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        if source.count(original) != 1:
            return None, f"anchor not found exactly once in router/{filename}"
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source.replace(original, reverted))
        env = dict(os.environ, PYTHONPATH=tmp + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   MEMORY_ROUTER_NO_CACHE="1", PYTHONDONTWRITEBYTECODE="1")
        # -P: the repository (the current directory) must not shadow the reverted copy on sys.path.
        proc = subprocess.run([sys.executable, "-P", "-m", "pytest", "-q", "-rf", *TESTS],
                              cwd=REPO, env=env, capture_output=True, text=True)
    failed = sorted({re.sub(r"\[.*$", "", line.split(" ")[1]).split("::")[-1]
                     for line in proc.stdout.splitlines() if line.startswith("FAILED ")})
    count = sum(1 for line in proc.stdout.splitlines() if line.startswith("FAILED "))
    return count, failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="NAME", help="run only reverts whose name contains NAME")
    parser.add_argument("--check-anchors", action="store_true",
                        help="only check that every revert's anchor is in the source once (seconds, no tests)")
    args = parser.parse_args(argv)
    if args.check_anchors:
        missing = check_anchors()
        print("\n".join(f"anchor not found once: {name}" for name in missing) or f"all {len(REVERTS)} anchors found")
        return 1 if missing else 0
    green = []
    for name, filename, original, reverted in REVERTS:
        if args.only and args.only not in name:
            continue
        count, failed = run_revert(name, filename, original, reverted)
        if count is None:
            print(f"{name}: ERROR {failed}")
            green.append(name)
            continue
        print(f"{name}: {count} failing test case(s): {', '.join(failed) or 'NONE - the suite stays green'}",
              flush=True)
        if not count:
            green.append(name)
    return 1 if green else 0


if __name__ == "__main__":
    sys.exit(main())
