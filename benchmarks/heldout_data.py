"""Validate a held-out benchmark data directory (format only, never routing).

There are two: benchmarks/heldout/ (the Gullwing store, the default) and benchmarks/heldout2/
(the Thistledown store). Each holds one store, one suite and two session files. The held-out
store and prompts are worth something only while nothing is fitted on them, so
this checker never routes a prompt: it checks that the data is well formed and consistent.

- the cluster file parses (cluster-format.md) and memory-router.toml names it, with a hot strip
  of slugs that exist;
- every memory file has front matter (name, description, type), is listed in memory/MEMORY.md,
  and is a member of the cluster file with the same type and hook; and vice versa;
- the directory's one suite (its only .yaml file: heldout.yaml, heldout2.yaml) loads with the project's suite loader against that cluster file (unknown cluster
  ids and slugs are errors there), has at least MIN_CASES cases, every case's first tag is its
  kind and its id starts with it, each kind has its minimum count, silent kinds expect silence,
  topical kinds expect a cluster, and per-memory kinds name the memory;
- the session prompt files hold exactly 60 and 200 non-empty single-line prompts.

    python benchmarks/heldout_data.py [DIR | --dir DIR] [--json]

Exit 0 when the data is valid (prints the counts per kind), 1 with one line per problem.
"""

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from canaries.suite import load_suite  # noqa: E402
from harness.memorydir import read_index, read_memory_files  # noqa: E402
from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.configfile import parse_config_file  # noqa: E402
from router.errors import MemoryRouterError  # noqa: E402

DEFAULT_DIR = os.path.join(HERE, "heldout")
MIN_CASES = 200

# Minimum cases per kind (issue 14's rough counts, rounded down).
KIND_MINIMUMS = {
    "direct": 30,
    "member": 30,
    "inflection": 25,
    "identifier": 20,
    "paraphrase": 30,
    "chatty-log": 20,
    "neutral": 25,
    "near-miss": 25,
}
SILENT_KINDS = ("neutral", "near-miss")
# Kinds about one memory: the case must name it in ``injects`` (fact recall is measured on it).
MEMBER_KINDS = ("member", "inflection", "identifier", "paraphrase", "chatty-log")
SESSION_FILES = {"session-60.txt": 60, "session-200.txt": 200}


def check_store_files(directory, problems):
    """``(config, index, files by slug)`` of the store in ``directory`` (``None`` for what could
    not be read), after checking that memory-router.toml names clusters.md, that every memory
    file has front matter and is listed in memory/MEMORY.md and in the cluster file with the same
    type and hook, and vice versa. Shared with benchmarks/realwording_data.py."""
    config_path = os.path.join(directory, "memory-router.toml")
    try:
        config = parse_config_file(config_path)
    except MemoryRouterError as err:
        problems.append(err.format())
        return None, None, {}
    cluster_path = os.path.join(directory, "clusters.md")
    # The config resolves its paths to absolute ones; DIR may be relative.
    if os.path.abspath(config["clusters"]) != os.path.abspath(cluster_path):
        problems.append(f"{config_path}: clusters is {config['clusters']}, expected {cluster_path}")
    try:
        index = load_cluster_file(cluster_path)
    except MemoryRouterError as err:
        problems.append(err.format())
        return config, None, {}

    memory_dir = os.path.join(directory, "memory")
    index_path = os.path.join(memory_dir, "MEMORY.md")
    try:
        entries = read_index(index_path)
        files = read_memory_files(memory_dir)
    except MemoryRouterError as err:
        problems.append(err.format())
        return config, index, {}

    for found in files:
        where = os.path.relpath(found.path, directory)
        for key, value in (("name", found.name), ("description", found.description), ("type", found.type)):
            if not value:
                problems.append(f"{where}: front matter has no {key}")
        if found.name and found.name != found.slug:
            problems.append(f"{where}: name {found.name!r} differs from the file's slug {found.slug!r}")

    indexed = {}
    for entry in entries:
        if entry.slug in indexed:
            problems.append(f"{index_path}:{entry.line}: {entry.slug} is listed twice")
        indexed[entry.slug] = entry
    by_file = {f.slug: f for f in files}
    for slug in sorted(set(by_file) - set(indexed)):
        problems.append(f"{index_path}: memory file {slug}.md is not listed in MEMORY.md")
    for slug in sorted(set(indexed) - set(by_file)):
        problems.append(f"{index_path}:{indexed[slug].line}: {slug} is listed but has no memory file")

    members = {m.slug: m for m in index.members}
    for slug in sorted(set(by_file) - set(members)):
        problems.append(f"{cluster_path}: memory {slug} is in no cluster")
    for slug in sorted(set(members) - set(by_file)):
        problems.append(f"{cluster_path}:{members[slug].line}: member {slug} has no memory file")
    for slug in sorted(set(members) & set(by_file)):
        member, found = members[slug], by_file[slug]
        if found.type and member.type != found.type:
            problems.append(f"{cluster_path}:{member.line}: {slug} has type {member.type}, "
                            f"its memory file says {found.type}")
        hooks = {member.hook, found.description}
        if slug in indexed:
            hooks.add(indexed[slug].hook)
        if len(hooks) != 1:
            problems.append(f"{cluster_path}:{member.line}: {slug}'s hook differs between the cluster file, "
                            f"MEMORY.md and the memory file's description")
    return config, index, by_file


def _check_store(directory, problems):
    """The cluster index (or ``None``), after the shared store checks and the hot strip's."""
    config, index, by_file = check_store_files(directory, problems)
    if config is not None and index is not None:
        config_path = os.path.join(directory, "memory-router.toml")
        for slug in config["hot_strip"]:
            if slug not in by_file:
                problems.append(f"{config_path}: hot_strip names {slug}, which has no memory file")
    return index


NEAR_MISS_SUITE = "nearmiss-people.yaml"


def _suite_path(directory, problems):
    """The directory's one suite file, or ``None`` (a problem says why). ``NEAR_MISS_SUITE``
    beside it (near-misses people write, measured apart by routing_quality) is not that suite."""
    found = sorted(path for path in glob.glob(os.path.join(directory, "*.yaml"))
                   if os.path.basename(path) != NEAR_MISS_SUITE)
    if len(found) == 1:
        return found[0]
    names = ", ".join(os.path.basename(path) for path in found) or "none"
    problems.append(f"{directory}: expected exactly one .yaml suite file, found {names}")
    return None


def load_store_suite(suite_path, cluster_path, problems):
    """The suite at ``suite_path`` loaded against its cluster file (``None`` when it does not
    load), with a problem when it names another cluster file than ``cluster_path``. Shared with
    benchmarks/realwording_data.py."""
    try:
        suite = load_suite(suite_path)
    except MemoryRouterError as err:
        problems.append(err.format())
        return None
    if os.path.abspath(suite.cluster_path) != os.path.abspath(cluster_path):
        problems.append(f"{suite_path}: clusters is {suite.cluster_path}, expected {cluster_path}")
    return suite


def _check_suite(directory, problems):
    """Counts per kind (empty if the suite does not load)."""
    suite_path = _suite_path(directory, problems)
    if suite_path is None:
        return {}
    cluster_path = os.path.join(directory, "clusters.md")
    suite = load_store_suite(suite_path, cluster_path, problems)
    if suite is None:
        return {}
    if len(suite.cases) < MIN_CASES:
        problems.append(f"{suite_path}: {len(suite.cases)} cases, at least {MIN_CASES} needed")
    counts = dict.fromkeys(KIND_MINIMUMS, 0)
    for case in suite.cases:
        where = f"{suite_path}:{case.line}"
        kind = case.tags[0] if case.tags else None
        if kind not in KIND_MINIMUMS:
            problems.append(f"{where}: {case.id}'s first tag must be its kind, one of {', '.join(KIND_MINIMUMS)}")
            continue
        counts[kind] += 1
        if not case.id.startswith(kind + "-"):
            problems.append(f"{where}: {case.id} should start with its kind '{kind}-'")
        if kind in SILENT_KINDS:
            if case.silent is not True or case.routes_to:
                problems.append(f"{where}: {case.id} is {kind}, so it must expect silence and no cluster")
            continue
        if not case.routes_to:
            problems.append(f"{where}: {case.id} is {kind}, so it must name the cluster it routes to")
        if kind in MEMBER_KINDS and not case.injects:
            problems.append(f"{where}: {case.id} is {kind}, so it must name its memory in injects")
        if case.routes_to and case.routes_to[0] not in case.tags:
            problems.append(f"{where}: {case.id} should carry its cluster id {case.routes_to[0]} as a tag")
    for kind, minimum in KIND_MINIMUMS.items():
        if counts[kind] < minimum:
            problems.append(f"{suite_path}: {counts[kind]} {kind} cases, at least {minimum} needed")
    return counts


def _check_sessions(directory, problems):
    for name, expected in SESSION_FILES.items():
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                lines = handle.read().split("\n")
        except OSError as err:
            problems.append(f"{path}: cannot read: {err.strerror or err}")
            continue
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if not line.strip():
                problems.append(f"{path}:{number}: empty line (one prompt per line)")
        if len(lines) != expected:
            problems.append(f"{path}: {len(lines)} prompts, expected {expected}")


def check(directory=DEFAULT_DIR):
    """``(problems, counts)``: every problem found (one line each) and the cases per kind."""
    problems = []
    _check_store(directory, problems)
    counts = _check_suite(directory, problems)
    _check_sessions(directory, problems)
    # An invalid cluster file is reported by both the store and the suite check: say it once.
    return list(dict.fromkeys(problems)), counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", nargs="?", help=f"data directory (default: {DEFAULT_DIR})")
    parser.add_argument("--dir", dest="dir_option", metavar="DIR", help="the same as DIRECTORY")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    if args.directory and args.dir_option:
        parser.error("give the data directory once, as DIRECTORY or as --dir")
    problems, counts = check(args.directory or args.dir_option or DEFAULT_DIR)
    if args.json:
        print(json.dumps({"ok": not problems, "problems": problems, "cases_per_kind": counts,
                          "cases": sum(counts.values())}, indent=2))
    else:
        for problem in problems:
            print(problem)
        summary = ", ".join(f"{kind} {n}" for kind, n in counts.items())
        print(f"{'ok' if not problems else f'{len(problems)} problems'}: {sum(counts.values())} cases ({summary})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
