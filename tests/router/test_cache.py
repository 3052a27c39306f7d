import os
import sys

import pytest

from router.cache import cached, load_routing_table, serialise_table
from router.clusterfile import load_cluster_file
from router.config import default_settings
from router.score import build_routing_table, route_prompt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
from stores import generate_store  # noqa: E402


@pytest.fixture
def big_store(tmp_path):
    path = tmp_path / "big.md"
    path.write_text(generate_store(clusters=300, members_per_cluster=5, vocabulary=3000, seed=3), encoding="utf-8")
    return path


def _build(path):
    return build_routing_table(load_cluster_file(path))


def _prompts(path, count=60):
    index = load_cluster_file(path)
    prompts = []
    for i, cluster in enumerate(index.clusters[:count]):
        words = cluster.members[0].hook.split()
        prompts.append(" ".join(words[: 2 + i % 5]) + (" " + cluster.tags[0] if i % 3 == 0 else ""))
    return prompts + ["nothing matches here at all", ""]


def test_sharded_cache_routes_exactly_like_the_fresh_table(big_store):
    fresh = _build(big_store)
    first = load_routing_table(big_store, _build)       # miss: builds and stores
    from_cache = load_routing_table(big_store, _build)  # hit: the sharded reader
    assert isinstance(first, dict) and not isinstance(from_cache["tag_postings"], dict)
    settings = default_settings()
    routed = 0
    for prompt in _prompts(big_store):
        expected = route_prompt(prompt, fresh, settings)
        assert route_prompt(prompt, from_cache, settings) == expected
        routed += bool(expected["routed"])
    assert routed >= 30  # the comparison exercised real routes, not only silence


def test_cache_hit_does_not_call_build(big_store):
    load_routing_table(big_store, _build)

    def fail(_path):
        raise AssertionError("build called despite a valid cache")

    assert len(load_routing_table(big_store, fail)["clusters"]) == 300


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty"])
def test_damaged_cache_is_rebuilt(big_store, damage):
    load_routing_table(big_store, _build)
    cache_dir = os.environ["MEMORY_ROUTER_CACHE_DIR"]
    (entry,) = [os.path.join(cache_dir, n) for n in os.listdir(cache_dir)]
    data = open(entry, "rb").read()
    with open(entry, "wb") as handle:
        handle.write({"truncate": data[: len(data) // 2], "garbage": b"\x00" * 64, "empty": b""}[damage])
    calls = []

    def build(path):
        calls.append(path)
        return _build(path)

    table = load_routing_table(big_store, build)
    assert calls == [str(big_store)]
    assert route_prompt("x", table, default_settings())["routed"] == []


def test_changed_file_invalidates(big_store):
    load_routing_table(big_store, _build)
    big_store.write_text(generate_store(clusters=10, members_per_cluster=2, vocabulary=100, seed=9), encoding="utf-8")
    assert len(load_routing_table(big_store, _build)["clusters"]) == 10


def test_no_cache_env_disables(big_store, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    load_routing_table(big_store, _build)
    assert cached(big_store, "x", lambda p: 5) == 5
    assert not os.path.exists(os.environ["MEMORY_ROUTER_CACHE_DIR"])


def test_unwritable_cache_dir_is_ignored(big_store, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(blocker / "sub"))
    assert len(load_routing_table(big_store, _build)["clusters"]) == 300
    assert cached(big_store, "config", lambda p: {"a": 1}) == {"a": 1}


def test_serialised_table_is_compact_per_shard(big_store):
    data = serialise_table(_build(big_store), ("k",))
    assert data[:8] == b"MRTABLE3"
