"""Everything that can reach a model, rendered in one place (docs/safety.md).

What a hook prints (the prompt hook's and session-start's ``additionalContext``, the citation
gate's notice and refusal) and what every MCP tool returns is built here and only here
(``tests/router/test_agenttext.py`` walks the code and fails when anything else builds it).
What may reach the model: member lines (slug and hook), cluster ids, labels and tags, the
prompt's own words, numbers, file paths and fixed phrases. What never may: the text of the
build-time files (utterances, near-misses, the generic negatives, learned terms), which a model
or a hand wrote at build time and which the router uses for matching only. So:

- ``route_result`` names a veto's exemplars by kind, cluster id or slug and similarity, never by
  their text (``memory-router route`` on a terminal still prints the text, to a person);
- ``feedback_result`` counts the learned terms a feedback evicted instead of listing them;
- ``store_problems`` names a skipped row by ``file:line:col`` only (the message may quote the row).

Standard library only: the hooks import it.
"""

# A veto's fields that carry no text; an exemplar's fields that name it without its text.
_VETO_FIELDS = ("vetoed", "rule", "floor", "positive", "negative", "k")  # rule: "margin" or "floor"
_EXEMPLAR_FIELDS = ("kind", "similarity", "slug", "cluster_id")


def hook_output(text, event="UserPromptSubmit"):
    """The exact object a UserPromptSubmit (or ``event``) hook prints to add ``text`` as context.
    ``text`` is what ``router.routing.score.render_context`` made of member lines (or the
    sentinel's fixed text)."""
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def gate_notice(text):
    """The citation gate's visible, non-blocking message: the user sees ``systemMessage``, the model
    the context."""
    return {"systemMessage": text,
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


def gate_deny(reason):
    """The citation gate's refusal of a write, with its reason."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def veto_summary(veto, named):
    """A veto verdict without exemplar text: its numbers, and ``nearest_negative`` /
    ``best_member_exemplar`` as ``named`` gave them (``{"kind", "similarity", "slug" |
    "cluster_id", ...}``), cut to the fields that name an exemplar."""
    shown = {key: veto[key] for key in _VETO_FIELDS if key in veto}
    for key in ("nearest_negative", "best_member_exemplar"):
        exemplar = named.get(key)
        shown[key] = None if exemplar is None else {f: exemplar[f] for f in _EXEMPLAR_FIELDS if f in exemplar}
    return shown


def skipped_row(where):
    """What the agent is told of a row file's row that was skipped: where it is, never what it holds."""
    return f"{where}: a bad row was skipped (memory-router doctor names it and the fix)"


def store_problems(problems):
    """The ``store_problems`` lines an MCP result carries: each ``(where, message)`` of a file left
    out or a row skipped (``where``: ``file`` or ``file:line:col``), named by ``where`` alone."""
    return [skipped_row(where) if where.count(":") >= 2 else f"{where}: left out (memory-router doctor says why)"
            for where, _message in problems]


def _with_problems(result, problems):
    if problems:
        result["store_problems"] = store_problems(problems)
    return result


def route_result(decision, problems=()):
    """The MCP ``route`` tool's result (the ``route --json`` object): ``decision`` with its veto
    named without text (``harness.context.route_json`` passes the names)."""
    return _with_problems(dict(decision), problems)


def search_result(result, problems=()):
    """The MCP ``search_memory`` result: member lines, cluster ids and the query's own words."""
    return _with_problems(dict(result), problems)


def memory_result(result):
    """The MCP ``get_memory`` result: a memory file's front matter and body (the memory itself)."""
    return dict(result)


def feedback_result(report):
    """The MCP ``record_feedback`` result: what the feedback added, refreshed or removed (the
    prompt's own words) and how many learned terms it evicted (their words came from the learned
    file, so they are counted, not listed)."""
    shown = dict(report)
    shown["evicted"] = len(report.get("evicted") or ())
    return shown


def tool_error(err):
    """The one line an MCP tool error carries for ``err`` (a ``MemoryRouterError``). An error about
    a row of a build-time file (``quotes_build_time_text``: the learned-terms, utterances and
    near-misses readers' errors) may quote the row, so it is named by ``file:line:col`` alone; any
    other is its own one-line message (it names what the tool was given, or a file and why it
    cannot be used)."""
    if getattr(err, "quotes_build_time_text", False) and getattr(err, "line", None) is not None:
        where = f"{err.path}:{err.line}" + (f":{err.column}" if getattr(err, "column", None) is not None else "")
        return (f"{where}: a bad row in this file stops this tool, so nothing was written "
                "(memory-router doctor names the row and the fix)")
    return str(err)


def index_result(text):
    """The cluster index resource: cluster ids, sizes, tags and labels."""
    return text
