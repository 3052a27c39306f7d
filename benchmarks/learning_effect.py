"""What `memory-router learn` does to routing: scripted lab sessions in, suite figures before and after out.

Each lab session is a real-shaped 2.1.328 transcript in which the user asks something in words the
router does not route, and the agent then Reads one memory file. The sessions go through the
real path (`memory-router learn DIR`: transcripts.evidence, router.store.feedback.add_feedbacks, the
learned file beside a copy of the cluster file), then every suite of the store is routed before
and after, once per provider: the default `weighted` provider, reading the learned file as the hook
does (`router.providers.provider.build_table(index, learned_terms=...)`: a learned word counts like a word
of the memory's own line); and spec §10's scorer with the learned terms merged
(`router.store.learned.merge_learned_postings`) and counted like member words (weight =
member_weight, a third of a tag's). Printed per suite and per prompt kind (a case's first tag):
cluster hit (cases with routes_to that routed all of them), fact recall, false priming, and the
cases whose routing changed.

The lab prompts below were written from the member lines of each store only, before this script
was first run, and never changed after: they are not the suites' prompts, and nothing is fitted
on the held-out suite (benchmarks/heldout/README.md). A lab prompt that already routes to its
memory teaches nothing (the read is of an injected memory) and is reported as such.

    python benchmarks/learning_effect.py [--provider weighted,spec] [--json]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from canaries.runner import run_cases  # noqa: E402
from canaries.suite import load_suite  # noqa: E402
from router.config import DEFAULTS, bundled_cluster_file  # noqa: E402
from router.config import learned_path  # noqa: E402
from router.store.learned import merge_learned_postings, read_learned, terms_by_slug  # noqa: E402
from router.providers.provider import build_table, route  # noqa: E402
from router.routing.score import build_routing_table  # noqa: E402

PROVIDERS = ("weighted", "spec")

EXAMPLE_DIR = os.path.dirname(bundled_cluster_file())
REPO = os.path.dirname(HERE)

STORES = {
    "example": {
        "clusters": bundled_cluster_file(),
        "suites": [os.path.join(REPO, "canaries", name) for name in ("spec.yaml", "example.yaml", "paraphrase.yaml")],
        "lab": [
            ("the antivirus makes installing packages painfully slow", "env_defender_excludes_dev_dir"),
            ("my nightly supplier import shows garbled letters", "env_supplier_csv_encoding"),
            ("the invoices page times out when the export job runs", "env_workers_cpu_limit_image_resize"),
        ],
    },
    "heldout": {
        "clusters": os.path.join(HERE, "heldout", "clusters.md"),
        "suites": [os.path.join(HERE, "heldout", "heldout.yaml")],
        "lab": [
            ("players on the phone get 404 for every download after the release", "env_addressables_profile_variable"),
            ("the game goes quiet when the mute toggle on the side of the handset is flipped",
             "env_fmod_ios_silent_switch"),
            ("props from the 3d modelling app come in huge and turned sideways", "feedback_blender_export_scale"),
            ("the android store says that build number was taken already", "env_play_version_code"),
            ("editor hangs forever on the importing spinner", "env_unity_library_rebuild"),
        ],
    },
}


def lab_transcript(prompt, slug, session_id, minute, injected=None):
    """Lines in the 2.1.328 shape: the typed prompt, the router's injection (``injected``, the text
    today's router gives the prompt, if any), the agent's Read of the memory file, its result."""
    stamp = f"2026-11-30T10:{minute:02d}:00.000Z"
    base = {"isSidechain": False, "userType": "external", "entrypoint": "cli", "cwd": "/home/dev/code/demo",
            "sessionId": session_id, "version": "2.1.328", "gitBranch": "main", "timestamp": stamp}
    prompt_id, read_id, result_id = (str(uuid.uuid4()) for _ in range(3))
    tool_id = "toolu_" + uuid.uuid4().hex[:24]
    path = f"/home/dev/.claude/projects/-home-dev-code-demo/memory/{slug}.md"
    lines = [dict(base, parentUuid=None, type="user", uuid=prompt_id, promptSource="typed",
                  message={"role": "user", "content": prompt})]
    if injected:
        lines.append(dict(base, parentUuid=prompt_id, type="attachment", uuid=str(uuid.uuid4()),
                          attachment={"type": "hook_additional_context", "content": [injected],
                                      "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                                      "toolUseID": "hook-" + str(uuid.uuid4())}))
    lines += [
        dict(base, parentUuid=prompt_id, type="assistant", uuid=read_id,
             message={"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                      "content": [{"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": path}}]}),
        dict(base, parentUuid=read_id, type="user", uuid=result_id,
             message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "body"}]}),
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def with_learned_as_members(table, learned):
    """The spec table with learned terms merged and then counted like member words, so spec §10's
    own route_prompt scores them (at member_weight)."""
    merged = merge_learned_postings(table, learned)
    members = dict(merged["member_postings"])
    for term, positions in merged["learned_postings"].items():
        members[term] = tuple(sorted(set(members.get(term, ())) | set(positions)))
    merged["member_postings"] = members
    return merged


def figures(results):
    routed_cases = [r for r in results if r.case.routes_to]
    silent = [r for r in results if r.case.silent is True]
    facts = [(r, slug) for r in results for slug in r.case.injects]

    def share(hits, total):
        return round(hits / total, 3) if total else None

    return {"cases": len(results),
            "cluster_hit": share(sum(1 for r in routed_cases if set(r.case.routes_to) <= set(r.routed)),
                                 len(routed_cases)),
            "fact_recall": share(sum(1 for r, slug in facts if slug in r.injected), len(facts)),
            "false_priming": share(sum(1 for r in silent if r.routed), len(silent))}


def tables(provider, index, learned=None):
    """The routing table ``provider`` reads, without learned terms (``learned`` None) or with them."""
    if provider == "spec":
        table = build_routing_table(index)
        return table if learned is None else with_learned_as_members(table, learned)
    return build_table(index, learned_terms=learned)


def measure(name, store, workdir, provider="weighted"):
    from harness.cli import main as cli

    root = os.path.join(workdir, f"{name}-{provider}")
    sessions = os.path.join(root, "sessions")
    os.makedirs(sessions)
    cluster_file = os.path.join(root, os.path.basename(store["clusters"]))
    shutil.copy(store["clusters"], cluster_file)
    config = os.path.join(root, "memory-router.toml")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(f'clusters = "{os.path.basename(cluster_file)}"\nlearning = true\n')
    settings = dict(DEFAULTS, provider=provider)
    from router.store.clusterfile import load_cluster_file

    index = load_cluster_file(cluster_file)
    table = tables(provider, index)
    lab_before = []
    for number, (prompt, slug) in enumerate(store["lab"]):
        decision = route(prompt, table, settings)
        lab_before.append(decision["routed"])
        with open(os.path.join(sessions, f"lab-{number}.jsonl"), "w", encoding="utf-8") as handle:
            handle.write(lab_transcript(prompt, slug, str(uuid.uuid4()), number, decision["additional_context"]))
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = cli(["learn", sessions, "--config", config])
        finally:
            sys.stdout = stdout
    if code != 0:
        raise SystemExit(f"memory-router learn exited {code}")
    learned = terms_by_slug(read_learned(learned_path(cluster_file)))
    after_table = tables(provider, index, learned)
    lab_after = [route(p, after_table, settings)["routed"] for p, _slug in store["lab"]]
    report = {"store": name, "provider": provider, "learned_terms": sum(len(t) for t in learned.values()),
              "lab": [{"prompt": p, "slug": s, "routed_before": b, "routed_after": a}
                      for (p, s), b, a in zip(store["lab"], lab_before, lab_after)], "suites": []}
    for suite_path in store["suites"]:
        if not os.path.exists(suite_path):
            continue
        suite = load_suite(suite_path, cluster_path=cluster_file)
        before = run_cases(suite.cases, table, settings)
        after = run_cases(suite.cases, after_table, settings)
        kinds = sorted({r.case.tags[0] if r.case.tags else "-" for r in before})
        per_kind = {}
        for kind in kinds:
            pick = [i for i, r in enumerate(before) if (r.case.tags[0] if r.case.tags else "-") == kind]
            per_kind[kind] = {"before": figures([before[i] for i in pick]), "after": figures([after[i] for i in pick])}
        changed = [{"id": b.case.id, "before": list(b.routed), "after": list(a.routed),
                    "expected": list(b.case.routes_to or ()), "silent": b.case.silent}
                   for b, a in zip(before, after) if b.routed != a.routed]
        report["suites"].append({"suite": os.path.relpath(suite_path, REPO), "before": figures(before),
                                 "after": figures(after), "per_kind": per_kind, "changed": changed})
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--provider", default=",".join(PROVIDERS),
                        help="comma-separated providers to measure (default: %(default)s)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    providers = [p for p in args.provider.split(",") if p]
    unknown = sorted(set(providers) - set(PROVIDERS))
    if unknown:
        parser.error(f"unknown provider {', '.join(unknown)}; use {', '.join(PROVIDERS)}")
    os.environ.setdefault("MEMORY_ROUTER_NO_CACHE", "1")
    with tempfile.TemporaryDirectory() as workdir:
        reports = [measure(name, store, workdir, provider) for provider in providers for name, store in STORES.items()]
    if args.json:
        print(json.dumps(reports, indent=2))
        return 0
    for report in reports:
        print(f"== {report['store']}, {report['provider']}: {report['learned_terms']} learned terms from {len(report['lab'])} lab sessions")
        for lab in report["lab"]:
            print(f"  lab {lab['slug']}: routed before {lab['routed_before']}, after {lab['routed_after']}")
        for suite in report["suites"]:
            b, a = suite["before"], suite["after"]
            print(f"  {suite['suite']} ({b['cases']} cases): cluster hit {b['cluster_hit']} -> {a['cluster_hit']}, "
                  f"fact recall {b['fact_recall']} -> {a['fact_recall']}, "
                  f"false priming {b['false_priming']} -> {a['false_priming']}")
            for kind, pair in suite["per_kind"].items():
                kb, ka = pair["before"], pair["after"]
                if kb != ka:
                    print(f"    {kind}: hit {kb['cluster_hit']} -> {ka['cluster_hit']}, recall {kb['fact_recall']} -> "
                          f"{ka['fact_recall']}, false priming {kb['false_priming']} -> {ka['false_priming']}")
            for change in suite["changed"]:
                print(f"    changed {change['id']}: {change['before']} -> {change['after']} "
                      f"(expected {change['expected'] or 'silence' if change['silent'] else change['expected']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
