"""Benchmark (issue 39): ``tokens report``'s modelled session against the real client.

On each bundled held-out store (``benchmarks/heldout``, ``benchmarks/heldout2``), the same
prompts (the store's ``session-60.txt``) two ways, in one run:

* **lab**: the real Claude Code 2.1.328 client, offline against the loopback stand-in
  (``benchmarks/session_bytes.py --store NAME``'s sessions: the flat MEMORY.md, no hook; the slim
  MEMORY.md plus the router with the store's blind utterances and near-misses beside its cluster
  file); memory bytes measured from the request bodies (the MEMORY.md section plus every routed
  context, new or re-sent), main thread;
* **model**: ``tokens report``'s modelled session (``harness.tokens.modelrun.model_prompt_set``:
  the hook's own route and session stage) over the same prompts in the same order, counted in
  UTF-8 bytes, with the flat index's loaded part and the slim index ``slim render`` writes; the
  lab's own API calls per prompt, and its context growth (the stand-in's replies are short, so no
  compaction happens in 60 prompts there; the model is given the growth the lab measured, so it
  compacts where the lab would).

Printed per store: slim + router's cumulative share of flat at 20, 40 and 60 prompts, lab and
model side by side, and the model's worst case. Target (exit 1 when missed): the model within
``TOLERANCE`` (0.05) of the lab at every checkpoint.

    python benchmarks/token_model.py [--store heldout heldout2] [--prompts 60] [--claude PATH] [--json]

The lab needs the client (``tests/support/realclient.py`` installs it into the lab cache; or pass
``--claude``). About 3 minutes a store on an idle 2-core machine.
"""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

CHECKPOINTS = (20, 40, 60)
TOLERANCE = 0.05
STORES = ("heldout", "heldout2")


def byte_counter():
    from harness.tokens.counts import TokenCounter

    return TokenCounter("bytes", "UTF-8 bytes (to compare with the lab's request bytes)",
                        lambda text: len(text.encode("utf-8")))


def lab_shares(analyses, checkpoints):
    """``({n: share}, calls per prompt)`` from the lab: slim + router's main-thread memory bytes
    over flat's, summed over the calls of the first ``n`` prompts."""
    def per_prompt(mode):
        totals = {}
        for call in analyses[mode]["calls"]:
            if call.get("thread") == "main" and call.get("prompt_index") is not None:
                totals[call["prompt_index"]] = totals.get(call["prompt_index"], 0) + call["memory_bytes"]
        return totals

    flat, slim = per_prompt("flat"), per_prompt("slim")
    shares = {}
    for n in checkpoints:
        f = sum(v for k, v in flat.items() if k < n)
        s = sum(v for k, v in slim.items() if k < n)
        shares[n] = round(s / f, 3) if f else None
    main_calls = [c for c in analyses["slim"]["calls"] if c.get("thread") == "main" and not c.get("compaction")]
    prompts = len({c["prompt_index"] for c in main_calls if c.get("prompt_index") is not None}) or 1
    return shares, max(1, round(len(main_calls) / prompts))


def lab_growth(analyses):
    """``(base, per prompt)`` in bytes: the none session's first request, and how much its
    requests grew per prompt (what the stand-in's replies add)."""
    calls = [c for c in analyses["none"]["calls"] if c.get("thread") == "main"]
    if len(calls) < 2:
        return calls[0]["request_bytes"] if calls else 0, 0
    prompts = max(1, (calls[-1]["prompt_index"] or 0) - (calls[0]["prompt_index"] or 0))
    return calls[0]["request_bytes"], max(0, (calls[-1]["request_bytes"] - calls[0]["request_bytes"]) // prompts)


def model_shares(store, prompts, checkpoints, calls_per_prompt, base, per_prompt, threshold):
    """The model's ``({n: share}, {n: worst share}, inputs)`` over ``prompts`` in order."""
    from canaries.memoryindex import claude_code_loaded
    from harness.slim.index import assemble_slim_index, build_hot_strip, render_layer0_router
    from harness.tokens import modelrun, sessionmodel
    from router.config import settings_of
    from router.configfile import load_config
    from router.providers.provider import build_table
    from router.store.clusterfile import load_cluster_file

    config = load_config(store["config"])
    settings = settings_of(config)
    index = load_cluster_file(store["clusters"])
    with open(store["flat_index"], encoding="utf-8") as handle:
        flat_text = claude_code_loaded(handle.read())[0]
    slim_text = claude_code_loaded(assemble_slim_index(build_hot_strip(index, config["hot_strip"]),
                                                       render_layer0_router(index)))[0]
    counter = byte_counter()
    flat, slim = counter.count(flat_text), counter.count(slim_text)
    table = build_table(index)
    compaction = {"base": base, "per_prompt": per_prompt, "threshold": threshold}
    shares, worst = {}, {}
    for n in checkpoints:
        # The model's own prompt order is a spread order; here the lab's order is the one to match.
        sender = modelrun.RoutedSender(prompts[:n], table, settings, store["clusters"], counter)
        steps = sessionmodel.run_session(n, sender.send, sender.compact, slim, calls_per_prompt, **compaction)
        shares[n] = sessionmodel.session_totals(steps, flat, slim)["share_of_flat"]
        bad = modelrun.WorstSender(index, settings, counter)
        steps = sessionmodel.run_session(n, bad.send, bad.compact, slim, calls_per_prompt, **compaction)
        worst[n] = sessionmodel.session_totals(steps, flat, slim)["share_of_flat"]
    return shares, worst, {"flat_bytes": flat, "slim_bytes": slim, "calls_per_prompt": calls_per_prompt,
                           "compaction": compaction}


def run_store(name, count, claude, run_dir):
    import session_bytes
    from harness.tokens.sessionmodel import AUTOCOMPACT_AT

    analyses, seconds, prompts = session_bytes.run_heldout(run_dir, name, count, claude)
    store, _prompts = session_bytes.heldout_setup(name, os.path.join(run_dir, "model"))
    checkpoints = tuple(n for n in CHECKPOINTS if n <= len(prompts))
    lab, calls = lab_shares(analyses, checkpoints)
    base, growth = lab_growth(analyses)
    # The lab's bytes in the model's units (the model's threshold is in tokens; here everything is bytes).
    model, worst, inputs = model_shares(store, prompts, checkpoints, calls, base, growth, AUTOCOMPACT_AT * 4)
    misses = [f"{name} at {n}: model {model[n]} vs lab {lab[n]}" for n in checkpoints
              if lab[n] is None or model[n] is None or abs(model[n] - lab[n]) > TOLERANCE]
    return {"store": name, "prompts": len(prompts), "lab": lab, "model": model, "worst": worst,
            "model_inputs": inputs, "lab_memory_md_bytes": {mode: analyses[mode]["calls"][0]["memory_md_bytes"]
                                                          for mode in ("flat", "slim")},
            "lab_compactions": sum(1 for c in analyses["slim"]["calls"] if c.get("compaction")),
            "seconds": seconds, "missed": misses}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", nargs="+", choices=STORES, default=list(STORES))
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--claude", metavar="PATH")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from harness.lab.client import find_claude

    claude = find_claude(args.claude)[0]
    results = []
    for name in args.store:
        with tempfile.TemporaryDirectory(prefix="token-model-") as tmp:
            results.append(run_store(name, args.prompts, claude, tmp))
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    else:
        for r in results:
            print(f"{r['store']}: {r['prompts']} prompts; slim + router's cumulative memory bytes as a share of "
                  f"flat's (lab: real client; model: tokens report's session model, in bytes)")
            for n in sorted(r["lab"]):
                print(f"  after {n:>3} prompts: lab {r['lab'][n]:.3f}  model {r['model'][n]:.3f}  "
                      f"(worst case {r['worst'][n]:.3f})")
            print(f"  lab compactions {r['lab_compactions']}; model inputs {r['model_inputs']}")
            for miss in r["missed"]:
                print(f"  MISSED: {miss} (tolerance {TOLERANCE})")
    return 1 if any(r["missed"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
