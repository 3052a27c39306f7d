"""``memory-router checklist``'s model: the fresh-session behavioural canary checklist (spec §6.2,
§11). The checks and the Markdown are pure (``harness.canary.checks``); this module gathers their
inputs from disk: the project's settings (``harness.install.settingsfile.scan_settings``), its
config, MEMORY.md, the cluster file the installed hook reads, and a scan of the project for the
fact's slug. ``harness.canary.cli`` prints the result.
"""

import os

from harness.canary.suiteargs import cluster_file_family, default_suite_path
from harness.install import hookcommand
from harness.install.settingsfile import scan_settings
from harness.memorydir import read_memory_index
from harness.project import project_config, project_state_dir, resolve_memory_dir
from router.errors import InputError
from router.safeio import read_regular_bytes

LEAK_SCAN_MAX_FILES = 20000
LEAK_SCAN_MAX_BYTES = 2_000_000
LEAK_SCAN_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                                 ".mypy_cache", ".pytest_cache", ".tox", "build", "dist", ".cache"})


def scan_for_slug(root, slug, skip_paths=(), max_files=LEAK_SCAN_MAX_FILES):
    """``(files naming slug, files scanned, capped)`` under ``root``: text files up to 2 MB,
    skipping VCS/venv/cache directories and ``skip_paths`` (the memory dir, the cluster file)."""
    needle = slug.lower().encode()
    skip = {os.path.abspath(p) for p in skip_paths if p}
    hits, scanned = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in LEAK_SCAN_SKIP_DIRS
                             and os.path.abspath(os.path.join(dirpath, d)) not in skip)
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.abspath(path) in skip:
                continue
            if scanned >= max_files:
                return hits, scanned, True
            try:
                if os.path.getsize(path) > LEAK_SCAN_MAX_BYTES:
                    continue
                data = read_regular_bytes(path)
            except OSError:
                continue
            scanned += 1
            if b"\0" in data[:4096]:
                continue
            if needle in data.lower():
                hits.append(os.path.relpath(path, root))
    return hits, scanned, False


def load_behavioural_suite(path, clusters=None):
    from canaries.suite import load_suite

    suite = load_suite(path, cluster_path=clusters)
    if not suite.behavioural:
        raise InputError("the suite has no behavioural: cases", path=path,
                         fix="add a behavioural: section (id, prompt, fact, expect_any, forbid)")
    return suite


def pick_cases(suite, case_id):
    if case_id is None:
        return list(suite.behavioural)
    try:
        return [suite.behavioural_case(case_id)]
    except KeyError:
        known = ", ".join(c.id for c in suite.behavioural)
        raise InputError(f"no behavioural case {case_id!r}", path=suite.path, fix=f"use one of: {known}") from None


def checklist_checks(case, suite, project_dir, memory_dir_arg=None, cluster_override=None, scan=True):
    """The automatic preconditions of one case, gathered from disk. Returns ``(checks, context)``."""
    from canaries.memoryindex import memory_index_facts
    from harness.canary import checks as cl
    from harness.memorydir import hot_slugs
    from router import config as config_mod
    from router.store.clusterfile import load_cluster_file
    from router.errors import MemoryRouterError
    from router.providers.provider import build_table
    from router.hooks.session import route_fresh

    config = project_config(project_dir)
    memory_dir, memory_from = resolve_memory_dir(memory_dir_arg, config, project_dir)
    memory_path, memory_text = read_memory_index(memory_dir)
    facts = memory_index_facts(memory_text, case.fact) if memory_text is not None else None

    locations = scan_settings(project_dir)
    entries = [(i["label"], i["path"], e) for i in locations for e in i["router"]]
    settings_problems = [f"{i['label']} settings: {i['error']}" for i in locations if i["error"]]
    router_command = entries[0][2].command if entries else None

    # The cluster file the installed hook reads if there is one, else the suite's.
    cluster_path, cluster_from = cluster_override, "--clusters"
    hook_blind = False
    if cluster_path is None and router_command is not None:
        cluster_path = config_mod.resolve_cluster_path(hookcommand.command_option(router_command, "clusters"), config,
                                                       [project_dir])
        cluster_from = f"read by the hook in the {entries[0][0]} settings"
        hook_blind = cluster_path is None
    if cluster_path is None and config is not None:
        # A configured project whose hook is not installed yet: its own store, not the suite's example
        cluster_path = config_mod.resolve_cluster_path(None, config, [project_dir])
        cluster_from = "the project's store (its config): no hook is installed"
    if cluster_path is None:
        cluster_path, cluster_from = suite.cluster_path, "the suite's: no hook is installed"
    decision, hook_text = None, None
    try:
        settings = config_mod.settings_of(config)
        index = load_cluster_file(cluster_path)
        decision = route_fresh(case.prompt, build_table(index), settings, log_as="checklist")
        member = next((m for m in index.members if m.slug == case.fact), None)
        hook_text = member.hook if member else None
    except MemoryRouterError:
        decision = None  # check_routes then says the routing could not be checked
    if decision is not None and member is None:
        from harness import printedcommands
        from router.errors import RefusedError

        # Every check below is about this memory; ticking them for one the store lacks misleads
        example = " (the bundled example's behavioural cases name its fictional memories)" \
            if os.path.abspath(suite.path) == os.path.abspath(default_suite_path()) else ""
        raise RefusedError(f"behavioural case {case.id!r}: its fact {case.fact!r} is not in the store "
                           f"{cluster_path} ({cluster_from}){example}; nothing was checked",
                           fix="check a memory of yours: write a suite with a behavioural: case whose fact is one "
                               "of your store's slugs (docs/canaries.md), then "
                               + printedcommands.memory_router("checklist", "SUITE", "--project", project_dir))
    if hook_text and memory_text is not None:
        facts = memory_index_facts(memory_text, case.fact, hook_text)

    checks = [
        cl.check_slim(memory_path, facts),
        cl.check_not_hot(case.fact, memory_path, facts, tuple((config or {}).get("hot_strip") or ()),
                         tuple(hot_slugs(memory_dir))),
        cl.Check(cl.NOT_MET, f"The router injects `{case.fact}` for this prompt",
                 "the installed hook finds no cluster file (no --clusters, $MEMORY_ROUTER_CLUSTERS, config "
                 "'clusters' or brain/memory-layer1-clusters.md), so it injects nothing")
        if hook_blind else cl.check_routes(case.fact, decision, cluster_path),
        cl.check_hook_installed(entries, settings_problems),
        cl.check_hooks_enabled([f"{i['label']} ({i['path']})" for i in locations if i["disable_all_hooks"]]),
        cl.check_load_limit(memory_path, facts),
    ]
    if scan:
        # memory-router's own files name slugs by design; the verdict watches tool calls on them.
        # The project's own cluster file too, even before the hook that reads it is installed.
        project_clusters = config_mod.resolve_cluster_path(None, config, [project_dir])
        own = (memory_dir, *cluster_file_family(cluster_path), *cluster_file_family(project_clusters),
               (config or {}).get("source"), suite.path, project_state_dir(project_dir))
        hits, scanned, capped = scan_for_slug(project_dir, case.fact, skip_paths=own)
        checks.append(cl.check_no_repo_leak(case.fact, hits, scanned, capped, project_dir))
    from harness.project import Store

    store = Store(cluster_path, cluster_from, memory_dir, memory_from, config)
    context = {"suite": suite.path, "project_dir": project_dir, "memory_dir": memory_dir,
               "cluster_file": cluster_path, "commands": None, "store": store.to_json(), "store_lines": store.lines()}
    return checks, context


def checklists(project_dir, suite_path=None, case_id=None, memory_dir=None, clusters=None, scan=True):
    """``(documents, summaries, ready)``: each behavioural case's Markdown checklist and its
    ``--json`` summary, and whether every automatic precondition of every case is met."""
    from harness.canary import checks as cl

    suite_path = suite_path or default_suite_path()
    suite = load_behavioural_suite(suite_path, clusters)
    bundled = os.path.abspath(suite_path) == os.path.abspath(default_suite_path())
    suite_opt = None if bundled else os.path.abspath(suite_path)
    documents, summaries, ready = [], [], True
    for case in pick_cases(suite, case_id):
        checks, context = checklist_checks(case, suite, project_dir, memory_dir, clusters, scan=scan)
        context["commands"] = cl.verdict_commands(case.id, project_dir, suite=suite_opt)
        documents.append(cl.render_checklist(case, checks, context))
        summary = cl.checklist_summary(case, checks)
        summary.update({k: context[k] for k in ("suite", "project_dir", "memory_dir", "cluster_file", "commands",
                                                "store")})
        summaries.append(summary)
        ready = ready and summary["ready"]
    return documents, summaries, ready
