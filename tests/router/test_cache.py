import io
import json
import os
import random
import struct
import subprocess
import sys
import time

import pytest

from router import cache
from router import cacheformat
from router.cache import cached, load_routing_table
from router.cacheformat import serialise_table
from router.store.clusterfile import load_cluster_file
from router.config import default_settings
from router.routing.score import build_routing_table, route_prompt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
from stores import generate_store  # noqa: E402


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch):
    """These tests write a store and want a cache hit at once; the racy-write guard (tested on
    its own below) would otherwise rebuild until the file is two seconds old."""
    monkeypatch.setattr(cache, "RACY_WINDOW_NS", 0, raising=False)


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


@pytest.mark.parametrize("provider", ["spec", "weighted"])
def test_sharded_cache_routes_every_builtin_like_the_fresh_table(big_store, provider):
    from router.providers.provider import build_table, route

    def build(path):
        return build_table(load_cluster_file(path))

    fresh = build(big_store)
    load_routing_table(big_store, build)
    from_cache = load_routing_table(big_store, build)
    assert not isinstance(from_cache["term_postings"], dict)
    assert from_cache["weighted_meta"] == fresh["weighted_meta"]
    settings = dict(default_settings(), provider=provider)
    prompts = _prompts(big_store) + ["kalomi renzor tekvas"]  # misspelt and unknown words too
    routed = 0
    for prompt in prompts:
        expected = route(prompt, fresh, settings)
        assert route(prompt, from_cache, settings) == expected
        routed += bool(expected["routed"])
    assert routed >= 30


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
    assert data[:8] == cacheformat.TABLE_MAGIC


def _counting_build():
    calls = []

    def build(path):
        calls.append(path)
        return _build(path)

    return build, calls


def _same_size_rewrite_keeping_mtime(path, old, new):
    """Rewrite ``path`` in place (same inode, same size) and put its mtime back, as ``cp -p``,
    ``rsync -t`` or ``touch -r`` would: only the ctime can tell."""
    st = os.stat(path)
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    with open(path, "r+b") as handle:
        handle.write(text.replace(old, new).encode("utf-8"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)


def test_same_size_same_mtime_rewrite_is_not_served_stale(tmp_path, example_cluster_file):
    store = tmp_path / "c.md"
    store.write_bytes(example_cluster_file.read_bytes())
    settings = default_settings()
    prompt = "I set an env var with setx but the Bash tool still can't see it"
    assert route_prompt(prompt, load_routing_table(store, _build), settings)["routed"]
    assert route_prompt(prompt, load_routing_table(store, _build), settings)["routed"]  # from the cache
    _same_size_rewrite_keeping_mtime(store, "setx", "zetq")
    fresh = route_prompt(prompt.replace("setx", "zetq"), _build(store), settings)
    build, calls = _counting_build()
    assert route_prompt(prompt.replace("setx", "zetq"), load_routing_table(store, build), settings) == fresh
    assert calls == [str(store)]


def test_config_cache_sees_a_same_size_same_mtime_rewrite(tmp_path):
    from router.configfile import parse_config_file

    path = tmp_path / "memory-router.toml"
    path.write_text("line_cap = 5\n", encoding="utf-8")
    assert cached(path, "config", parse_config_file)["settings"]["line_cap"] == 5
    _same_size_rewrite_keeping_mtime(path, "5", "7")
    assert cached(path, "config", parse_config_file)["settings"]["line_cap"] == 7


def test_racy_file_is_not_stored_until_it_settles(big_store, monkeypatch):
    monkeypatch.setattr(cache, "RACY_WINDOW_NS", 2_000_000_000)
    build, calls = _counting_build()
    load_routing_table(big_store, build)
    load_routing_table(big_store, build)
    assert len(calls) == 2  # written a moment ago: a same-tick rewrite could hide, so no cache
    assert not os.path.exists(os.environ["MEMORY_ROUTER_CACHE_DIR"]) or not os.listdir(
        os.environ["MEMORY_ROUTER_CACHE_DIR"])

    real_time_ns = cache.time.time_ns

    class Later:
        @staticmethod
        def time_ns():
            return real_time_ns() + 3_000_000_000

    monkeypatch.setattr(cache, "time", Later)
    load_routing_table(big_store, build)   # settled: stored now
    load_routing_table(big_store, build)   # and served
    assert len(calls) == 3


def test_new_router_code_invalidates_the_cache(big_store, tmp_path, monkeypatch):
    rules = tmp_path / "stopwords.txt"
    rules.write_text("the\n", encoding="utf-8")
    monkeypatch.setattr(cache, "CODE_FILES", (str(rules),))
    build, calls = _counting_build()
    load_routing_table(big_store, build)
    load_routing_table(big_store, build)
    assert len(calls) == 1
    rules.write_text("the\nand\n", encoding="utf-8")  # an upgrade that keeps __version__
    load_routing_table(big_store, build)
    assert len(calls) == 2


def test_code_files_name_what_builds_a_table():
    names = {os.path.basename(p) for p in cache.CODE_FILES}
    assert {"tokens.py", "score.py", "clusterfile.py", "config.py", "stopwords.txt"} <= names
    assert all(os.path.isfile(p) for p in cache.CODE_FILES)


def test_cache_reads_without_pread(big_store, monkeypatch):
    """Windows has no os.pread: the sharded reader must still answer from the cache."""
    fresh = _build(big_store)
    load_routing_table(big_store, _build)
    monkeypatch.setattr(cacheformat, "_HAS_PREAD", False)
    monkeypatch.delattr(os, "pread")

    def fail(_path):
        raise AssertionError("build called despite a valid cache")

    from_cache = load_routing_table(big_store, fail)
    settings = default_settings()
    for prompt in _prompts(big_store, count=20):
        assert route_prompt(prompt, from_cache, settings) == route_prompt(prompt, fresh, settings)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["table", "config"])
def test_fifo_in_place_of_a_cache_entry_does_not_hang(tmp_path, example_cluster_file, kind):
    store = tmp_path / "c.md"
    store.write_bytes(example_cluster_file.read_bytes())
    config = tmp_path / "memory-router.toml"
    config.write_text(f'clusters = "{store.as_posix()}"\n', encoding="utf-8")
    target = str(store if kind == "table" else config)
    entry = cache.entry_path(os.path.abspath(target), kind)
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    os.mkfifo(entry)
    code = ("import sys; from router.hooks.hook import run_hook; "
            "sys.exit(run_hook(['--config', sys.argv[1]]))")
    stdin = b'{"prompt": "I set an env var with setx but the Bash tool cannot see it"}'
    result = subprocess.run([sys.executable, "-c", code, str(config)], input=stdin, capture_output=True,
                            timeout=20)
    assert result.returncode == 0
    assert b"env_bash_tool_env_var_caching" in result.stdout


# --------------------------------------------------------------------------- damaged entries


HOOK_PROMPTS = ("I set an env var with setx but the Bash tool still can't see it",
                "what did we decide about the PR size limit and code review",
                "refactor this loop")


@pytest.fixture
def hook_store(tmp_path, monkeypatch):
    """A store with several posting and cluster shards, a config cached beside it, and a counter
    of how often the hook rebuilt each."""
    from router.hooks import hook
    from router import hookconfig

    store = tmp_path / "c.md"
    store.write_text(generate_store(clusters=60, members_per_cluster=3, vocabulary=800, seed=5), encoding="utf-8")
    config = tmp_path / "memory-router.toml"
    config.write_text(f'clusters = "{store.as_posix()}"\nline_cap = 4\n', encoding="utf-8")
    builds = {"table": 0, "config": 0}
    real_table, real_config = hook._build_table, hookconfig.parse_config

    def table(path, learned_file=None):
        builds["table"] += 1
        return real_table(path, learned_file)

    def config_of(path):
        builds["config"] += 1
        return real_config(path)

    monkeypatch.setattr(hook, "_build_table", table)
    monkeypatch.setattr(hookconfig, "parse_config", config_of)
    index = load_cluster_file(store)
    prompts = list(HOOK_PROMPTS) + [" ".join(c.members[0].hook.split()[:4]) + " " + c.tags[0]
                                    for c in index.clusters[::7]]
    return store, config, builds, prompts


def _hook_answer(config, prompt):
    from router.hooks.hook import run_hook

    out = io.StringIO()
    assert run_hook(["--config", str(config)], io.BytesIO(json.dumps({"prompt": prompt}).encode()), out) == 0
    return out.getvalue()


def _entries():
    directory = os.environ["MEMORY_ROUTER_CACHE_DIR"]
    return sorted(os.path.join(directory, name) for name in os.listdir(directory))


def _corrupt(data, rng):
    """One random damage: flipped bytes, a zeroed run, a truncation or trailing junk."""
    how = rng.choice(("flip", "flip", "flip", "zero", "truncate", "append"))
    data = bytearray(data)
    if how == "flip":
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    elif how == "zero":
        start = rng.randrange(len(data))
        data[start:start + rng.randint(1, 64)] = bytes(min(len(data) - start, 64))[: len(data[start:start + 64])]
    elif how == "truncate":
        del data[rng.randrange(len(data)):]
    else:
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    return bytes(data)


def test_random_corruptions_of_cache_entries_never_change_the_hooks_answer(hook_store, monkeypatch):
    """Issue 11, class 4: 300 seeded corruptions of the cached table and config; the hook's output
    must always be what it prints with no cache at all."""
    store, config, builds, prompts = hook_store
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    expected = {prompt: _hook_answer(config, prompt) for prompt in prompts}
    assert sum(bool(answer) for answer in expected.values()) >= 4  # real injections are compared
    monkeypatch.delenv("MEMORY_ROUTER_NO_CACHE")
    for prompt in prompts:
        _hook_answer(config, prompt)
    pristine = {entry: open(entry, "rb").read() for entry in _entries()}
    assert {os.path.basename(e).split("-")[0] for e in pristine} == {"table", "config"}
    rng = random.Random(1111)
    detected = 0
    for _ in range(300):
        entry = rng.choice(sorted(pristine))
        damaged = _corrupt(pristine[entry], rng)
        with open(entry, "wb") as handle:
            handle.write(damaged)
        before = dict(builds)
        for prompt in rng.sample(prompts, 3):
            assert _hook_answer(config, prompt) == expected[prompt], (entry, prompt)
        if builds != before:
            detected += 1
            # Rebuilt and rewritten: the next prompts read a whole entry again.
            assert open(entry, "rb").read() == pristine[entry]
        with open(entry, "wb") as handle:
            handle.write(pristine[entry])
    assert detected >= 150  # most damage is read by three prompts; the rest was never read, so never used


def test_a_corrupted_shard_is_rebuilt_on_the_next_call_not_silent_forever(hook_store):
    store, config, builds, prompts = hook_store
    prompt = prompts[len(HOOK_PROMPTS)]
    answer = _hook_answer(config, prompt)
    assert answer and _hook_answer(config, prompt) == answer
    (entry,) = [e for e in _entries() if os.path.basename(e).startswith("table-")]
    pristine = open(entry, "rb").read()
    # Damage every shard (all past the header), keeping the size.
    damaged = bytearray(pristine)
    for offset in range(len(damaged) // 3, len(damaged), 37):
        damaged[offset] ^= 0x20
    with open(entry, "wb") as handle:
        handle.write(bytes(damaged))
    rebuilt = builds["table"]
    assert _hook_answer(config, prompt) == answer
    assert builds["table"] == rebuilt + 1
    assert open(entry, "rb").read() == pristine
    assert _hook_answer(config, prompt) == answer
    assert builds["table"] == rebuilt + 1  # served from the rewritten cache


def test_a_shard_failing_its_checksum_is_never_loaded(big_store, monkeypatch):
    load_routing_table(big_store, _build)
    (entry,) = _entries()
    data = bytearray(open(entry, "rb").read())
    data[-5] ^= 0x01
    with open(entry, "wb") as handle:
        handle.write(bytes(data))
    loads = []
    real_loads = cacheformat.marshal.loads
    monkeypatch.setattr(cacheformat.marshal, "loads", lambda blob: loads.append(len(blob)) or real_loads(blob))
    table = load_routing_table(big_store, _build)
    with pytest.raises(cacheformat.CorruptCacheError):
        for position in range(len(table["clusters"])):
            table["clusters"][position]
    fresh = _build(big_store)
    assert cache.use_routing_table(big_store, _build, lambda t: [t["clusters"][i] for i in range(300)]) == [
        fresh["clusters"][i] for i in range(300)]


def test_config_entry_with_a_bad_checksum_is_rebuilt(tmp_path):
    from router.configfile import parse_config_file

    path = tmp_path / "memory-router.toml"
    path.write_text("line_cap = 5\n", encoding="utf-8")
    assert cached(path, "config", parse_config_file)["settings"]["line_cap"] == 5
    (entry,) = _entries()
    data = open(entry, "rb").read()
    # Turn the stored 5 into 6 inside the marshal body: valid marshal, wrong value.
    body = data.replace(b"\xe9\x05\x00\x00\x00", b"\xe9\x06\x00\x00\x00", 1)
    assert body != data
    with open(entry, "wb") as handle:
        handle.write(body)
    assert cached(path, "config", parse_config_file)["settings"]["line_cap"] == 5
    assert open(entry, "rb").read() == data


@pytest.mark.parametrize("home", ["", "nonexistent", "relative/dir"])
def test_hook_with_home_empty_or_nowhere_routes_uncached_and_creates_nothing(tmp_path, example_cluster_file, home):
    # Issue 11: HOME="" made the hook create ./.cache (/.cache from /), HOME=/nonexistent created
    # /nonexistent/.cache. It must route as usual and write nothing.
    import json

    from conftest import memory_router_exe

    work = tmp_path / "cwd"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MEMORY_ROUTER_CACHE_DIR", "XDG_CACHE_HOME", "MEMORY_ROUTER_NO_CACHE")}
    env["HOME"] = str(tmp_path / home) if home == "nonexistent" else home
    payload = json.dumps({"prompt": "why does setx not reach the bash tool", "cwd": str(work)}).encode()
    result = subprocess.run([memory_router_exe(), "hook", "--clusters", str(example_cluster_file)], input=payload,
                            capture_output=True, env=env, cwd=work, timeout=60)
    assert result.returncode == 0 and b"additionalContext" in result.stdout
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["cwd"]


@pytest.mark.parametrize("env,expected", [
    ({"MEMORY_ROUTER_CACHE_DIR": "rel/cache"}, "rel/cache"),      # the explicit choice is taken as given
    ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/memory-router"),
    ({"XDG_CACHE_HOME": "relative", "HOME": ""}, None),            # a relative XDG base is invalid
    ({"HOME": ""}, None),
    ({"HOME": "/"}, None),
])
def test_cache_dir_needs_an_absolute_existing_home(monkeypatch, env, expected):
    for name in ("MEMORY_ROUTER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cache.cache_dir() == expected


def test_cache_dir_under_an_existing_home(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMORY_ROUTER_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache.cache_dir() == str(tmp_path / ".cache" / "memory-router")


def test_a_companion_file_joins_the_table_key_absent_or_present(tmp_path):
    """A file the table is built from besides the cluster file (the learned terms): appearing,
    changing or going away changes the key; its stat counts for the racy-clean check when it is
    the newer file; and a table built with companions is cached apart from one built without."""
    store = tmp_path / "c.md"
    store.write_text("x", encoding="utf-8")
    os.utime(store, ns=(1, 1))
    learned = tmp_path / "c.learned.tsv"
    absent, st = cache._stat_key(str(store), "table-companions", (str(learned),))
    assert absent[-2:] == (str(learned), None)
    time.sleep(0.05)  # past the file system's coarse clock tick: the learned file is the newer one
    learned.write_text("a", encoding="utf-8")
    present, newest = cache._stat_key(str(store), "table-companions", (str(learned),))
    assert present != absent and newest.st_ino == os.stat(learned).st_ino
    learned.write_text("ab", encoding="utf-8")
    assert cache._stat_key(str(store), "table-companions", (str(learned),))[0] != present
    learned.unlink()
    assert cache._stat_key(str(store), "table-companions", (str(learned),))[0] == absent
    assert cache._table_kind(()) != cache._table_kind((str(learned),))


def test_the_utterances_file_beside_the_cluster_file_joins_every_table_key(tmp_path):
    """The weighted table is built with the utterances beside the cluster file (when there are
    any), so writing, editing or deleting that file rebuilds the table, with or without the
    caller's own companions."""
    from router.config import utterances_path
    from router.providers.provider import build_table

    store = tmp_path / "c.md"
    store.write_text(generate_store(clusters=3, members_per_cluster=2, vocabulary=60, seed=1), encoding="utf-8")
    builds = []

    def build(path):
        builds.append(path)
        return build_table(load_cluster_file(path))

    first = load_routing_table(str(store), build)
    assert "utterance_meta" not in first and len(builds) == 1
    load_routing_table(str(store), build)
    assert len(builds) == 1
    slug = load_cluster_file(store).clusters[0].members[0].slug
    head = "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n"
    with open(utterances_path(str(store)), "w", encoding="utf-8") as handle:
        handle.write(head + f"{slug}\tmy widget keeps wobbling\t-\thand\t-\t2026-12-01T21:00:00Z\n")
    table = load_routing_table(str(store), build)
    assert len(builds) == 2 and table["utterance_meta"]["members"] == 1
    assert table["utterance_postings"].get("wobbl")
    learned = str(tmp_path / "c.learned.tsv")
    load_routing_table(str(store), build, companions=(learned,))
    assert len(builds) == 3
    os.unlink(utterances_path(str(store)))
    assert "utterance_meta" not in load_routing_table(str(store), build) and len(builds) == 4


# --------------------------------------------------------------------------- the staleness decision, part by part (issue 38)


def _aged(path, seconds):
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_the_key_names_the_file_the_kind_and_each_companion(tmp_path):
    store = tmp_path / "c.md"
    store.write_text("x", encoding="utf-8")
    learned = tmp_path / "learned.tsv"
    key, st = cache._stat_key(str(store), "table", (str(learned),))
    assert key[:4] == (cacheformat.CACHE_FORMAT, __import__("router").__version__, "table", str(store))
    assert key[-2:] == (str(learned), None) and st.st_ino == os.stat(store).st_ino
    assert cache._stat_key(str(store), "config")[0] != cache._stat_key(str(store), "table")[0]
    learned.write_text("y", encoding="utf-8")
    with_learned, _ = cache._stat_key(str(store), "table", (str(learned),))
    assert with_learned[-6:] == (str(learned), *(lambda s: (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns,
                                                           s.st_ctime_ns))(os.stat(learned)))


def test_the_stat_that_decides_settling_is_the_newest_of_the_files(tmp_path):
    store = tmp_path / "c.md"
    store.write_text("x", encoding="utf-8")
    older, newer = tmp_path / "older", tmp_path / "newer"
    older.write_text("o", encoding="utf-8")
    _aged(older, 200)      # (a ctime cannot be set back: the store's is touched last, so it is the newest)
    _aged(store, 100)
    time.sleep(0.01)
    newer.write_text("n", encoding="utf-8")
    _, st = cache._stat_key(str(store), "table", (str(older),))
    assert st.st_ino == os.stat(store).st_ino     # an older companion: the file's own stat
    _, st = cache._stat_key(str(store), "table", (str(older), str(newer)))
    assert st.st_ino == os.stat(newer).st_ino     # a newer one decides


def test_settled_means_unchanged_for_the_racy_window(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "RACY_WINDOW_NS", 2_000_000_000)
    path = tmp_path / "f"
    path.write_text("x", encoding="utf-8")
    now = time.time_ns()

    class Stat:
        st_mtime_ns = now - 2_000_000_000
        st_ctime_ns = now - 5_000_000_000

    class At:
        @staticmethod
        def time_ns():
            return now

    monkeypatch.setattr(cache, "time", At)
    assert cache._settled(Stat)                       # exactly the window: settled
    Stat.st_mtime_ns = now - 1_999_999_999
    assert not cache._settled(Stat)
    Stat.st_mtime_ns, Stat.st_ctime_ns = now - 9_000_000_000, now - 1
    assert not cache._settled(Stat)                   # the ctime counts too


def test_entry_path_is_one_name_per_path_and_kind(tmp_path):
    first = cache.entry_path("/a/c.md", "table")
    assert os.path.dirname(first) == os.environ["MEMORY_ROUTER_CACHE_DIR"]
    name = os.path.basename(first)
    assert name == f"table-{__import__('zlib').crc32(b'/a/c.md'):08x}.marshal"
    assert cache.entry_path("/a/c.md", "rebuild", ".marker").endswith(".marker")
    assert cache.entry_path("/a/d.md", "table") != first and cache.entry_path("/a/c.md", "config") != first


def test_why_caching_is_off(monkeypatch):
    assert cache.why_caching_off() is None and not cache.caching_off()
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    assert cache.why_caching_off() == "MEMORY_ROUTER_NO_CACHE is set" and cache.caching_off()
    monkeypatch.delenv("MEMORY_ROUTER_NO_CACHE")
    monkeypatch.delenv("MEMORY_ROUTER_CACHE_DIR")
    monkeypatch.setenv("HOME", "")
    assert cache.caching_off() and cache.why_caching_off() == (
        "no cache directory: HOME is empty or not a directory, and neither MEMORY_ROUTER_CACHE_DIR nor an "
        "absolute XDG_CACHE_HOME is set")


def test_the_code_stamp_names_a_missing_file(monkeypatch, tmp_path):
    present = tmp_path / "rules.txt"
    present.write_text("abc", encoding="utf-8")
    monkeypatch.setattr(cache, "CODE_FILES", (str(present), str(tmp_path / "gone")))
    assert cache._code_stamp() == ((3, os.stat(present).st_mtime_ns), None)


def _small_store(tmp_path):
    store = tmp_path / "c.md"
    store.write_text(generate_store(clusters=4, members_per_cluster=2, vocabulary=40, seed=1), encoding="utf-8")
    return store


def test_a_compiled_table_is_current_until_a_file_it_was_built_from_changes(tmp_path):
    store = _small_store(tmp_path)
    learned = tmp_path / "learned.tsv"
    assert not cache.table_is_current(store)
    entry, problem = cache.compile_routing_table(store, _build, (str(learned),))
    assert problem is None and os.path.isfile(entry)
    assert cache.table_is_current(store, (str(learned),)) and not cache.table_is_current(store)
    learned.write_text("new", encoding="utf-8")                       # a companion appeared
    assert not cache.table_is_current(store, (str(learned),))


def test_compile_routing_table_says_why_a_table_is_not_there(tmp_path, monkeypatch):
    store = _small_store(tmp_path)
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    assert cache.compile_routing_table(store, _build) == (None, "caching is off (MEMORY_ROUTER_NO_CACHE is set)")
    assert not cache.table_is_current(store)
    monkeypatch.delenv("MEMORY_ROUTER_NO_CACHE")
    import errno

    def full(_fd, _data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "write_all_synced", full)
    entry, problem = cache.compile_routing_table(store, _build)
    assert entry is None and problem == ("the table could not be written in the cache directory "
                                         f"{os.environ['MEMORY_ROUTER_CACHE_DIR']}: No space left on device")
    assert os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"]) == []   # no temp file left behind


def test_a_table_that_does_not_read_back_is_named(tmp_path, monkeypatch):
    store = _small_store(tmp_path)
    monkeypatch.setattr(cache, "serialise_table", lambda table, key: b"not a table")
    entry, problem = cache.compile_routing_table(store, _build)
    assert entry is None and problem.startswith("the table written at ") and problem.endswith(
        " does not read back whole (the cache directory keeps a damaged copy)")


def test_a_fallback_table_is_used_on_a_miss_and_none_means_build(tmp_path):
    store = _small_store(tmp_path)
    asked = []
    table = load_routing_table(store, _build, fallback=lambda p: asked.append(p) or {"clusters": ["fallback"]})
    assert table == {"clusters": ["fallback"]} and asked == [os.path.abspath(store)]
    built = load_routing_table(store, _build, fallback=lambda p: None)
    assert len(built["clusters"]) == 4
    asked.clear()
    assert len(load_routing_table(store, _build, fallback=asked.append)["clusters"]) == 4 and asked == []  # a hit


def test_a_table_without_the_files_beside_it_is_kept_apart(tmp_path):
    store = _small_store(tmp_path)
    load_routing_table(store, _build)
    calls = []
    load_routing_table(store, lambda p: calls.append(p) or _build(p), beside=False)
    assert calls == [os.path.abspath(store)]                 # another entry: built once ...
    load_routing_table(store, lambda p: calls.append(p) or _build(p), beside=False)
    assert len(calls) == 1                                   # ... then read
    digest = f"{__import__('zlib').crc32(os.path.abspath(store).encode()):08x}"
    assert sorted(os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"])) == sorted(
        [f"table-{digest}.marshal", f"table-alone-{digest}.marshal"])


def test_release_table_closes_a_cached_table_only(tmp_path):
    store = _small_store(tmp_path)
    load_routing_table(store, _build)
    table = load_routing_table(store, _build)
    fd = table["clusters"].reader.fd
    cache.release_table(table)
    with pytest.raises(OSError):
        os.fstat(fd)
    cache.release_table({"clusters": []})                    # built in memory: nothing to close


def test_a_corrupt_shard_costs_one_rebuild_through_use_routing_table(tmp_path):
    store = _small_store(tmp_path)
    load_routing_table(store, _build)
    (entry,) = [os.path.join(os.environ["MEMORY_ROUTER_CACHE_DIR"], n)
                for n in os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"])]
    data = bytearray(open(entry, "rb").read())
    data[-1] ^= 0xFF
    with open(entry, "wb") as handle:
        handle.write(bytes(data))
    calls = []

    def build(path):
        calls.append(path)
        return _build(path)

    used = cache.use_routing_table(store, build, lambda table: [table["clusters"][i][0] for i in range(4)])
    assert used == [c[0] for c in _build(store)["clusters"]] and calls == [os.path.abspath(store)]


def test_the_small_cache_serves_each_kind_of_a_file_from_its_own_entry(tmp_path):
    path = tmp_path / "memory-router.toml"
    path.write_text("line_cap = 5\n", encoding="utf-8")
    built = []

    def build(kind):
        return lambda p: built.append((kind, p)) or {"kind": kind}

    assert cached(path, "a", build("a")) == {"kind": "a"} and cached(path, "b", build("b")) == {"kind": "b"}
    assert cached(path, "a", build("a")) == {"kind": "a"} and cached(path, "b", build("b")) == {"kind": "b"}
    assert built == [("a", str(path)), ("b", str(path))]      # each built once, from the absolute path


def test_the_small_cache_off_builds_from_the_absolute_path(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.toml").write_text("x = 1\n", encoding="utf-8")
    assert cached("c.toml", "config", lambda p: p) == str(tmp_path / "c.toml")


def test_compile_routing_table_names_a_failure_that_is_not_an_os_error(tmp_path, monkeypatch):
    store = _small_store(tmp_path)

    def refuse(_fd, _data):
        raise ValueError("the disk said no")

    monkeypatch.setattr(cache, "write_all_synced", refuse)
    assert cache.compile_routing_table(store, _build) == (
        None, f"the table could not be written in the cache directory {os.environ['MEMORY_ROUTER_CACHE_DIR']}: "
              "the disk said no")


def test_a_corrupt_shard_is_reloaded_through_the_same_fallback(tmp_path):
    store = _small_store(tmp_path)
    # the fallback's table is the cluster file alone, cached apart (as the hook's is)
    load_routing_table(store, _build, beside=False)
    fallback_calls = []

    def fallback(path):
        fallback_calls.append(path)
        return load_routing_table(path, _build, beside=False)

    table = cache.use_routing_table(store, _build, lambda t: t, fallback=fallback)
    entries = os.listdir(os.environ["MEMORY_ROUTER_CACHE_DIR"])
    (alone_entry,) = [os.path.join(os.environ["MEMORY_ROUTER_CACHE_DIR"], n) for n in entries if "alone" in n]
    data = bytearray(open(alone_entry, "rb").read())
    data[-1] ^= 0xFF
    with open(alone_entry, "wb") as handle:
        handle.write(bytes(data))
    fallback_calls.clear()
    names = cache.use_routing_table(store, _build, lambda t: [t["clusters"][i][0] for i in range(4)], fallback=fallback)
    assert names == [c[0] for c in _build(store)["clusters"]]
    assert len(fallback_calls) == 2                      # the reload asked the fallback again
    assert os.path.exists(alone_entry)                   # rebuilt and stored afresh ...
    assert open(alone_entry, "rb").read() != bytes(data)  # ... not the damaged copy
    assert table is not None


def test_cache_entries_are_private_and_a_table_with_companions_is_kept_apart(tmp_path):
    store = _small_store(tmp_path)
    learned = str(tmp_path / "learned.tsv")
    calls = []

    def build(path):
        calls.append(path)
        return _build(path)

    for companions in ((), (learned,), (), (learned,)):
        load_routing_table(store, build, companions)
    assert len(calls) == 2                     # one entry each, both served again
    directory = os.environ["MEMORY_ROUTER_CACHE_DIR"]
    assert all(os.stat(os.path.join(directory, name)).st_mode & 0o777 == 0o600 for name in os.listdir(directory))
    assert sorted(name.rsplit("-", 1)[0] for name in os.listdir(directory)) == ["table", "table-companions"]


def test_a_relative_home_is_no_cache_home_even_when_it_exists(tmp_path, monkeypatch):
    for name in ("MEMORY_ROUTER_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    monkeypatch.setenv("HOME", "rel")
    assert cache.cache_dir() is None


def test_a_companion_after_an_absent_one_still_joins_the_key(tmp_path):
    store = tmp_path / "c.md"
    store.write_text("x", encoding="utf-8")
    present = tmp_path / "present"
    present.write_text("p", encoding="utf-8")
    key, _ = cache._stat_key(str(store), "table", (str(tmp_path / "absent"), str(present)))
    st = os.stat(present)
    assert key[-8:] == (str(tmp_path / "absent"), None, str(present), st.st_dev, st.st_ino, st.st_size,
                        st.st_mtime_ns, st.st_ctime_ns)


def test_with_caching_off_the_fallback_still_decides(tmp_path, monkeypatch):
    store = _small_store(tmp_path)
    monkeypatch.setenv("MEMORY_ROUTER_NO_CACHE", "1")
    assert load_routing_table(store, _build, fallback=lambda p: {"clusters": ["alone"]}) == {"clusters": ["alone"]}
    assert len(load_routing_table(store, _build, fallback=lambda p: None)["clusters"]) == 4


def test_a_path_that_is_not_valid_unicode_has_its_entry():
    path = "/store/caf\udce9.md"
    assert cache.entry_path(path, "table").endswith(f"table-{__import__('zlib').crc32(b'/store/caf' + bytes([0xe9]) + b'.md'):08x}.marshal")


def test_a_table_of_the_cluster_file_alone_ignores_the_files_beside_it(tmp_path):
    from router.config import utterances_path

    store = _small_store(tmp_path)
    calls = []

    def build(path):
        calls.append(path)
        return _build(path)

    load_routing_table(store, build, beside=False)
    with open(utterances_path(str(store)), "w", encoding="utf-8") as handle:
        handle.write("written beside it\n")
    load_routing_table(store, build, beside=False)
    assert len(calls) == 1                               # still current: the files beside it are not its key


def test_a_damaged_table_entry_raises_its_own_error_and_leaves_no_descriptor_open(tmp_path):
    # _open_table closes what it opened when the table is not whole (a long-lived reader such as
    # the MCP server would otherwise leak a descriptor per damaged read).
    entry = tmp_path / "table.marshal"
    entry.write_bytes(b"not a table at all, just some bytes")
    before = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    with pytest.raises((ValueError, EOFError, struct.error)):
        cache._open_table(str(entry), "some key")
    if before is not None:
        assert set(os.listdir("/proc/self/fd")) <= before
