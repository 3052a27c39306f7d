"""``canary fit`` on an enriched store (issue 34 item 3): the enriched route's constants are the
grid, with the same hold-out and false-priming guard as the other constants."""

import shutil
import tomllib

from canaries.fit import ENRICHED_GRID, WEIGHTED_GRID, fit, grid_for, in_holdout
from canaries.suite import load_suite
from harness.cli import main
from router.config import default_settings, nearmisses_path, utterances_path
from router.providers.provider import build_table
from router.store.clusterfile import load_cluster_file

# Paraphrases the example store routes only at a low utterance floor and without the near-miss
# gate (they reach their member through its utterances alone), each with its cluster.
LOOSE = (
    ("the surnames from one vendor's export file show garbage like \u00c5\u201a where there should be "
     "\u0142", "layer1_03"),
    ("let's put both apps into a single repository. any reason not to?", "layer1_05"),
    ("the upload to the python package index fails with an oidc error ever since i gave the yaml a "
     "different name", "layer1_07"),
    ("i need to hand-fix a few rows on the live db from the terminal, anything to keep in mind?", "layer1_08"),
    ("how do i like you to reply to me, long explanations or short?", "layer1_13"),
    ("while you're in there, tidy up the indentation and quotes across the entire codebase", "layer1_14"),
    ("history got messed up on trunk, can i just overwrite what's on the remote?", "layer1_19"),
)
# The strictest corner of the grid: what a fit on these prompts moves away from.
STRICT = "utterance_floor = 12.0\nutterance_coverage = 0.55\nveto_k = 1\nveto_margin = -0.1\n"


def _ids(prefix, count, held):
    out, n = [], 0
    while len(out) < count:
        case_id = f"{prefix}{n}"
        if in_holdout(case_id, 0.3) == held:
            out.append(case_id)
        n += 1
    return out


def store_copy(tmp_path, example_cluster_file):
    target = tmp_path / "store" / "clusters.md"
    target.parent.mkdir()
    shutil.copy(example_cluster_file, target)
    for beside in (utterances_path, nearmisses_path):
        shutil.copy(beside(str(example_cluster_file)), beside(str(target)))
    return target


def _quoted(prompt):
    return '"' + prompt.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write(tmp_path, example_cluster_file, held_silent):
    """The loose paraphrases as cases to route in the fitting part, and again in the held-out part:
    to route there too, or (``held_silent``) marked silent, so whatever routes the first primes these."""
    clusters = store_copy(tmp_path, example_cluster_file)
    text = [f"clusters: {clusters}", "cases:"]
    for case_id, (prompt, cluster) in zip(_ids("fit", len(LOOSE), held=False), LOOSE):
        text += [f"  - id: {case_id}", f"    prompt: {_quoted(prompt)}", f"    routes_to: {cluster}"]
    for case_id, (prompt, cluster) in zip(_ids("held", len(LOOSE), held=True), LOOSE):
        text += [f"  - id: {case_id}", f"    prompt: {_quoted(prompt)}",
                 "    silent: true" if held_silent else f"    routes_to: {cluster}"]
    suite = tmp_path / "suite.yaml"
    suite.write_text("\n".join(text) + "\n", encoding="utf-8")
    config = tmp_path / "memory-router.toml"
    config.write_text(STRICT, encoding="utf-8")
    return suite, config


def test_the_grid_is_the_enriched_routes_on_a_table_with_utterances(example_cluster_file):
    index = load_cluster_file(str(example_cluster_file))
    enriched = build_table(index)
    plain = build_table(index, beside=False)
    weighted = dict(default_settings(), provider="weighted")
    assert grid_for(weighted, enriched) == ENRICHED_GRID
    assert set(ENRICHED_GRID) == {"utterance_floor", "utterance_coverage", "veto_k", "veto_margin"}
    assert grid_for(weighted, plain) == WEIGHTED_GRID
    assert grid_for(dict(weighted, utterances=False), enriched) == WEIGHTED_GRID


def test_fit_moves_the_enriched_constants_when_the_held_out_part_agrees(tmp_path, example_cluster_file):
    suite, config = write(tmp_path, example_cluster_file, held_silent=False)
    loaded = load_suite(str(suite))
    settings = dict(default_settings(), **tomllib.loads(STRICT))
    report = fit(loaded.cases, build_table(loaded.index), settings)
    assert set(report["grid"]) == set(ENRICHED_GRID)
    assert report["proposed"]["fitting"]["recall"] > report["current"]["fitting"]["recall"]
    assert {"utterance_floor", "utterance_coverage"} & set(report["changes"])
    assert report["recommended"] and not report["objections"]


def test_fit_refuses_to_write_enriched_constants_that_prime_the_held_out_part(tmp_path, example_cluster_file,
                                                                             capsys):
    suite, config = write(tmp_path, example_cluster_file, held_silent=True)
    assert main(["canary", "fit", str(suite), "--config", str(config), "--write"]) == 1
    captured = capsys.readouterr()
    assert "false-priming rate above the ceiling on the held-out part" in captured.out + captured.err
    assert "nothing was written" in captured.err
    assert config.read_text(encoding="utf-8") == STRICT
