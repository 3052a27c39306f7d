"""``memory-router mcp``: the configured memory store over MCP (stdio), for hosts and moments a
``UserPromptSubmit`` hook cannot reach (docs/mcp.md).

Tools: ``route`` (the ``route --json`` decision), ``search_memory`` (ranked member lines across
clusters, by their own words, tags, learned terms and utterances), ``get_memory`` (a memory
file's body), ``record_feedback`` (learned terms, when the config turns learning on); resource
``memory-router://clusters`` (the cluster index). What the tools read is rebuilt when the
cluster, learned-terms or utterances file changes, and a damaged learned or utterances file is
left out, not fatal (``harness.mcp.loaded``); a custom provider that keeps overrunning its
budget is not called for a while (``harness.mcp.breaker``).

The tool logic lives here, in ``MemoryStore`` (plain Python, testable without MCP);
``harness.mcp.server`` only wraps it for the official SDK (``harness.mcp.cli`` is the command). Every tool but ``record_feedback`` is
read-only, nothing touches the network, and every result is capped at ``max_result_chars``
(``harness.mcp.resultcap``) and says when it was.
"""

import os
import re
import stat

from harness.mcp.resultcap import cap_lists, json_size
from router import config as config_mod
from router.agenttext import feedback_result, index_result, memory_result, route_result, search_result
from router.errors import InputError, RefusedError

TOOL_NAMES = ("route", "search_memory", "get_memory", "record_feedback")
INDEX_URI = "memory-router://clusters"
# Claude Code warns above 10,000 tokens of MCP output and cuts at 25,000; 40,000 characters of
# JSON is about 10,000 tokens, and a routed decision (at most 9,500 characters of context, shown
# twice: as text and as hook output) fits with room for its scores.
DEFAULT_MAX_RESULT_CHARS = 40_000
MIN_MAX_RESULT_CHARS = 2_000
SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
MAX_PROMPT_CHARS = 100_000

_SLUG_RE = re.compile(r"^[a-z0-9_]+\Z")  # \Z: a slug with a trailing newline is not a slug


def store_for(clusters=None, config_path=None, memory_dir=None, max_result_chars=DEFAULT_MAX_RESULT_CHARS):
    """The ``MemoryStore`` a server invocation serves: cluster file and config resolved as every
    other command resolves them, the memory directory by ``harness.project.resolve_memory_dir``
    (Claude Code's default for the project when neither --memory-dir nor memory_dir says)."""
    from harness.context import is_bundled, resolve_cli_clusters
    from harness.project import resolve_memory_dir
    from router.configfile import load_config

    if max_result_chars < MIN_MAX_RESULT_CHARS:
        raise InputError(f"--max-result-chars must be at least {MIN_MAX_RESULT_CHARS}, got {max_result_chars}",
                         fix=f"pass --max-result-chars {DEFAULT_MAX_RESULT_CHARS}")
    config = load_config(config_path)
    path = resolve_cli_clusters(clusters, config)
    directory, how = resolve_memory_dir(memory_dir, config, config_mod.project_dirs()[0])
    return MemoryStore(path, config, directory, how, max_result_chars, bundled=is_bundled(path))


def route_decision(ctx, prompt):
    """The one place the server routes a prompt: the ``route --json`` object for ``prompt``.
    (A routing provider plugs in here.)"""
    from harness.context import route_json

    return route_json(ctx, ctx.route(prompt))


class MemoryStore:
    """The store one server serves: the cluster file with the learned-terms and utterances files
    beside it (reloaded when any of them changes on disk, ``harness.mcp.loaded``), the config's
    settings, the memory directory, and the breaker of a custom provider that keeps overrunning."""

    def __init__(self, cluster_path, config=None, memory_dir=None, memory_dir_how="",
                 max_result_chars=DEFAULT_MAX_RESULT_CHARS, bundled=False, breaker=None):
        from harness.mcp.breaker import ProviderBreaker

        self.cluster_path = os.path.abspath(cluster_path)
        self.config = config
        self.settings = config_mod.settings_of(config)
        self.memory_dir = os.path.abspath(memory_dir) if memory_dir else None
        self.memory_dir_how = memory_dir_how
        self.max_result_chars = max_result_chars
        self.bundled = bundled
        self.breaker = breaker or ProviderBreaker()
        self._state = None

    # ----------------------------------------------------------------------- loading

    def _load(self):
        """The ``harness.mcp.loaded.load_store`` state, rebuilt when its reload key changes (the
        stats of every file the hook's table is built from, ``harness.mcp.loaded.reload_key``)."""
        from harness.mcp.loaded import load_store, reload_key
        from router.cache import release_table

        key = reload_key(self.cluster_path, self.learning)
        if self._state is None or self._state[0] != key:
            old, self._state = self._state, (key, load_store(self.cluster_path, self.settings, self.config,
                                                             self.learning))
            if old is not None:   # a long-lived server must not keep one open table file per reload
                release_table(old[1]["context"].table)
        return self._state[1]

    def context(self):
        return self._load()["context"]

    @property
    def learning(self):
        return bool(self.config and self.config.get("learning"))

    def learned_path(self):
        from router.config import learned_path

        return learned_path(self.cluster_path)

    def _learned_terms(self):
        return self._load()["learned"]

    # ----------------------------------------------------------------------- tools

    def route(self, prompt):
        """The ``route --json`` decision; a custom provider that keeps overrunning its budget is
        not called for a while (``harness.mcp.breaker``)."""
        import time

        from harness.mcp.breaker import is_overrun
        from router.providername import BUILTINS

        _check_prompt(prompt)
        loaded = self._load()
        ctx = loaded["context"]
        name = self.settings.get("provider") or config_mod.DEFAULTS["provider"]
        custom = name not in BUILTINS
        budget_ms = self.settings["provider_timeout_ms"]
        if custom:
            self.breaker.check(name, budget_ms)
        started = time.monotonic()
        result = route_decision(ctx, prompt)
        if custom:
            self.breaker.record(name, is_overrun(result, time.monotonic() - started, budget_ms / 1000))
        return route_result(cap_lists(result, ("scores", "prompt_tokens"), self.max_result_chars), loaded["problems"])

    def search(self, query, limit=SEARCH_DEFAULT_LIMIT):
        """Member lines ranked by the query's words: tag_weight per word among their cluster's tags,
        member_weight per word in their own slug and hook, and (learning on) per learned word;
        a word only the member's utterances hold counts member_weight too, as the router counts
        utterance words (as the member's own words, in postings of their own: docs/providers.md)."""
        from router.tokens import tokenize

        _check_prompt(query, "query")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise InputError(f"limit must be an integer from 1 to {SEARCH_MAX_LIMIT}, got {limit!r}",
                             fix=f"pass limit between 1 and {SEARCH_MAX_LIMIT} (default {SEARCH_DEFAULT_LIMIT})")
        loaded = self._load()
        ctx, tag_words, member_words = loaded["context"], loaded["tag_words"], loaded["member_words"]
        learned = loaded["learned"]
        tokens = tokenize(query[: self.settings["max_prompt_chars"]])
        tag_weight, member_weight = self.settings["tag_weight"], self.settings["member_weight"]
        said = utterance_matches(tokens, ctx.table) if self.settings.get("utterances", True) else {}
        clusters = ctx.index.clusters
        # Only members a query word can reach: by their own words, their cluster's tags, learned words
        # or utterances.
        candidates = set(said)
        for token in tokens:
            candidates.update(loaded["postings"].get(token, ()))
            for position in ctx.table["tag_postings"].get(token, ()):
                candidates.update((position, number) for number in range(len(clusters[position].members)))
        where = loaded["position"]
        candidates.update(where[slug] for slug, terms in learned.items() if slug in where and tokens & terms)
        matches = []
        for position, number in candidates:
            cluster = clusters[position]
            member = cluster.members[number]
            tag_hits = tokens & tag_words[position]
            own = tokens & member_words[member.slug]
            taught = (tokens & learned.get(member.slug, frozenset())) - own - tag_hits
            spoken = said.get((position, number), set()) - own - tag_hits - taught
            score = tag_weight * len(tag_hits) + member_weight * (len(own) + len(taught) + len(spoken))
            matches.append((-score, -len(own), position, number, {
                "slug": member.slug, "cluster_id": cluster.cluster_id, "type": member.type,
                "hook": member.hook, "score": round(score, 4), "tag_hits": sorted(tag_hits),
                "member_hits": sorted(own), "learned_hits": sorted(taught), "utterance_hits": sorted(spoken)}))
        matches.sort(key=lambda row: row[:4])
        result = {
            "query_tokens": sorted(tokens),
            "results": [row[4] for row in matches[:limit]],
            "total_matches": len(matches),
            "limit": limit,
            "cluster_file": self.cluster_path,
        }
        if not tokens:
            result["note"] = "the query has no routing words (only stopwords, numbers or single letters)"
        elif len(matches) > limit:
            result["note"] = f"showing the top {limit} of {len(matches)} matching member lines; raise limit for more"
        return search_result(cap_lists(result, ("results",), self.max_result_chars), loaded["problems"])

    def get_memory(self, slug):
        """The memory file of ``slug``: front matter fields and body. Only a slug of the store is
        accepted, and only a regular file inside the memory directory is read."""
        from harness.memorydir import parse_front_matter
        from router.errors import decode_utf8

        if not isinstance(slug, str) or not _SLUG_RE.match(slug):
            raise InputError(f"{slug!r} is not a memory slug: slugs are a-z, 0-9 and _, never a path",
                             fix="pass a slug from the route or search_memory results")
        ctx = self.context()
        found = ctx.index.find_member(slug)
        if found is None:
            raise InputError(f"memory {slug!r} is not in the store", path=self.cluster_path,
                             fix="pass a slug from the route or search_memory results")
        path = self._memory_file(slug)
        # JSON escapes at most ~6 characters per byte, and a body past the cap is cut anyway.
        data, size = _read_inside(path, self.memory_dir, self.max_result_chars * 4)
        cut = len(data) < size
        if cut:
            data = _without_partial_char(data)  # the read may end inside a multi-byte character
        text = decode_utf8(data, path, "memory file")
        meta, body = parse_front_matter(text)
        result = {
            "slug": slug, "cluster_id": found[0].cluster_id, "type": found[1].type, "hook": found[1].hook,
            "path": path, "bytes": size,
            "name": " ".join(str(meta.get("name") or "").split()),
            "description": " ".join(str(meta.get("description") or "").split()),
            "body": body,
        }

        def note():
            return {"body": {"shown_chars": len(result["body"]), "file_bytes": size},
                    "note": f"cut to fit the server's result cap of {self.max_result_chars} characters; "
                            f"read {path} for the rest"}

        if cut or json_size(result) > self.max_result_chars:
            result["truncated"] = note()
            for field in ("body", "description"):  # the body first; a huge description only if it must
                while json_size(result) > self.max_result_chars and result[field]:
                    excess = json_size(result) - self.max_result_chars
                    result[field] = result[field][: max(0, len(result[field]) - max(excess, 64))]
                    result["truncated"] = note()
        return memory_result(result)

    def _memory_file(self, slug):
        from router.store.memorystore import is_index_file, normalise_slug

        directory = self.memory_dir
        if not directory or not os.path.isdir(directory):
            raise InputError(f"no memory directory at {directory} ({self.memory_dir_how})",
                             fix="pass memory-router mcp --memory-dir DIR, or set memory_dir in memory-router.toml")
        try:
            names = os.listdir(directory)
        except OSError as err:
            raise InputError(f"cannot list the memory directory: {err.strerror or err}", path=directory) from None
        exact = slug + ".md"
        if exact in names:
            return os.path.join(directory, exact)
        candidates = sorted(n for n in names if n.endswith(".md") and not is_index_file(n)
                            and normalise_slug(n[:-3]) == slug)
        if not candidates:
            raise InputError(f"memory {slug!r} is in the store but has no file in the memory directory",
                             path=directory, fix=f"the file would be {exact}; check memory_dir")
        if len(candidates) > 1:
            raise InputError(f"memory files {', '.join(candidates)} all become slug {slug!r}", path=directory,
                             fix="rename or merge them")
        return os.path.join(directory, candidates[0])

    def record_feedback(self, prompt, slug, useful):
        from router.store.feedback import add_feedback

        if not self.learning:
            where = self.config.get("source") if self.config else "memory-router.toml"
            raise RefusedError("learning is off, so feedback is not recorded; nothing was written",
                               fix=f"set learning = true in {where} (docs/learning.md), then restart the server")
        if self.bundled:
            raise RefusedError("the server is serving the bundled example store; feedback is never written into "
                               "the installed package", fix="point --clusters or clusters in memory-router.toml at "
                                                           "your own cluster file")
        _check_prompt(prompt)
        if not isinstance(useful, bool):
            raise InputError(f"useful must be true or false, got {useful!r}", fix="pass useful: true or false")
        if not isinstance(slug, str) or not _SLUG_RE.match(slug):
            raise InputError(f"{slug!r} is not a memory slug: slugs are a-z, 0-9 and _",
                             fix="pass a slug from the route or search_memory results")
        ctx = self.context()
        hand_tags = self._load()["hand_tags"]
        result = add_feedback(self.learned_path(), prompt, slug, useful, index=ctx.index,
                              cap=self.config["learned_cap"], source="mcp", hand_tags=hand_tags)
        if result.get("written"):
            # The hook reads a compiled table: the feedback takes effect on the next prompt at no cost.
            from harness.context import compile_hook_table

            compile_hook_table(self.cluster_path, self.config)
        return feedback_result(result)

    def cluster_index(self):
        """The cluster index as Markdown: one line per cluster (id, size, tags, label)."""
        ctx = self.context()
        index = ctx.index
        head = [f"# Memory clusters: {len(index)} clusters, {len(index.members)} members",
                f"cluster file: {self.cluster_path}", ""]
        lines = []
        for cluster in index.clusters:
            fields = [cluster.cluster_id, str(len(cluster.members)), "tags: " + ", ".join(cluster.tags)]
            if cluster.label:
                fields.append("label: " + cluster.label)
            lines.append("- " + " \u00b7 ".join(fields))
        budget = self.max_result_chars - sum(len(h) + 1 for h in head) - 200
        shown = []
        used = 0
        for line in lines:
            if used + len(line) + 1 > budget:
                break
            shown.append(line)
            used += len(line) + 1
        text = "\n".join(head + shown)
        if len(shown) < len(lines):
            text += (f"\n\n(showing {len(shown)} of {len(lines)} clusters: the rest exceed the server's result "
                     f"cap of {self.max_result_chars} characters; search_memory finds any member)")
        return index_result(text + "\n")


def utterance_matches(tokens, table):
    """``{(cluster position, member number): {query words}}``: the members whose utterances
    (the table's ``utterance_postings``, ``router.routing.uttertable``) hold a query word's stem."""
    from router.routing.uttertable import stems_of_text

    postings = table.get("utterance_postings")
    if not postings:
        return {}
    found = {}
    for token in tokens:
        for key in stems_of_text(token):
            flat = postings.get(key, ())
            for i in range(1, len(flat) - 1, 2):
                found.setdefault((flat[i], flat[i + 1]), set()).add(token)
    return found


def _check_prompt(prompt, what="prompt"):
    if not isinstance(prompt, str) or not prompt.strip():
        raise InputError(f"{what} must be a non-empty string", fix=f"pass the {what} text")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise InputError(f"{what} is {len(prompt)} characters, over the server's limit of {MAX_PROMPT_CHARS}",
                         fix=f"pass the part of the {what} that matters")


def _without_partial_char(data):
    """``data`` (UTF-8 cut at an arbitrary byte) without a multi-byte character cut in two."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # the last lead byte (or ASCII): is its character complete?
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return data[:-back] if need > back else data
    return data


def _read_inside(path, directory, max_bytes):
    """``(up to max_bytes of the file, its size)``, refusing anything that resolves outside
    ``directory`` (a symlink out of it) or is not a regular file (a FIFO would block the server)."""
    real_dir = os.path.realpath(directory)
    real = os.path.realpath(path)
    if os.path.commonpath([real_dir, real]) != real_dir:
        raise RefusedError(f"{os.path.basename(path)} resolves outside the memory directory (to {real}); "
                           "it was not read", path=directory, fix="replace the symlink with the memory file itself")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(real, flags)
    except OSError as err:
        raise InputError(f"cannot read the memory file: {err.strerror or err}", path=path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedError("the memory file is not a regular file; it was not read", path=path,
                               fix="replace it with a Markdown file")
        chunks = []
        left = max_bytes
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st.st_size
    finally:
        os.close(fd)
