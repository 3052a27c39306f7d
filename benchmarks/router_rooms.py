"""router/'s layout as rooms, arrows and floors, from the real import graph (issue 27).

    python benchmarks/router_rooms.py [REV]

A package of router/ (hooks, gate, providers, routing, store) is one room, each base module one
room; an arrow is a direct import from one room to another; floors are the longest chain of
arrows. REV (a commit) is read from a temporary worktree, so two layouts can be compared:
``python benchmarks/router_rooms.py dbdb1f3`` against ``python benchmarks/router_rooms.py``.
Needs grimp (import-linter's graph library, in the test extra: ``pip install '.[test]'``).
"""

import functools
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGES = ("hooks", "gate", "providers", "routing", "store")


def rooms_of(graph):
    """``(rooms, arrows, floors, modules)`` of the ``router`` package in a grimp ``graph``."""
    skip = {"router"} | {f"router.{p}" for p in PACKAGES}

    def room(module):
        parts = module.split(".")
        return parts[1] if len(parts) > 2 and parts[1] in PACKAGES else module

    modules = [m for m in graph.modules if m not in skip]
    arrows = {(room(a), room(b)) for a in modules for b in graph.find_modules_directly_imported_by(a)
              if b not in skip and room(a) != room(b)}
    below = {}
    for a, b in arrows:
        below.setdefault(a, set()).add(b)

    @functools.lru_cache(None)
    def floor(r):
        return 1 + max((floor(x) for x in below.get(r, ())), default=0)

    rooms = {room(m) for m in modules}
    return len(rooms), len(arrows), max(floor(r) for r in rooms), len(modules)


def measure(root):
    try:
        import grimp  # noqa: F401
    except ImportError:
        raise SystemExit("router_rooms.py needs grimp: pip install '.[test]' (import-linter brings it)") from None
    code = ("import sys, grimp; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); "
            "import router_rooms as r; print(*r.rooms_of(grimp.build_graph('router', cache_dir=None)))")
    out = subprocess.run([sys.executable, "-c", code, root, HERE], capture_output=True, text=True, check=True)
    return tuple(int(x) for x in out.stdout.split())


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        from revtrees import revision_trees

        with revision_trees(argv[:1]) as (tree,):
            figures = measure(tree)
    else:
        figures = measure(ROOT)
    rooms, arrows, floors, modules = figures
    print(f"{argv[0] if argv else 'working tree'}: {rooms} rooms ({modules} modules), {arrows} arrows, {floors} floors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
