"""The router as one command sees it: the cluster file and the config found as the hook finds them
(``--clusters``/``--config``, then the hook's order, then the bundled example store), the router
context of one invocation (index, routing table, settings) and the ``route --json`` object that
``memory-router route`` prints and the MCP ``route`` tool returns."""

import os
import sys

from router import config as config_mod
from router.store.clusterfile import load_cluster_file
from router.configfile import load_config
from router.agenttext import hook_output, store_problems, veto_summary
from router.hooks.session import route_fresh


def resolve_cli_clusters(explicit=None, config=None, quiet=False, dirs=None):
    """The cluster file a CLI command uses: ``harness.project.resolve_cluster_file``'s policy (the
    hook's order; ``dirs``: a ``--project`` directory instead of the hook's), then the bundled
    example store, which is said on stderr."""
    from harness.project import BUNDLED_STORE, resolve_cluster_file

    path, how = resolve_cluster_file(explicit, config, dirs=dirs, bundled=True)
    if how == BUNDLED_STORE and not quiet:
        print(f"memory-router: using the bundled example store ({path})", file=sys.stderr)
    return path


def is_bundled(cluster_path):
    """True for the example store shipped in the package (never written to)."""
    return os.path.abspath(cluster_path) == os.path.abspath(config_mod.bundled_cluster_file())


def say_on_stderr(command):
    """A ``log`` for ``router.hooks.compiled``: one line on stderr, as ``memory-router COMMAND: ...``."""
    def log(message):
        print(f"memory-router {command}: {message}", file=sys.stderr, flush=True)
    return log


class RouterContext:
    """Index, routing table and settings for one CLI invocation. The table is the hook's own
    (``router.hooks.compiled.hook_table``: the compiled table, compiled now when it is stale), so
    a command shows the decision the hook makes; what the hook would log about it (a damaged
    learned file, a skipped row) goes to ``log``."""

    def __init__(self, cluster_path, settings, config=None, log=None):
        from router.hooks.compiled import hook_table

        self.cluster_path = cluster_path
        self.settings = settings
        self.config = config
        self.index = load_cluster_file(cluster_path)
        self.table = hook_table(cluster_path, config_mod.hook_learned_file(cluster_path, config), log)

    def skipped_rows(self):
        """``((file:line:col, message), ...)``: the bad rows the table was built without."""
        return tuple(self.table.get("skipped_rows", ()))

    def route(self, prompt):
        return route_fresh(prompt, self.table, self.settings, cwd=os.getcwd(), cluster_file=self.cluster_path,
                           log_as="route")


def compile_hook_table(cluster_path, config=None):
    """Compile the hook's routing table for ``cluster_path`` now (after a command wrote the
    store): with learning on in ``config``, its learned-terms file joins it as the hook's does.
    ``{"entry", "seconds"}`` (``router.hooks.compiled.compile_store``); the bundled store is
    compiled too (its table lives in the user's cache, never in the package)."""
    from router.hooks.compiled import compile_store

    return compile_store(cluster_path, config_mod.hook_learned_file(cluster_path, config))


def context_for(clusters=None, config_path=None, quiet=False, dirs=None, command="route"):
    """The ``RouterContext`` of ``--clusters``/``--config`` (either may be ``None``); ``dirs``: where
    the config and store are looked for (a ``--project`` directory; default: the hook's)."""
    config = load_config(config_path, dirs=dirs)
    settings = config_mod.settings_of(config)
    return RouterContext(resolve_cli_clusters(clusters, config, quiet=quiet, dirs=dirs), settings, config,
                         log=say_on_stderr(command))


def route_json(ctx, decision):
    """The ``route --json`` object (README): ``decision`` plus the cluster file, the settings and
    the exact hook output. The MCP ``route`` tool returns the same object, so a veto's exemplars
    are named here without their text (``router.agenttext.veto_summary``)."""
    result = dict(decision)
    if decision.get("veto"):
        result["veto"] = veto_summary(decision["veto"], name_exemplars(ctx, decision["veto"]))
    result["cluster_file"] = os.path.abspath(ctx.cluster_path)
    result["settings"] = ctx.settings
    text = decision["additional_context"]
    result["hook_output"] = hook_output(text) if text is not None else None
    if ctx.skipped_rows():
        result["store_problems"] = store_problems(ctx.skipped_rows())
    return result


def name_exemplars(ctx, veto, with_text=False):
    """The veto's nearest near-miss (or generic request) and the routed members' best exemplar, each
    ``{"kind", "similarity", "slug" | "cluster_id"}`` (the table holds codes, never text).
    ``with_text``: each also with its ``text``, read from the files beside the store, for a person
    at a terminal (``memory-router route``); that text never goes to a model."""
    from router.routing.veto import describe_code

    clusters = ctx.index.clusters

    def exemplar(entry):
        if not entry:
            return None
        code, similarity = entry
        kind, *where = describe_code(code)
        out = {"kind": kind, "similarity": similarity}
        try:
            if kind == "member":
                member = clusters[where[0]].members[where[1]]
                out["slug"] = member.slug
                if with_text:
                    out["text"] = member.hook if where[2] == 0 else _exemplar_text(ctx, kind, member.slug, where[2] - 1)
            elif kind == "near_miss":
                out["cluster_id"] = clusters[where[0]].cluster_id
                if with_text:
                    out["text"] = _exemplar_text(ctx, kind, out["cluster_id"], where[1])
            elif with_text:
                out["text"] = _exemplar_text(ctx, kind, None, where[0])
        except (LookupError, OSError, ValueError):
            out["text"] = None   # the file changed since the table was built
        return out

    return {"nearest_negative": exemplar(veto.get("nearest_negative")),
            "best_member_exemplar": exemplar(veto.get("best_member"))}


def _exemplar_text(ctx, kind, owner, number):
    from router.store.nearmisses import nearmisses_by_cluster, read_generic_negatives, read_nearmisses
    from router.store.utterances import read_utterances, utterances_by_slug

    if kind == "member":
        return utterances_by_slug(read_utterances(config_mod.utterances_path(ctx.cluster_path), skipped=[]))[owner][number]
    if kind == "near_miss":
        return nearmisses_by_cluster(read_nearmisses(config_mod.nearmisses_path(ctx.cluster_path), skipped=[]))[owner][number]
    return read_generic_negatives()[number]


def typed_words(prompt):
    """``{routing token or stem: [the prompt's words, as typed, that give it]}``: so a display can
    show ``galaxy (galax)`` where the router matched the stem ``galax``. Covers both providers'
    forms: the tokens (``router.tokens.tokenize``, identifiers whole and split) and their stems."""
    from router.stem import stem
    from router.tokens import WORD_RE, tokenize

    found = {}
    for word in WORD_RE.findall(prompt):
        for token in tokenize(word):
            for key in (token, token if "_" in token else stem(token)):
                words = found.setdefault(key, [])
                if word not in words:
                    words.append(word)
    return found


def as_typed(tokens, typed):
    """``tokens`` shown as the prompt's words that gave them, the token beside each word it differs
    from (``galaxy (galax)``, ``a54``); a token no typed word gives (a fuzzy match) stays alone."""
    shown = []
    for token in tokens:
        words = typed.get(token) or []
        if not words:
            shown.append(token)
        elif [w.lower() for w in words] == [token]:
            shown.append(words[0])
        else:
            shown.append(f"{'/'.join(words)} ({token})")
    return shown


def require_valid_config(explicit=None, project=None):
    """Raise the ``ConfigError`` (exit 2) of a broken config this invocation could read: its
    ``--config`` (``explicit``), else the one found in $CLAUDE_PROJECT_DIR, the current directory
    or ``--project`` (``project``).

    Run by ``harness.cli.main`` before every command, so a broken ``memory-router.toml`` stops
    each one the same way (the README's promise), not only those that happen to route."""
    from router.configfile import find_config

    if explicit:
        load_config(explicit)
        return
    dirs = config_mod.project_dirs()
    if isinstance(project, str) and project:
        dirs.append(os.path.abspath(os.path.expanduser(project)))
    for directory in dirs:
        find_config([directory])
