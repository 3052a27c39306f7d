"""``memory-router gate``: the citation gate as a Claude Code ``PreToolUse`` hook (Write, Edit,
MultiEdit, NotebookEdit). Rules in ``router.gate.citations``; docs/citation-gate.md.

Output (Claude Code 2.1.328, observed: ../shared/spec/claude-code-2.1.328-observed.md):

- block: exit 0 with ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": <why>}}``. The client writes nothing
  and hands the model ``PreToolUse:Write hook error: <why>`` as the tool result, exactly as it
  does for exit 2 + stderr; the JSON form is used because it keeps every memory-router hook on
  exit 0 (an exit 2 from a crash could never be told apart from a block) and it lists the call
  in ``permission_denials``.
- warn, bypass, or a write the gate could not check: exit 0 with a top-level ``systemMessage``
  (shown to the user) and ``hookSpecificOutput.additionalContext`` (given to the model) and no
  ``permissionDecision``, so the client's own permission rules still apply.
- nothing to say: no output.

It fails open: a bad payload never blocks, and an internal error lets the write through but says
so in that visible notice and in one line of ``$MEMORY_ROUTER_LOG``, because a silent pass would
look like a guard that ran. Standard library and ``router`` only.
"""

import json
import os

from router.gate import citations
from router import config as config_mod
from router.agenttext import gate_deny, gate_notice
from router.argv import parse_long_options
from router.hookconfig import MAX_CLUSTER_FILE_BYTES, check_size, hook_config
from router.hookio import log_diagnostic, run_fail_open

HOOK_NAME = "gate"
OPTION_NAMES = ("config", "clusters", "memory-dir")
MAX_LEDGER_BYTES = 8 * 1024 * 1024


def _cluster_slugs(path):
    from router.store.clusterfile import load_cluster_file

    check_size(path, MAX_CLUSTER_FILE_BYTES, "cluster file")
    return sorted({member.slug for cluster in load_cluster_file(path) for member in cluster.members})


def memory_context(options, config, dirs, project_dir):
    """``{"slugs": set, "sources": [...]}`` from the memory directory and the cluster file, or
    ``None`` when neither exists."""
    from router.store import memorystore
    from router.cache import cached

    slugs = set()
    sources = []
    directory = options.get("memory-dir") or (config or {}).get("memory_dir") \
        or memorystore.default_memory_dir(project_dir)
    if os.path.isdir(directory):
        slugs |= memorystore.memory_dir_slugs(directory)
        sources.append(directory)
    cluster_path = config_mod.resolve_cluster_path(options.get("clusters"), config, dirs)
    if cluster_path and os.path.isfile(cluster_path):
        slugs |= set(cached(cluster_path, "cluster-slugs", _cluster_slugs))
        sources.append(cluster_path)
    return {"slugs": slugs, "sources": sources} if sources else None


def check_texts(path, texts, options, cwd=None, ledger_dir=None):
    """The gate's whole decision for the texts of one write to ``path`` (``None``: text with no
    file, such as a pull request body on stdin). Returns ``citations.decide``'s dict plus
    ``"skipped"`` (the skip reason or ``None``). Shared by the hook and ``gate check``.
    ``ledger_dir``: where the ledger walk starts (default: ``path``'s directory, else ``cwd``)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    dirs = config_mod.project_dirs(cwd)
    config = hook_config(options.get("config"), dirs)
    settings = config_mod.citation_settings_of(config)
    if path and not os.path.isabs(path):
        path = os.path.join(cwd, path)
    skipped = citations.skip_reason(path, settings["citation_ledgers"], settings["citation_fixtures_dir"])
    if skipped:
        return {"verdict": "pass", "blocks": [], "warnings": [], "bypassed": False, "skipped": skipped}
    pattern = settings["citation_id_pattern"]
    text = citations.joined(texts)
    cited = citations.scan(text, pattern)
    ledger = None
    if cited["ids"] or cited["dates"]:
        start = ledger_dir or (os.path.dirname(path) if path else cwd)
        boundary = citations.ledger_boundary(start, dirs)
        found = citations.find_ledgers(start, settings["citation_ledgers"], boundary)
        for ledger_path in found:
            if os.path.getsize(ledger_path) > MAX_LEDGER_BYTES:
                raise ValueError(f"ledger {ledger_path} is over {MAX_LEDGER_BYTES} bytes")
        ledger = citations.load_ledgers(found, pattern) if found else None
    memory = None
    if cited["memories"]:
        project_dir = dirs[0]
        memory = memory_context(options, config, dirs, project_dir)
    result = citations.decide_scanned(cited, text, ledger, memory, settings["citation_dead_words"])
    result["skipped"] = None
    return result


def payload_project_dir(payload, path):
    """The directory a write belongs to: Claude Code's ``cwd``, else Cursor's first
    ``workspace_roots`` entry, else the git root above an absolute ``path`` (``None``: unknown)."""
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    if path and os.path.isabs(path):
        from router.store.memorystore import git_root

        return git_root(os.path.dirname(path))
    return None


def respond(raw, argv):
    """The object the hook prints for one raw payload, or ``None`` for no output."""
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as err:  # RecursionError: JSON nested too deep
        log_diagnostic(HOOK_NAME, f"payload is not JSON: {err}")
        return gate_notice(f"memory-router gate: this write was NOT checked for citations: the hook payload is not "
                      f"JSON ({err})")
    path, texts = citations.payload_texts(payload)
    why = citations.unreadable(payload, texts)
    if why:
        log_diagnostic(HOOK_NAME, f"write payload not readable: {why}")
        return gate_notice(f"memory-router gate: this write was NOT checked for citations: {why}")
    if not texts:
        log_diagnostic(HOOK_NAME, f"no text to check in the payload (tool_name {payload.get('tool_name')!r})")
        return None
    try:
        options = parse_long_options(argv, OPTION_NAMES, HOOK_NAME)
        result = check_texts(path, texts, options, payload_project_dir(payload, path))
    except Exception as err:  # noqa: BLE001 - the write goes ahead, visibly unchecked
        message = f"{type(err).__name__}: {err}"
        log_diagnostic(HOOK_NAME, f"internal error, write let through unchecked: {message}")
        return gate_notice("memory-router gate: internal error, this write was NOT checked for citations "
                      f"({message}); see $MEMORY_ROUTER_LOG")
    rendered = citations.render(result)
    if result["verdict"] == "block":
        return gate_deny("memory-router citation gate refused this write:\n" + rendered)
    if result["verdict"] == "warn":
        return gate_notice("memory-router citation gate:\n" + rendered)
    return None


def run_gate(argv, stdin=None, stdout=None):
    """Entry point of ``memory-router gate``. Always returns 0."""
    return run_fail_open(HOOK_NAME, lambda raw: respond(raw, argv), stdin, stdout)
