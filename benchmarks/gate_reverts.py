"""What reverting each citation gate behaviour turns red.

For each behaviour the source document's reviews fixed (and a few more), a copy of ``router/``
with that one behaviour reverted is put first on ``PYTHONPATH`` and the gate's tests run against
it (the unit tests in-process, the hook and CLI tests through the installed console script, which
inherits ``PYTHONPATH``). Each revert must turn at least one test red; the script prints how many
and which, and exits 1 if any revert leaves the suite green.

    python benchmarks/gate_reverts.py [--only NAME]        # ~25 s per revert on 2 cores

Complements benchmarks/mutation_gate.sh (mutmut's blind mutants of router/citations.py) with
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
TESTS = ["tests/router/test_citations.py", "tests/router/test_gate.py", "tests/harness/test_gate_cli.py",
         "tests/router/test_config.py"]

# (name, file under router/, original text, reverted text)
REVERTS = [
    ("MultiEdit's tool_input.edits not read", "citations.py",
     'if tool_input.get("edits") is not None:', "if False:"),
    ("Cursor's flat edits not read", "citations.py", 'if payload.get("edits") is not None:', "if False:"),
    ("NotebookEdit new_source not read", "citations.py",
     'TEXT_FIELDS = ("content", "new_string", "new_source")', 'TEXT_FIELDS = ("content", "new_string")'),
    ("non-string field dropped instead of serialised", "citations.py",
     "return json.dumps(value, sort_keys=True, default=str)", 'return ""'),
    ("first source wins instead of every source audited", "citations.py",
     'text = "\\n".join(body for _label, body in texts)', 'text = texts[0][1] if texts else ""'),
    ("citation pattern case-sensitive", "citations.py",
     'return re.compile(r"(?<![\\w-])(?:" + pattern + r")(?![\\w-])", re.I)',
     'return re.compile(r"(?<![\\w-])(?:" + pattern + r")(?![\\w-])")'),
    ("hyphen guard dropped (ids read inside hyphenated identifiers)", "citations.py",
     'return re.compile(r"(?<![\\w-])(?:" + pattern + r")(?![\\w-])", re.I)',
     'return re.compile(r"(?<!\\w)(?:" + pattern + r")(?!\\w)", re.I)'),
    ("RETIRED and MOOT missing from the dead-status words", "config.py",
     '"citation_dead_words": ["REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT"],',
     '"citation_dead_words": ["REVOKED", "SUPERSEDED", "AMENDED"],'),
    ("bypass marker ignored", "citations.py", "bypassed = BYPASS_MARKER in text", "bypassed = False"),
    ("merged ledgers joined without a separator", "citations.py",
     '"text": "\\n".join(texts)', '"text": "".join(texts)'),
    ("only the nearest directory's ledger read (no up-tree merge)", "citations.py",
     "        parent = os.path.dirname(current)\n        if parent == current:\n            return found",
     "        return found"),
    ("skip list not applied", "citations.py", "    if not path:\n        return None\n    normalised",
     "    return None\n    normalised"),
    ("refusal does not warn against a lower id", "citations.py",
     '"(merge or pull main into this checkout) and retry. Do not substitute a lower id that "',
     '"(merge or pull main into this checkout) and retry. Pick the nearest id that "'),
    ("unparseable ledger lines not reported", "citations.py",
     "            problems.append((source, lineno, problem))", "            pass"),
    ("fenced code read as ledger entries", "citations.py", "        if fenced:\n            fence =",
     "        if False:\n            fence ="),
    ("internal error passes silently", "gate.py",
     '        return notice("memory-router gate: internal error, this write was NOT checked for citations "\n'
     '                      f"({message}); see $MEMORY_ROUTER_LOG")',
     "        return None"),
    ("memory citations not checked", "citations.py", "    slugs = cited_memories(text)\n", "    slugs = []\n"),
]


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
    args = parser.parse_args(argv)
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
