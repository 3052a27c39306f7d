"""Built + enriched against hand + enriched (issue 21 item 6), on both held-out stores.

For each held-out store (benchmarks/heldout, Gullwing; benchmarks/heldout2, Thistledown), in a
temp directory:

- **hand**: the store's hand-made clusters.md;
- **built**: `memory-router clusters build --memory-dir <store>/memory` (the builder's own names:
  no engine can be called here, so the naming step of `clusters build --engine` is not in this
  figure);

each with and without the blind utterances of benchmarks/enrichment/ (written by a model that saw
only the cluster file, never the prompts; benchmarks/enrichment/README.md) as its utterances
file, keyed by slug, so the same words serve both cluster files. The held-out suite is run with
--facts-only (a built file does not share the hand-made ids) through the default provider, as
the hook routes: fact recall and false priming, per prompt kind (a case's first tag) and overall.

    python benchmarks/enrich_built.py [--json]

Held-out prompts: measured on, never fitted on. No target: a report.
"""

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from canaries.metrics import fact_recall  # noqa: E402
from canaries.runner import run_cases  # noqa: E402
from canaries.suite import load_suite  # noqa: E402
from harness.cli import main as cli_main  # noqa: E402
from router.config import default_settings, utterances_path  # noqa: E402
from router.providers.provider import build_table  # noqa: E402
from utterancefiles import write_utterances_file  # noqa: E402

STORES = {
    "gullwing": ("heldout", "heldout.yaml", "heldout-gullwing.tsv"),
    "thistledown": ("heldout2", "heldout2.yaml", "heldout2-thistledown.tsv"),
}


def build_into(memory_dir, out):
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(["clusters", "build", "--memory-dir", memory_dir, "--out", out, "--json"])
    if code != 0:
        raise SystemExit(f"clusters build failed (exit {code})")
    return json.loads(quiet.getvalue())


def figures(results):
    kinds = {}
    for result in results:
        kinds.setdefault(result.case.tags[0] if result.case.tags else "-", []).append(result)
    out = {}
    for kind, group in sorted(kinds.items()) + [("all", results)]:
        silent = [r for r in group if r.case.silent is True]
        facts = fact_recall(group)
        out[kind] = {"cases": len(group), "fact_recall": facts["recall"] if facts["facts"] else None,
                     "false_priming": sum(1 for r in silent if r.routed) / len(silent) if silent else None}
    return out


def run(cluster_path, suite_path):
    suite = load_suite(suite_path, cluster_path=cluster_path, facts_only=True)
    return figures(run_cases(suite.cases, build_table(suite.index), default_settings()))


def measure():
    report = {}
    for name, (folder, suite_name, blind_name) in STORES.items():
        store = os.path.join(HERE, folder)
        memory_dir = os.path.join(store, "memory")
        suite_path = os.path.join(store, suite_name)
        blind = os.path.join(HERE, "enrichment", blind_name)
        with tempfile.TemporaryDirectory(prefix="enrich-built-") as directory:
            hand = os.path.join(directory, "hand", "clusters.md")
            os.makedirs(os.path.dirname(hand))
            shutil.copyfile(os.path.join(store, "clusters.md"), hand)
            built = os.path.join(directory, "built", "clusters.md")
            summary = build_into(memory_dir, built)
            row = {"built_clusters": len(summary["clusters"])}
            for label, path in (("hand", hand), ("built", built)):
                row[label] = run(path, suite_path)
                write_utterances_file(blind, path, memory_dir=memory_dir)
                row[label + "+utterances"] = run(path, suite_path)
                os.remove(utterances_path(path))
            report[name] = row
    return report


def _fmt(value):
    return "-" if value is None else f"{value:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = measure()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, row in report.items():
        print(f"{name} (built: {row['built_clusters']} clusters); fact recall / false priming")
        kinds = [k for k in row["hand"] if k != "all"] + ["all"]
        print(f"  {'kind':<12}" + "".join(f"{label:>20}" for label in ("hand", "hand+utterances", "built",
                                                                        "built+utterances")))
        for kind in kinds:
            cells = []
            for label in ("hand", "hand+utterances", "built", "built+utterances"):
                figure = row[label][kind]
                cells.append(f"{_fmt(figure['fact_recall'])} / {_fmt(figure['false_priming'])}")
            print(f"  {kind:<12}" + "".join(f"{cell:>20}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
