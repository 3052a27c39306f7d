"""Memory bytes over a whole session, simulated in-process the way Claude Code 2.1.328 re-sends
history (issue 13), for the flat MEMORY.md against the slim index plus the router.

Observed (../shared/spec/claude-code-2.1.328-observed.md): MEMORY.md is sent once in every request;
every hook context stays in the history and is re-sent with every later request until the context
is compacted; after compaction the earlier contexts are gone (the router's SessionStart hook sends
again the lines the last prompt relied on) and MEMORY.md is sent again. So, one
request per prompt (tool round trips would multiply both sides alike), the memory bytes of call n:

    flat          the part of the flat MEMORY.md Claude Code loads (200 lines / 25,000 bytes)
    slim+router   the slim MEMORY.md + every injection since the last compaction, this one included,
                  each as it lands in the request (``UserPromptSubmit hook additional context: <text>``)

The router runs through the hook's own code: ``router.providers.provider.route`` (the configured provider), then
``router.hooks.session.session_step`` (de-duplication on) or ``router.routing.injection.plan_injection`` with nothing held
(off); a compaction resets the session record as the SessionStart hook does.

Variants (``VARIANTS``): the hook before issue 13 (every line of the routed clusters, up to
line_cap, sent again each time); the line selection alone; de-duplication alone; both (the
default); and both with a one-line pointer, instead of nothing, for a prompt whose chosen lines
the session already holds.

Runs, each twice: on the cluster file alone, and "+ utterances" (the bundled store's shipped
utterances; for the held-out store the blind file benchmarks/enrichment/heldout-gullwing.tsv,
written by a model given only its cluster file):
  example       the bundled example store, the first 60 prompts of canaries/example.yaml as one session
  heldout-60    benchmarks/heldout (never used to fit anything), session-60.txt
  heldout-200   session-200.txt with one compaction (after prompt --compact-after, default 100)

Also in the same run: fact recall (``canary eval``'s definition) before and after, on the bundled
suites (what the default was chosen on) and on the held-out suite (measured only), and a scan of
lines_per_injection.

    python benchmarks/session_sim.py [--json]

Targets (issue 13): slim+router (default settings) <= 0.40x flat over 60 prompts, <= 0.50x over
200 with one compaction, and no call's memory bytes above flat's.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from canaries.metrics import fact_recall  # noqa: E402
from canaries.suite import bundled_suites, load_suite  # noqa: E402
from canaries.runner import run_suite  # noqa: E402
from harness.slim.index import assemble_slim_index, build_hot_strip, render_layer0_router  # noqa: E402
from harness.tokens.counts import loaded_portion  # noqa: E402
from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.config import bundled_cluster_file, bundled_example_dir, bundled_flat_index, default_settings  # noqa: E402
from router.configfile import parse_config_file  # noqa: E402
from router.providers.provider import route  # noqa: E402
from router.routing.score import build_routing_table  # noqa: E402
from router.routing.weightedtable import extend_table  # noqa: E402
from router.routing.injection import plan_injection, pointer_text  # noqa: E402
from router.hooks.session import after_compaction, session_step  # noqa: E402
from router.hooks.sessionrecord import new_record  # noqa: E402

HELDOUT = os.path.join(HERE, "heldout")
HELDOUT_BLIND = os.path.join(HERE, "enrichment", "heldout-gullwing.tsv")
TARGETS = {"example": 0.40, "heldout-60": 0.40, "heldout-200": 0.50}
WITH = " + utterances"
SCAN = (0, 1, 2, 3, 4, 5, 6, 8)
# How 2.1.328 puts a UserPromptSubmit context in the request (observed doc, "The request").
REQUEST_PREFIX = "UserPromptSubmit hook additional context: "
SESSION_START_PREFIX = "SessionStart hook additional context: "


def in_request(text):
    return REQUEST_PREFIX + text


def _bytes(text):
    return len(text.encode("utf-8"))


def slim_text(index, config):
    return assemble_slim_index(build_hot_strip(index, config["hot_strip"]), render_layer0_router(index))


def simulate(prompts, table, settings, slim_bytes, dedup=True, pointer=False, compact_after=None, old=False):
    """Per-call memory bytes of slim+router over ``prompts`` in one session, and what was sent.
    ``old``: send the routing decision's own text, as the hook did before issue 13."""
    record = new_record("simulated", ["simulated", 0, 0])
    in_context = []
    per_call = []
    sent_lines = 0
    held_prompts = 0
    for number, prompt in enumerate(prompts, 1):
        decision = route(prompt, table, settings, log_as="bench")
        text = None
        if decision["additional_context"] is not None and old:
            text = decision["additional_context"]
            sent_lines += len(decision["lines"])
        elif decision["additional_context"] is not None:
            if dedup:
                plan, updated = session_step(record, decision, prompt, settings, now=float(number))
                record = updated or record
            else:
                plan = plan_injection(decision, prompt, settings)
            text = plan["text"]
            sent_lines += len(plan["lines"])
            if text is None and plan["held"]:
                held_prompts += 1
                if pointer:
                    text = pointer_text(plan["clusters"], len(plan["held"]))
        in_context.append(_bytes(in_request(text)) if text is not None else 0)
        per_call.append(slim_bytes + sum(in_context))
        if compact_after and number == compact_after:
            # The SessionStart hook sends again what the last prompt relied on the session holding,
            # and the session then holds just that.
            again, held = after_compaction(record, settings["max_context_chars"], float(number)) if dedup else (None, None)
            in_context = [_bytes(SESSION_START_PREFIX + again)] if again else []
            record = held or new_record("simulated", ["simulated", 0, 0])
    return {"per_call": per_call, "total": sum(per_call), "last": per_call[-1], "max": max(per_call),
            "lines_sent": sent_lines, "prompts_all_held": held_prompts}


NO_SELECTION = {"lines_per_injection": 0, "line_evidence_share": 0}
DEFAULT = 3  # the index of the default variant in ``VARIANTS``
# (label, settings overrides, de-duplication, pointer, the pre-issue-13 hook's own text)
VARIANTS = [
    ("before issue 13: every routed line, re-sent", NO_SELECTION, False, False, True),
    ("line selection only (default settings), no dedup", {}, False, False, False),
    ("dedup only (no line selection)", NO_SELECTION, True, False, False),
    ("line selection + dedup (the default)", {}, True, False, False),
    ("line selection + dedup, a pointer when all held", {}, True, True, False),
]


def table_of(index, utterances=None):
    """The routing table of ``index`` with ``utterances`` ({slug: texts}) or, for None, without any
    (whatever file lies beside the cluster file)."""
    return extend_table(build_routing_table(index), index, utterances=utterances or None)


def run_store(name, prompts, index, flat_text, slim, settings, compact_after=None, utterances=None):
    table = table_of(index, utterances)
    flat_loaded, _ = loaded_portion(flat_text)
    flat_call = _bytes(flat_loaded)
    flat_total = flat_call * len(prompts)
    slim_bytes = _bytes(slim)
    rows = []
    for label, overrides, dedup, pointer, old in VARIANTS:
        result = simulate(prompts, table, dict(settings, **overrides), slim_bytes, dedup, pointer, compact_after, old)
        result.update(label=label, ratio=result["total"] / flat_total, last_ratio=result["last"] / flat_call,
                      max_ratio=result["max"] / flat_call)
        del result["per_call"]
        rows.append(result)
    scan = []
    for lines in SCAN:
        result = simulate(prompts, table, dict(settings, lines_per_injection=lines), slim_bytes, True, False,
                          compact_after)
        scan.append({"lines_per_injection": lines, "ratio": result["total"] / flat_total,
                     "last_ratio": result["last"] / flat_call})
    return {"run": name, "prompts": len(prompts), "compact_after": compact_after, "flat_bytes_per_call": flat_call,
            "flat_total": flat_total, "slim_bytes": slim_bytes, "variants": rows, "scan": scan,
            "target": TARGETS.get(name.split(WITH)[0])}


def recall(suite_paths, settings, utterances=None):
    """Fact recall per suite without line selection, with it, and by lines_per_injection; on the
    suite's cluster file alone, or with ``utterances`` ({slug: texts}; ``"beside"``: the file beside
    the cluster file, as the bundled store ships)."""
    out = {}
    for path in suite_paths:
        suite = load_suite(path)
        if utterances == "beside":
            from router.config import utterances_path
            from router.store.utterances import read_utterances, utterances_by_slug

            found = utterances_by_slug(read_utterances(utterances_path(suite.cluster_path)))
        else:
            found = utterances
        table = table_of(suite.index, found)
        before = fact_recall(run_suite(suite, dict(settings, **NO_SELECTION), table=table).results)
        after = fact_recall(run_suite(suite, settings, table=table).results)
        scan = {lines: fact_recall(run_suite(suite, dict(settings, lines_per_injection=lines),
                                             table=table).results)["injected"]
                for lines in SCAN}
        out[os.path.relpath(path, os.path.dirname(HERE))] = {
            "facts": before["facts"], "before": before["injected"], "after": after["injected"], "scan": scan}
    return out


def read_prompts(path):
    with open(path, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compact-after", type=int, default=100,
                        help="in heldout-200, compact the context after this prompt (default 100)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    settings = default_settings()

    example_config = parse_config_file(os.path.join(bundled_example_dir(), "memory-router.toml"))
    example_index = load_cluster_file(bundled_cluster_file())
    example_prompts = [case.prompt for case in load_suite(os.path.join(os.path.dirname(HERE), "canaries",
                                                                       "example.yaml")).cases[:60]]
    with open(bundled_flat_index(), encoding="utf-8") as handle:
        example_flat = handle.read()
    heldout_config = parse_config_file(os.path.join(HELDOUT, "memory-router.toml"))
    heldout_index = load_cluster_file(heldout_config["clusters"])
    with open(os.path.join(heldout_config["memory_dir"], "MEMORY.md"), encoding="utf-8") as handle:
        heldout_flat = handle.read()

    from router.config import utterances_path
    from router.store.utterances import read_utterances, utterances_by_slug
    from utterancefiles import read_blind

    shipped = utterances_by_slug(read_utterances(utterances_path(bundled_cluster_file())))
    blind = read_blind(HELDOUT_BLIND)
    runs = []
    for suffix, example_utterances, heldout_utterances in (("", None, None), (WITH, shipped, blind)):
        runs += [
            run_store("example" + suffix, example_prompts, example_index, example_flat,
                      slim_text(example_index, example_config), settings, utterances=example_utterances),
            run_store("heldout-60" + suffix, read_prompts(os.path.join(HELDOUT, "session-60.txt")), heldout_index,
                      heldout_flat, slim_text(heldout_index, heldout_config), settings,
                      utterances=heldout_utterances),
            run_store("heldout-200" + suffix, read_prompts(os.path.join(HELDOUT, "session-200.txt")), heldout_index,
                      heldout_flat, slim_text(heldout_index, heldout_config), settings,
                      compact_after=args.compact_after, utterances=heldout_utterances),
        ]
    heldout_suite = [os.path.join(HELDOUT, "heldout.yaml")]
    recalls = {"bundled (the default was chosen on these)": recall(bundled_suites(), settings),
               "bundled + utterances (the utterance method was chosen on these)":
                   recall(bundled_suites(), settings, "beside"),
               "held-out (measured only)": recall(heldout_suite, settings),
               "held-out + blind utterances (measured only)": recall(heldout_suite, settings, blind)}
    met = all(run["variants"][DEFAULT]["ratio"] <= run["target"] and run["variants"][DEFAULT]["max_ratio"] <= 1.0
              for run in runs)
    if args.json:
        print(json.dumps({"settings": settings, "runs": runs, "fact_recall": recalls, "targets_met": met}, indent=2))
        return 0 if met else 1
    for run in runs:
        print(f"\n{run['run']}: {run['prompts']} prompts, one request each"
              + (f", compaction after prompt {run['compact_after']}" if run["compact_after"] else "")
              + f"; flat {run['flat_bytes_per_call']:,} B per call ({run['flat_total']:,} B), "
                f"slim {run['slim_bytes']:,} B")
        print(f"  {'slim+router variant':58} {'total B':>10} {'x flat':>7} {'last x':>7} {'max x':>6} "
              f"{'lines':>6} {'held':>5}")
        for row in run["variants"]:
            print(f"  {row['label']:58} {row['total']:10,} {row['ratio']:7.3f} {row['last_ratio']:7.3f} "
                  f"{row['max_ratio']:6.3f} {row['lines_sent']:6} {row['prompts_all_held']:5}")
        default = run["variants"][DEFAULT]
        verdict = "met" if default["ratio"] <= run["target"] and default["max_ratio"] <= 1.0 else "MISSED"
        print(f"  target: <= {run['target']:.2f}x flat, no call above flat: {verdict} "
              f"({default['ratio']:.3f}x, largest call {default['max_ratio']:.3f}x flat)")
        print("  scan (dedup on): " + ", ".join(f"{s['lines_per_injection']}: {s['ratio']:.3f}x" for s in run["scan"]))
    print("\nfact recall (canary eval: injects slugs sent to a fresh session), no line selection -> "
          f"lines_per_injection {settings['lines_per_injection']}, line_evidence_share "
          f"{settings['line_evidence_share']}")
    for group, suites in recalls.items():
        for path, row in suites.items():
            scan = ", ".join(f"{k}: {v}" for k, v in row["scan"].items())
            print(f"  {group}: {path}: {row['before']}/{row['facts']} -> {row['after']}/{row['facts']}  "
                  f"(by lines_per_injection: {scan})")
    print(f"\ntargets {'met' if met else 'MISSED'}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
