#!/bin/sh
# Mutation testing of the citation gate's parser and payload reader (router/citations.py) with
# mutmut 3, against tests/router/test_citations.py ([tool.mutmut] in pyproject.toml).
#
#     pip install -e '.[test,mutation]'
#     sh benchmarks/mutation_gate.sh [MAX_CHILDREN]      # default 2; ~3 minutes on 2 cores
#
# Prints the kill rate, then every surviving mutant's diff. A survivor whose diff is in the list
# of known-equivalent mutants below (documented in docs/citation-gate.md) is allowed; any other
# survivor makes the script exit 1, so the goal "100% of non-equivalent mutants killed" is a
# check, not a claim. mutmut writes its work to ./mutants/ (git-ignored).
set -eu
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
[ -x .venv/bin/python ] && PYTHON=.venv/bin/python
rm -rf mutants
"$PYTHON" -m mutmut run --max-children "${1:-2}" >/dev/null 2>&1 || true
exec "$PYTHON" - <<'EOF'
import subprocess
import sys

# (removed line, added line) of each mutant that cannot change behaviour, and why.
EQUIVALENT = {
    ('text = handle.read().decode("utf-8", errors="replace")',
     'text = handle.read().decode(errors="replace")'): "bytes.decode defaults to UTF-8",
    ('text = handle.read().decode("utf-8", errors="replace")',
     'text = handle.read().decode("UTF-8", errors="replace")'): "codec names are case-insensitive",
}

mutmut = [sys.executable, "-m", "mutmut"]
lines = subprocess.run(mutmut + ["results", "--all", "true"], capture_output=True, text=True).stdout.splitlines()
status = dict(line.strip().rsplit(": ", 1) for line in lines if ": " in line)
if not status:
    sys.exit("mutation_gate: mutmut reported no mutants (is mutmut installed? pip install -e '.[mutation]')")
killed = sum(1 for s in status.values() if s == "killed")
survivors = [name for name, s in status.items() if s != "killed"]
unexplained = []
for name in survivors:
    diff = subprocess.run(mutmut + ["show", name], capture_output=True, text=True).stdout.splitlines()
    removed = [l[1:].strip() for l in diff if l.startswith("-") and not l.startswith("---")]
    added = [l[1:].strip() for l in diff if l.startswith("+") and not l.startswith("+++")]
    why = EQUIVALENT.get((removed[0] if removed else "", added[0] if added else ""))
    print(f"{name} ({status[name]}): {why or 'NOT KNOWN EQUIVALENT'}")
    for line in removed:
        print(f"    - {line}")
    for line in added:
        print(f"    + {line}")
    if why is None:
        unexplained.append(name)
equivalent = len(survivors) - len(unexplained)
total = len(status)
print(f"mutants: {total}; killed: {killed} ({100 * killed / total:.1f}%); equivalent survivors: {equivalent}; "
      f"killed of non-equivalent: {killed}/{total - equivalent} ({100 * killed / (total - equivalent):.1f}%)")
sys.exit(1 if unexplained else 0)
EOF
