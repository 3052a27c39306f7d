"""Issue 35 item 8: every routing decision is independent of the hash seed.

The order of a set of strings changes with ``PYTHONHASHSEED``, and the order float sums are made
in decides their last bits: two exemplars (or two clusters) tied in exact arithmetic then rank
one way in one process and the other way in the next. Fresh processes, one per seed, each
compiling its own table and running the hook (``memory-router hook``'s entry point) over many
prompts, must print byte-identical output: the bundled suites on the example store, and a store
built so that the veto's nearest exemplars tie (utterances and near-misses drawn from twelve
words, so many of them share the prompt's words in equal measure)."""

import json
import os
import random
import subprocess
import sys

VOCAB = "deploy script staging cache token mirror rotate backup restore queue worker shard".split()
STORE = """\
## Layer 0 - Cluster Router

- c_ops · 2 · tags: deploy, staging · label: shipping the service
- c_data · 2 · tags: backup, restore · label: the data stores

## Layer 1 - Member Lines

### c_ops
- env_deploy_mirror - env; the deploy script pulls from the staging mirror, rotate its token monthly
- feedback_queue_worker - feedback; drain the queue worker before a deploy

### c_data
- env_backup_shard - env; each shard has its own backup; restore one shard at a time
- feedback_cache_restore - feedback; flush the cache after a restore
"""
SLUGS = ("env_deploy_mirror", "feedback_queue_worker", "env_backup_shard", "feedback_cache_restore")
# Low floors and no gate or protection, so the veto (k = 1: its single nearest exemplar) decides.
CONFIG = """\
clusters = "store.md"
utterance_floor = 2.0
weighted_floor = 2.0
utterance_coverage = 0.0
veto_strong = 0.0
veto_protect = 0.0
veto_k = 1
"""
STAMP = "2026-12-01T00:00:00Z"

CHILD = r"""
import io, json, sys
from canaries.suite import bundled_suites, load_suite
from router.hooks.compiled import compile_store
from router.hooks.hook import run_hook

jobs = json.loads(sys.stdin.read())
for path in bundled_suites():
    suite = load_suite(path)
    jobs.append({"clusters": suite.cluster_path, "cwd": None, "prompts": [c.prompt for c in suite.cases]})
out = []
for job in jobs:
    compile_store(job["clusters"])          # this process's own table: built under its own seed
    for prompt in job["prompts"]:
        payload = {"prompt": prompt}
        if job["cwd"]:
            payload["cwd"] = job["cwd"]
        sink = io.StringIO()
        run_hook(["--clusters", job["clusters"]], io.StringIO(json.dumps(payload)), sink)
        out.append(sink.getvalue())
print(json.dumps(out))
"""


def tied_store(directory):
    """A store whose exemplars tie: (cluster file path, prompts)."""
    rng = random.Random(7)

    def phrase(n):
        return " ".join(rng.sample(VOCAB, n))

    utterances = [(slug, phrase(3)) for slug in SLUGS for _ in range(6)]
    near_misses = [(cluster, phrase(3)) for cluster in ("c_ops", "c_data") for _ in range(8)]
    prompts = [phrase(rng.choice((3, 4, 5))) for _ in range(300)]
    (directory / "store.md").write_text(STORE, encoding="utf-8")
    (directory / "memory-router.toml").write_text(CONFIG, encoding="utf-8")
    (directory / "store.utterances.tsv").write_text(
        "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n"
        + "".join(f"{slug}\t{text}\t-\thand\t-\t{STAMP}\n" for slug, text in utterances), encoding="utf-8")
    (directory / "store.nearmisses.tsv").write_text(
        "cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\n"
        + "".join(f"{cluster}\t{text}\t-\thand\t-\t{STAMP}\n" for cluster, text in near_misses), encoding="utf-8")
    return str(directory / "store.md"), prompts


def hook_outputs(seed, jobs, home):
    env = dict(os.environ, PYTHONHASHSEED=seed, HOME=str(home), MEMORY_ROUTER_CACHE_DIR=str(home / "cache"))
    env.pop("MEMORY_ROUTER_NO_CACHE", None)
    env.pop("MEMORY_ROUTER_LOG", None)
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(jobs), env=env, capture_output=True,
                          text=True, check=True, timeout=300)
    return json.loads(done.stdout)


def test_hook_output_is_byte_identical_under_every_hash_seed(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    cluster_path, prompts = tied_store(store)
    jobs = [{"clusters": cluster_path, "cwd": str(store), "prompts": prompts}]
    runs = {}
    for seed in ("0", "1", "2", "3"):
        home = tmp_path / f"home-{seed}"
        home.mkdir()
        runs[seed] = hook_outputs(seed, jobs, home)
    first = runs["0"]
    tied = first[:len(prompts)]
    # The store does what it is for: the veto both sends and silences some of its prompts.
    assert 0 < sum(1 for text in tied if text) < len(prompts)
    assert len(first) > len(prompts)      # the bundled suites were routed too
    for seed, outputs in runs.items():
        differing = [i for i, (a, b) in enumerate(zip(first, outputs)) if a != b]
        assert len(outputs) == len(first) and not differing, (
            f"PYTHONHASHSEED={seed}: {len(differing)} prompts differ from seed 0, first {differing[:5]}")
