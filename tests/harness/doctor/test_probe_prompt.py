"""The trial prompt doctor asks its hook (and init suggests trying with route): a request made
from a memory's hook line, as a user would type it, not a list of tags (issue 29 item 9)."""

import pytest

from harness.doctor.probes import probe_prompt, request_from_hook


@pytest.mark.parametrize("hook, prompt", [
    ("the Galaxy A54 throttles after about 12 minutes; measure performance on a warmed-up device",
     "what do we know about the Galaxy A54 throttles after about 12 minutes?"),
    ('iOS crashes show as "missing dSYM" unless upload_symbols_to_crashlytics runs in the build phase',
     "what do we know about iOS crashes show as missing dSYM unless upload_symbols_to_crashlytics runs?"),
    ("Git Bash rewrites /c/ paths: MSYS_NO_PATHCONV=1", "what do we know about Git Bash rewrites /c/ paths?"),
    ("use bun", None),                                   # too short to ask about
])
def test_a_request_from_a_hook_line_asks_about_its_first_clause(hook, prompt):
    assert request_from_hook(hook) == prompt


def test_the_probe_is_a_request_that_routes_to_its_memorys_cluster(example_cluster_file):
    from router.providers.provider import build_table
    from router.store.clusterfile import load_cluster_file

    index = load_cluster_file(example_cluster_file)
    prompt, decision = probe_prompt(index, build_table(index), {})
    assert prompt.startswith("what do we know about ") and prompt.endswith("?")
    owner = next(c for c in index.clusters for m in c.members if request_from_hook(m.hook) == prompt)
    assert decision["routed"][0] == owner.cluster_id
    assert decision["additional_context"] is not None
    assert prompt != " ".join(owner.tags)
