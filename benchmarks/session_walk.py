"""The walk of one prompt through the hook's session stage: which modules it stays in, in order.

    python benchmarks/session_walk.py [REV]

Runs ``router.hooks.hook.decide`` on the second prompt of a session (its record holds lines, its
transcript shows the first injection, so the record is read, checked against the transcript,
planned from and written) with the bundled example store, and traces every Python call and
return (``sys.setprofile``). A stay is a run of frames in one module of router/; the walk is
the stays from the moment ``decide`` hands over to the session stage (``hook_stage``) until it
returns. Printed: the stays in order, how many returns to a module it had left, and per module
how many times the walk entered it (a call from another module) and stayed in it. REV (a commit) is read from a temporary worktree, so two commits can be compared:
``python benchmarks/session_walk.py 60bfb82`` against ``python benchmarks/session_walk.py``.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Run in a child whose sys.path starts at the code to measure; prints the stays as JSON.
_CHILD = r'''
import io, json, os, sys
root = sys.argv[1]
sys.path.insert(0, root)
work = sys.argv[2]
os.environ["MEMORY_ROUTER_CACHE_DIR"] = os.path.join(work, "cache")
os.environ.pop("MEMORY_ROUTER_LOG", None)
from router.config import bundled_cluster_file
from router.hooks import hook
transcript = os.path.join(work, "session.jsonl")
payload = {"session_id": "walk-1", "transcript_path": transcript, "cwd": work,
           "hook_event_name": "UserPromptSubmit",
           "prompt": "I set an env var with setx but the Bash tool still can't see it, why?"}
options = {"clusters": bundled_cluster_file()}
first = hook.decide(dict(payload), options)
assert first is not None, "the first prompt did not route"
context = first["hookSpecificOutput"]["additionalContext"]
with open(transcript, "w", encoding="utf-8") as handle:
    handle.write(json.dumps({"type": "user", "message": {"role": "user", "content": payload["prompt"]}}) + "\n")
    handle.write(json.dumps({"type": "attachment", "attachment": {"type": "hook_additional_context",
                                                                  "content": [context]}}) + "\n")
prefix = os.path.join(os.path.realpath(root), "router") + os.sep
stays, stack, entries = [], [], {}

def room(frame):
    path = os.path.realpath(frame.f_code.co_filename)
    return path[len(prefix) - len("router") - 1:] if path.startswith(prefix) else None

def profile(frame, event, arg):
    if event == "call":
        here = room(frame)
        if frame.f_code.co_name == "hook_stage" and not stack:
            stack.append(here); stays.append(here); return
        if not stack:
            return
        current = stack[-1]
        here = here or current          # the standard library: still the caller's stay
        stack.append(here)
        if here != current:
            entries[here] = entries.get(here, 0) + 1
        if here != stays[-1]:
            stays.append(here)
    elif event == "return" and stack:
        stack.pop()
        if stack and stack[-1] != stays[-1]:
            stays.append(stack[-1])

sys.setprofile(profile)
hook.decide(dict(payload), options)
sys.setprofile(None)
print(json.dumps({"stays": stays, "entries": entries}))
'''


def walk(root):
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run([sys.executable, "-c", _CHILD, root, work], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        from revtrees import revision_trees

        with revision_trees(argv[:1]) as (tree,):
            walked = walk(tree)
    else:
        walked = walk(ROOT)
    stays, entries = walked["stays"], walked["entries"]
    counts = {}
    for stay in stays:
        counts[stay] = counts.get(stay, 0) + 1
    print(" -> ".join(stays))
    print(f"{len(stays)} stays in {len(counts)} modules, {len(stays) - len(counts)} returns to a module it had left")
    print("entered (calls into the module from another one) / stays:")
    for name, n in sorted(counts.items(), key=lambda item: (-entries.get(item[0], 0), -item[1], item[0])):
        print(f"  {entries.get(name, 0):3} / {n:3}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
