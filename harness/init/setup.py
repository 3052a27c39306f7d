"""``memory-router init``'s model: read the project, plan what init would do, then do it step by
step. The face (``harness.init.cli``) asks the questions and prints; everything here takes values.

The steps, each idempotent (a second run changes nothing and says so):

1. the memory directory: ``--memory-dir``, else the config's ``memory_dir``, else Claude Code's
   own for the project (``~/.claude/projects/<sanitised git root>/memory``): the one policy,
   ``harness.project.resolve_memory_dir``; it must exist and hold memories;
2. the cluster file: the config's ``clusters``, else ``brain/memory-layer1-clusters.md`` (or
   ``.tsv``) when there is one, else built there (``harness.clusters.build``; with an engine the
   clusters are named and the store enriched, as ``clusters build --engine`` does);
3. the hot strip: the config's ``hot_strip`` when it has one, else a proposal
   (``harness.init.hotstrip``) the user confirms or edits;
4. ``memory-router.toml``: ``memory_dir``, ``clusters`` and ``hot_strip`` set where missing (a
   minimal edit, every other line kept; a ``[tool.memory-router]`` in pyproject.toml is never
   edited: the snippet is printed instead);
5. the hooks (``harness.install.hooks``): in the scope our hook is already in, else ``project``
   when PATH finds memory-router (the portable command), else ``local``;
6. ``doctor``, and the next three commands.
"""

import os
import time

from harness import project as proj
from router.errors import InputError, RefusedError
from router.safeio import open_regular

CONFIG_NAME = "memory-router.toml"
DEFAULT_CLUSTERS = os.path.join("brain", "memory-layer1-clusters.md")
CONFIG_HEADER = ("# memory-router configuration, written by memory-router init (docs/init.md).\n"
                 "# Every command and the hooks read it; memory-router --help lists the other keys.\n")
NO_MEMORY_FIX = ("open Claude Code in this project and let it save a memory (auto memory creates the directory), "
                 "or pass --memory-dir DIR")


def config_word(path, project):
    """A path as ``memory-router.toml`` holds it: relative to the project when inside it, ``~/...``
    under the home directory, else absolute (the config resolves all three)."""
    path = os.path.abspath(path)
    relative = os.path.relpath(path, project)
    if not relative.startswith(os.pardir):
        return relative.replace(os.sep, "/")
    home = os.path.expanduser("~")
    if (path + os.sep).startswith(home.rstrip(os.sep) + os.sep):
        return "~/" + os.path.relpath(path, home).replace(os.sep, "/")
    return path


def find_memories(project, explicit, config):
    """``(memory dir, how it was found, memories)``; refused (exit 2) when there are none."""
    from harness.memorydir import read_memory_dir

    directory, how = proj.resolve_memory_dir(explicit, config, project)
    if not os.path.isdir(directory):
        raise InputError(f"no Claude Code memory directory ({how})", path=directory, fix=NO_MEMORY_FIX)
    memories = read_memory_dir(directory)
    if not memories:
        raise InputError(f"the memory directory holds no memories ({how})", path=directory, fix=NO_MEMORY_FIX)
    return directory, how, memories


def plan_init(project, memory_dir=None):
    """Everything init reads before it writes or asks: a dict (``project``, ``config``,
    ``config_path``, ``memory_dir``, ``memory_how``, ``memories``, ``cluster_path``,
    ``cluster_how``, ``cluster_exists``, ``hot_strip`` (the config's, or ``None``))."""
    config = proj.project_config(project)
    config_path = (config or {}).get("source") or os.path.join(project, CONFIG_NAME)
    directory, how, memories = find_memories(project, memory_dir, config)
    cluster_path, cluster_how = proj.resolve_cluster_file(None, config, [project])
    if cluster_path is None:
        cluster_path, cluster_how = os.path.join(project, DEFAULT_CLUSTERS), "to be built"
    configured = (config or {}).get("hot_strip")
    return {"project": project, "config": config, "config_path": config_path, "memory_dir": directory,
            "memory_how": how, "memories": memories, "cluster_path": os.path.abspath(cluster_path),
            "cluster_how": cluster_how, "cluster_exists": os.path.isfile(cluster_path),
            "hot_strip": list(configured) if config and "hot_strip" in _raw_keys(config_path) else None}


def _raw_keys(path):
    """The top-level keys a memory-router.toml sets (a config dict fills in defaults)."""
    import tomllib

    try:
        with open_regular(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return set()
    if os.path.basename(path) == "pyproject.toml":
        data = (data.get("tool") or {}).get("memory-router") or {}
    return set(data)


def router_lines(plan, index=None):
    """The layer-0 router lines the slim index will hold (for the hot strip's byte budget)."""
    from harness.slim.index import render_layer0_router

    if index is None and plan["cluster_exists"]:
        from router.store.clusterfile import load_cluster_file

        index = load_cluster_file(plan["cluster_path"])
    return render_layer0_router(index) if index is not None else []


def written_paths(plan):
    """``(files, dirs)`` init may write in the project: the config, the cluster file in both forms
    and the utterances, learned and near-miss files beside it; the directories it may create for them."""
    from router.config import learned_path, nearmisses_path, utterances_path

    cluster = plan["cluster_path"]
    stem = os.path.splitext(cluster)[0]
    files = [plan["config_path"], stem + ".md", stem + ".tsv", utterances_path(cluster), learned_path(cluster),
             nearmisses_path(cluster)]
    dirs = [os.path.dirname(cluster), os.path.join(plan["project"], ".claude")]
    return files, dirs


def build_clusters(plan, dry_run=False, stage=None):
    """Build the cluster file from the memory directory (step 2). Returns ``(summary, seconds)``."""
    from harness.clusters.build import build

    started = time.perf_counter()
    summary = build(memory_dir=plan["memory_dir"], out=plan["cluster_path"], dry_run=dry_run,
                    config_path=(plan["config"] or {}).get("source"), namer=stage)
    if stage is not None:
        summary["enrich"] = stage.enrich(summary["out"]["md"])
    return summary, time.perf_counter() - started


def config_changes(plan, hot_strip, explicit_memory_dir=False):
    """The top-level keys init sets in the config: those it lacks, and ``memory_dir`` when
    ``--memory-dir`` names another directory than the config's."""
    config = plan["config"] or {}
    keys = _raw_keys(plan["config_path"]) if plan["config"] else set()
    changes = {}
    if "memory_dir" not in keys or (explicit_memory_dir and os.path.abspath(config.get("memory_dir") or "")
                                    != os.path.abspath(plan["memory_dir"])):
        changes["memory_dir"] = config_word(plan["memory_dir"], plan["project"])
    if "clusters" not in keys:
        changes["clusters"] = config_word(plan["cluster_path"], plan["project"])
    if "hot_strip" not in keys and hot_strip is not None:
        changes["hot_strip"] = list(hot_strip)
    return changes


def write_config(plan, changes, dry_run=False):
    """Set ``changes`` in the config (created with a header when missing). Returns ``(action,
    diff)``: ``unchanged``, ``dry-run``, ``written`` or ``created``. A pyproject.toml is never
    edited (``RefusedError`` with the snippet to paste)."""
    import tomllib

    from canaries.fit import toml_snippet, update_toml_text
    from harness.fileops import Snapshot
    from harness.output import unified_diff
    from router.configcheck import validate_config

    path = plan["config_path"]
    if not changes:
        return "unchanged", ""
    if os.path.basename(path) == "pyproject.toml":
        raise RefusedError(f"refusing to edit {path}; nothing was written",
                           fix="paste this into its [tool.memory-router] table, then run memory-router init again:\n"
                               + toml_snippet(changes).rstrip())
    snapshot = Snapshot(path, "config file")
    text = snapshot.data.decode("utf-8") if snapshot.exists else CONFIG_HEADER
    new_text = update_toml_text(text, changes)
    before = tomllib.loads(text)
    after = tomllib.loads(new_text)
    if after != dict(before, **changes):
        raise RefusedError(f"could not set {', '.join(changes)} in {path} without touching other keys; nothing was "
                           "written", fix="set them by hand: " + toml_snippet(changes).strip().replace("\n", "; "))
    validate_config(after, path, new_text)
    diff = unified_diff(snapshot.data.decode("utf-8"), new_text, f"{path} (now)", f"{path} (after)")
    if dry_run:
        return "dry-run", diff
    snapshot.replace(new_text)
    return ("written" if snapshot.exists else "created"), diff


def plugin_running_hooks(project):
    """The enabled Claude Code plugin that already runs the memory-router prompt hook for
    ``project`` (init then installs no settings hook: both would run), or ``None``."""
    from harness.install import plugins

    found = plugins.enabled_with(project, "prompt hook")
    return found[0] if found else None


def default_scope(project):
    """``(scope, why)`` for init's install: the scope of the hook already there, else ``project``
    when PATH finds memory-router (a portable command, committed with the project), else
    ``local`` (an absolute command for this checkout only)."""
    from harness.install.scopes import on_path

    from harness.install.routes import installed_scope

    found = installed_scope(project)
    if found:
        return found, f"the hook is already installed in the {found} scope"
    if on_path():
        return "project", "memory-router is on PATH"
    return "local", ("PATH finds no memory-router, so the command names this one by its path; put memory-router "
                     "on PATH and run memory-router init --scope project to share the hook with the team")


def doctor_summary(project):
    """``(checks, failed, warned, seconds)`` of ``memory-router doctor`` for the project."""
    from harness.doctor.checks import doctor_report

    started = time.perf_counter()
    checks = doctor_report(project)
    return (checks, [c for c in checks if c["status"] == "fail"], [c for c in checks if c["status"] == "warn"],
            time.perf_counter() - started)


def next_commands(checks):
    """The three commands to run next: what a prompt gets, slimming the always-loaded index, and
    what that saves. The prompt is doctor's routing probe (a request made from a memory's hook line
    that routes to its cluster; else a cluster's tags), else a plain one."""
    from harness import printedcommands

    probe = next((c.get("prompt") for c in checks if c["name"] == "hook routes" and c.get("prompt")), None)
    prompt = probe or "what did we decide about this project?"
    return [printedcommands.memory_router("route", prompt) + "   # what the hook injects for a prompt",
            "memory-router slim render --dry-run   # then without --dry-run: MEMORY.md keeps the hot strip and one "
            "line per cluster (slim rollback undoes it)",
            "memory-router tokens report   # after slim render: what the always-loaded index costs, before and after"]


def planned_index(plan, dry_run=False):
    """The cluster index the store will have: the file just built, or (a dry run, which wrote
    nothing) the same zero-AI clustering done in memory."""
    if not dry_run:
        from router.store.clusterfile import load_cluster_file

        return load_cluster_file(plan["cluster_path"])
    from harness.clusters.builder import build_clusters

    return build_clusters(plan["memories"]).index


def propose_hot_strip(plan, index=None):
    """The proposal for this store: ``harness.init.hotstrip.propose`` over the memories the
    cluster file holds (a hot-strip slug must be a member: slim render refuses any other)."""
    from harness.init import hotstrip

    if index is None:
        from router.store.clusterfile import load_cluster_file

        index = load_cluster_file(plan["cluster_path"])
    members = [m for m in plan["memories"] if index.find_member(m.slug) is not None]
    return hotstrip.propose(members, router_lines(plan, index))


def enrich_existing(plan, stage, say):
    """``--engine`` with a cluster file that is already there: enrich it (``clusters enrich``'s
    steps: the estimate, the confirmation, one request per cluster that needs one)."""
    from harness.clusters import enrich
    from harness.clusters.enrich_cli import confirm, estimate_line, run_with_progress

    engine = stage.engine
    try:
        work, writer = enrich.prepare(plan["cluster_path"], plan["memory_dir"], dry_run=stage.dry_run)
        requests = enrich.job_requests(work.jobs, stage.per_memory)
        if not requests:
            say(f"utterances: {writer.path} is current")
            return {"utterances_file": writer.path, "asked": 0, "failed": 0}
        figure = enrich.estimate(requests, engine)
        say(f"engine: {len(work.jobs)} enrich request(s); estimate: {estimate_line(figure, engine)}")
        engine.check()
        confirm(f"Send {figure.requests} request(s) to {engine.describe()}?", stage.yes)
        result = run_with_progress(lambda on_event: enrich.run_enrich(work, engine, stage.per_memory, writer,
                                                                      on_event=on_event), len(work.jobs), stage.quiet)
    finally:
        engine.close()
    return {"utterances_file": writer.path, "asked": len(work.jobs), "rows": len(result.rows),
            "failed": len(enrich.failed(result.outcomes))}
