#!/bin/sh
# Mutation testing of the citation gate's parser and payload reader (router/gate/citations.py) with
# mutmut 3, against tests/router/test_citations.py. One configuration ([tool.mutmut] in
# pyproject.toml) and one script serve every mutation target (docs/mutation.md); this runs only
# the citation gate's:
#
#     pip install -e '.[test,mutation]'
#     sh benchmarks/mutation_gate.sh [MAX_CHILDREN]      # default 2; ~3-4 minutes on 2 cores
#
# Prints the kill rate and every survivor: a known-equivalent one with its reason (the list is
# EQUIVALENT in benchmarks/mutation.py), any other as UNEXPLAINED with its diff, which makes the
# script exit 1. mutmut writes its work to ./mutants/ (git-ignored).
set -eu
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"
[ -x .venv/bin/python ] && PYTHON=.venv/bin/python
exec "$PYTHON" benchmarks/mutation.py --target "citation gate" --max-children "${1:-2}"
