"""``replay --suite FILE``: a canary suite from the user's own evidenced prompts.

Each prompt after which the agent needed a memory becomes a case that ``injects`` those memories
and ``routes_to`` their clusters (left out when they span more than the two clusters the router
can route, so the case can still pass); with ``quiet_as_silent``, each prompt with no evidence
becomes a ``silent: true`` case. Every case's ``note`` names its session and ``file:line``. The
same prompt with the same expectations is written once. ``memory-router canary run FILE`` then
gates the store on the user's own history.

The prompts are the user's words: the file goes where the user says, never into the installed
package, through ``harness.fileops`` (temp file + rename, refused when the file changed during the
run), and an existing file is archived beside it first.
"""

import os

from harness import printedcommands
from router.errors import RefusedError

# The router routes at most two clusters (top-1 or a clear top-2); routes_to naming more could never pass.
MAX_ROUTES_TO = 2


class SuiteWriter:
    """Collects the cases as prompts are replayed (a ``run_replay`` sink), then renders the file."""

    def __init__(self, path, cluster_path, index, quiet_as_silent=False):
        self.path = os.path.abspath(path)
        self.cluster_path = os.path.abspath(cluster_path)
        self.cluster_of = {member.slug: cluster.cluster_id for cluster in index.clusters for member in cluster.members}
        self.quiet_as_silent = quiet_as_silent
        self.cases = []
        self.seen = set()
        self.repeats = 0

    def __call__(self, prompt):
        from transcripts.replay import printable

        text = printable(prompt.prompt).strip()
        if not text:
            return
        slugs = []
        for need in prompt.needs:
            if need.slug not in slugs and need.slug in self.cluster_of:
                slugs.append(need.slug)
        if not slugs and not self.quiet_as_silent:
            return
        key = (text, tuple(sorted(slugs)))
        if key in self.seen:
            self.repeats += 1
            return
        self.seen.add(key)
        name = os.path.basename(prompt.path)
        where = f"line {prompt.line}" if name == f"{prompt.session_id}.jsonl" else f"{name}:{prompt.line}"
        case = {"id": f"replay-{len(self.cases) + 1:04d}", "prompt": text,
                "note": f"session {prompt.session_id}, {where}"}
        if slugs:
            clusters = []
            for slug in slugs:
                if self.cluster_of[slug] not in clusters:
                    clusters.append(self.cluster_of[slug])
            if len(clusters) <= MAX_ROUTES_TO:
                case["routes_to"] = clusters
            case["injects"] = slugs
        else:
            case["silent"] = True
        self.cases.append(case)

    def render(self):
        import yaml

        directory = os.path.dirname(self.path)
        try:
            clusters = os.path.relpath(self.cluster_path, directory)
        except ValueError:  # another drive (Windows)
            clusters = self.cluster_path
        # Relative while it stays near (the suite moves with its project); else the whole path.
        if clusters.split(os.sep)[:3] == [os.pardir] * 3:
            clusters = self.cluster_path
        head = ("# Written by memory-router replay from your own session transcripts: each case is a prompt you\n"
                "# typed, with the memories the agent then read, fetched or named (injects) and their clusters\n"
                "# (routes_to); silent cases are prompts with no memory evidence. Check it with\n"
                "#   " + printedcommands.memory_router("canary", "run", os.path.basename(self.path)).replace("\n", "\n#   ")
                + "\n"
                "# The prompts are your words: keep this file out of anything you publish.\n")
        body = yaml.safe_dump({"clusters": clusters, "cases": self.cases}, sort_keys=False, allow_unicode=True,
                              width=100, default_flow_style=None)
        return head + body


def installed_roots():
    """The folders that hold installed code: memory-router's own packages (wherever they were
    installed from, an editable checkout too) and every folder Python installs packages into."""
    import site
    import sysconfig

    import canaries
    import harness
    import router
    import transcripts

    roots = [os.path.dirname(package.__file__) for package in (router, transcripts, canaries, harness)]
    roots += [path for path in (sysconfig.get_paths().get(key) for key in ("purelib", "platlib", "stdlib",
                                                                          "platstdlib")) if path]
    roots += list(getattr(site, "getsitepackages", list)()) + [site.getusersitepackages()]
    return sorted({os.path.realpath(root) for root in roots})


def check_target(path):
    """Refuse a ``--suite`` path inside any installed package (the prompts are the user's words,
    and an upgrade would drop them), or one that is a directory."""
    target = os.path.realpath(os.path.abspath(path))
    if os.path.isdir(target):
        raise RefusedError("--suite names a directory", path=path, fix="pass a file path, e.g. --suite my-history.yaml")
    for root in installed_roots():
        if target == root or target.startswith(root + os.sep):
            raise RefusedError(f"the suite holds your own prompts and is never written into an installed package "
                               f"({root})", path=path, fix="pass a path in your project, e.g. --suite "
                                                         "canaries/my-history.yaml")


def write_suite(snapshot, text):
    """Write ``text`` over the file ``snapshot`` read at the start of the run: archived first when
    it held something else, refused when it changed meanwhile. Returns the archive path or None."""
    data = text.encode("utf-8")
    if snapshot.exists and snapshot.data == data:
        return None
    archived = None
    if snapshot.exists:
        from harness.archives import write_archive

        snapshot.require_unchanged()
        stem, suffix = os.path.splitext(os.path.basename(snapshot.path))
        archived = write_archive(os.path.dirname(os.path.abspath(snapshot.path)), f"{stem}.archive", suffix or ".yaml",
                                 snapshot.data)
    snapshot.replace(data, f"; the archive {archived} is kept" if archived else "")
    return archived
