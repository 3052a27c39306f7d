"""Head to head with Claude Code's own memory selector (``memory-router lab run --compare native``).

One store, the same prompts, three sessions of the real client:

- ``flat``: the flat MEMORY.md, no hook;
- ``native``: the client's built-in selector turned on (``CLAUDE_MEMORY_STORES``), which drops
  the MEMORY.md index and, per prompt, asks a model (a side request) which topic files to recall;
  the stand-in answers those side requests as an **oracle**, picking the file that holds the
  prompt's labelled fact: the selector at its best;
- ``router``: the slim MEMORY.md and memory-router's hook.

The store is the bundled cluster file's members written as topic files with the frontmatter the
selector reads (``name``, ``description``, ``type``). Every prompt's turn has the same shape in
all three runs: the first reply is one ``Read`` (the selector's recall reaches a request only
after a tool result of the same turn, observed with 2.1.328) held about a second (the side
request leaves about 10 ms after the main one), then a text answer.

From the request bodies alone (``analyze``, pure): memory bytes per main call and per session
(the MEMORY.md section, hook contexts and recalled files, wherever they sit), the selector's own
side-request bytes, model calls per prompt, whether the prompt's fact reached the main request
before the model's first answer, only after a tool result, or never, and the fact delivery rate.
"""

import json
import os

from harness.lab import measure
from harness.lab.requestbody import message_texts, system_texts
from router.safeio import open_regular

SELECTOR_MARK = "You are selecting memories"
RECALL_MARK = "Retrieved for possible relevance"
SELECTOR_VARIABLE = "CLAUDE_MEMORY_STORES"
CLAUDE_TYPES = ("user", "feedback", "project", "reference")
HOLD_SECONDS = 1.0
RUNS = (
    # name, memory mode, router hook, extra client environment
    ("flat", "flat", False, {}),
    ("native", "flat", False, {SELECTOR_VARIABLE: "1"}),
    ("router", "slim", True, {}),
)
LABELS = {"flat": "flat MEMORY.md", "native": "built-in selector (oracle)", "router": "slim + memory-router"}


def bundled_example_suite():
    import canaries

    return os.path.join(os.path.dirname(canaries.__file__), "example.yaml")


def labelled_prompts(suite_path, limit=0):
    """``[(prompt, slug)]``: the suite's cases that name exactly one fact (``injects: [slug]``)."""
    from canaries.suite import load_suite_unchecked

    pairs = [(case.prompt, case.injects[0]) for case in load_suite_unchecked(suite_path).cases
             if len(case.injects) == 1 and case.prompt.strip()]
    return pairs[:limit] if limit else pairs


def topic_files(index):
    """``{file name: text}``: one topic file per member, frontmatter as the client reads it. The
    description is a double-quoted YAML string (JSON's escapes are YAML's), so a ` #` in a hook
    is not cut as a comment."""
    files = {}
    for member in index.members:
        kind = member.type if member.type in CLAUDE_TYPES else "reference"
        files[f"{member.slug}.md"] = (f"---\nname: {member.slug}\ndescription: {json.dumps(member.hook)}\n"
                                      f"type: {kind}\n---\n{member.hook}\n")
    return files


def write_topic_files(memory_dir, index):
    for name, text in topic_files(index).items():
        with open_regular(os.path.join(memory_dir, name), "w", encoding="utf-8") as handle:
            handle.write(text)


def oracle_rules(pairs, read_path):
    """The stand-in's rules: each selector side request answered with the file holding its
    prompt's fact (an empty choice for anything else), each prompt's first main reply one held
    ``Read`` of ``read_path``, the reply after the tool result a text answer."""
    rules = [{"when": {"system_contains": SELECTOR_MARK, "prompt_contains": prompt},
              "reply": {"text": json.dumps({"selected_memories": [f"{slug}.md"]})}, "times": 0}
             for prompt, slug in pairs]
    rules.append({"when": {"system_contains": SELECTOR_MARK},
                  "reply": {"text": json.dumps({"selected_memories": []})}, "times": 0})
    rules.append({"when": {"after_tool_result": False},
                  "reply": {"text": "Checking.", "tool_use": {"name": "Read", "input": {"file_path": read_path}},
                            "pause": HOLD_SECONDS}, "times": 0})
    rules.append({"when": {"after_tool_result": True}, "reply": {"text": "Done."}, "times": 0})
    return rules


# --------------------------------------------------------------------------- measuring


def _texts(body):
    texts = list(system_texts(body))
    for message in body.get("messages") or []:
        texts.extend(message_texts(message))
    return texts


def memory_carriers(body):
    """Every piece of memory text in one request: ``[(kind, text)]``, kind ``index`` (a MEMORY.md
    section), ``hook`` (a hook context) or ``recall`` (a file the selector recalled)."""
    found = []
    for text in _texts(body):
        found.extend(("index", section["text"]) for section in measure.memory_sections(text))
        found.extend(("hook", context) for _marker, context in measure.harvest_contexts(text))
        if text.startswith(RECALL_MARK):
            found.append(("recall", text))
    return found


def is_selector_request(body):
    return any(SELECTOR_MARK in text for text in system_texts(body))


def analyze(records, pairs, facts):
    """The figures of one run. ``pairs``: ``[(prompt, slug)]`` in prompt order; ``facts``:
    ``{slug: text}`` (the member line's hook text, which every carrier holds verbatim)."""
    calls, side = [], []
    for record in records:
        body, _error = measure.parse_record(record)
        if body is None or "count_tokens" in str(record.get("path")) or record.get("prompt_index") is None:
            continue
        if is_selector_request(body):
            side.append({"prompt_index": record["prompt_index"], "bytes": record.get("bytes") or 0})
            continue
        carriers = memory_carriers(body)
        calls.append({"seq": record.get("seq"), "prompt_index": record["prompt_index"],
                      "bytes": record.get("bytes") or 0,
                      "memory_bytes": sum(measure.utf8_len(text) for _kind, text in carriers),
                      "kinds": sorted({kind for kind, _text in carriers}),
                      "carried": "\n".join(text for _kind, text in carriers)})
    prompts = []
    for index, (prompt, slug) in enumerate(pairs):
        mine = [c for c in calls if c["prompt_index"] == index]
        fact = facts.get(slug)
        where = "never"
        if mine and fact and fact in mine[0]["carried"]:
            where = "first"
        elif fact and any(fact in c["carried"] for c in mine[1:]):
            where = "after tool result"
        prompts.append({"index": index, "slug": slug, "main_calls": len(mine),
                        "side_calls": sum(1 for s in side if s["prompt_index"] == index), "fact": where})
    for call in calls:
        del call["carried"]
    n = max(len(pairs), 1)
    memory = [c["memory_bytes"] for c in calls]
    return {
        "calls": calls, "prompts": prompts,
        "summary": {
            "prompts": len(pairs),
            "main_calls": len(calls),
            "memory_bytes_per_call": round(sum(memory) / len(memory)) if memory else 0,
            "memory_bytes_last_call": memory[-1] if memory else 0,
            "memory_bytes_session": sum(memory),
            "side_calls": len(side),
            "side_bytes_session": sum(s["bytes"] for s in side),
            "side_bytes_per_prompt": round(sum(s["bytes"] for s in side) / n),
            "model_calls_per_prompt": round((len(calls) + len(side)) / n, 2),
            "fact_first": sum(1 for p in prompts if p["fact"] == "first"),
            "fact_after_tool_result": sum(1 for p in prompts if p["fact"] == "after tool result"),
            "delivery_rate": round(sum(1 for p in prompts if p["fact"] != "never") / n, 3),
        },
    }


def table(results):
    """Markdown rows of the comparison (``results``: ``{run name: analyze(...)}``)."""
    rows = [("memory bytes per main call (mean)", "memory_bytes_per_call"),
            ("memory bytes, last main call", "memory_bytes_last_call"),
            ("memory bytes per session", "memory_bytes_session"),
            ("selector side-request bytes per session", "side_bytes_session"),
            ("model calls per prompt", "model_calls_per_prompt"),
            ("fact in the request before the first answer", "fact_first"),
            ("fact only after a tool result", "fact_after_tool_result"),
            ("fact delivery rate", "delivery_rate"),
            ("seconds per prompt (wall; each first answer held 1 s)", "seconds_per_prompt")]
    names = [name for name, *_ in RUNS if name in results]
    lines = ["| | " + " | ".join(LABELS[n] for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, key in rows:
        if all(results[name]["summary"].get(key) is None for name in names):
            continue
        cells = []
        for name in names:
            value = results[name]["summary"].get(key)
            if value is None:
                cells.append("")
                continue
            if key in ("fact_first", "fact_after_tool_result"):
                cells.append(f"{value}/{results[name]['summary']['prompts']}")
            elif isinstance(value, float):
                cells.append(f"{value:g}")
            else:
                cells.append(f"{value:,}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- running


def run_compare(run_dir, pairs, claude, clusters=None, timeout=None, on_prompt=None, runs=RUNS, store_files=False):
    """The three sessions under ``run_dir/<name>``; returns ``{name: analyze(...)}`` and writes
    ``run_dir/compare.json``. ``store_files``: as ``run_session``'s."""
    from harness.lab.runner import DEFAULT_PROMPT_TIMEOUT, run_session
    from harness.lab.script import Script
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file

    index = load_cluster_file(clusters or bundled_cluster_file())
    facts = {member.slug: member.hook for member in index.members}
    prompts = [prompt for prompt, _slug in pairs]
    results = {}
    for name, memory, hook, env in runs:
        target = os.path.join(run_dir, name)
        read_path = os.path.join(os.path.abspath(target), "project", "README.md")

        def prepare(paths):
            with open_regular(os.path.join(paths.project, "README.md"), "w", encoding="utf-8") as handle:
                handle.write("A project of the lab's comparison run.\n")
            write_topic_files(paths.memory_dir, index)

        result = run_session(target, prompts, memory, Script(oracle_rules(pairs, read_path)), claude,
                             clusters=clusters, hook=hook, prepare=prepare, env=dict(env), store_files=store_files,
                             timeout=timeout or DEFAULT_PROMPT_TIMEOUT,
                             on_prompt=None if on_prompt is None else (lambda i, t, p, n=name: on_prompt(n, i, t, p)))
        analysis = analyze(measure.read_log(result.request_log), pairs, facts)
        seconds = [o.seconds for o in result.outcomes]
        analysis["summary"]["seconds_per_prompt"] = round(sum(seconds) / len(seconds), 2) if seconds else 0
        analysis["ok"] = result.ok
        analysis["failed_prompts"] = [o.index for o in result.outcomes if o.exit_code != 0]
        results[name] = analysis
    with open_regular(os.path.join(run_dir, "compare.json"), "w", encoding="utf-8") as handle:
        json.dump({"pairs": pairs, "results": results}, handle, indent=1)
    return results
