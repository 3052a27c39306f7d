"""Commits checked out side by side, for benchmarks that compare the code of several commits in
one run (hook_commits.py, router_rooms.py, session_walk.py)."""

import contextlib
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def revision_trees(revs, root=ROOT):
    """``[tree, ...]``: each REV of ``revs`` checked out (detached) into a temporary git worktree of
    ``root``, removed again on the way out, whatever happened inside."""
    with tempfile.TemporaryDirectory() as tmp:
        trees = []
        try:
            for index, rev in enumerate(revs):
                tree = os.path.join(tmp, f"tree-{index}")
                subprocess.run(["git", "-C", root, "worktree", "add", "-q", "--detach", tree, rev], check=True)
                trees.append(tree)
            yield trees
        finally:
            for tree in trees:
                subprocess.run(["git", "-C", root, "worktree", "remove", "--force", tree], check=False)
