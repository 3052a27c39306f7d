"""The router as one command sees it: the cluster file and the config found as the hook finds them
(``--clusters``/``--config``, then the hook's order, then the bundled example store), the router
context of one invocation (index, routing table, settings) and the ``route --json`` object that
``memory-router route`` prints and the MCP ``route`` tool returns."""

import os
import sys

from router import config as config_mod
from router.store.clusterfile import load_cluster_file
from router.configfile import load_config
from router.hookio import hook_output
from router.providers.provider import build_table
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


class RouterContext:
    """Index, routing table and settings for one CLI invocation."""

    def __init__(self, cluster_path, settings, config=None):
        self.cluster_path = cluster_path
        self.settings = settings
        self.config = config
        self.index = load_cluster_file(cluster_path)
        # The hook's table: with learning on, the learned terms beside the cluster file join it
        # (a damaged learned file is an error here, exit 2; the hook routes without it).
        learned = None
        if config and config.get("learning"):
            from router.store.learned import learned_terms_for

            learned = learned_terms_for(cluster_path)
        self.table = build_table(self.index, learned_terms=learned)

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


def context_for(clusters=None, config_path=None, quiet=False, dirs=None):
    """The ``RouterContext`` of ``--clusters``/``--config`` (either may be ``None``); ``dirs``: where
    the config and store are looked for (a ``--project`` directory; default: the hook's)."""
    config = load_config(config_path, dirs=dirs)
    settings = config_mod.settings_of(config)
    return RouterContext(resolve_cli_clusters(clusters, config, quiet=quiet, dirs=dirs), settings, config)


def route_json(ctx, decision):
    """The ``route --json`` object (README): ``decision`` plus the cluster file, the settings and
    the exact hook output. The MCP ``route`` tool returns the same object."""
    result = dict(decision)
    if decision.get("veto"):
        result["veto"] = explain_veto(ctx, decision["veto"])
    result["cluster_file"] = os.path.abspath(ctx.cluster_path)
    result["settings"] = ctx.settings
    text = decision["additional_context"]
    result["hook_output"] = hook_output(text) if text is not None else None
    return result


def explain_veto(ctx, veto):
    """The veto's verdict with its exemplars named: the nearest near-miss (or generic request) and
    the routed members' best exemplar, each with its text and similarity (the table holds codes,
    never text; the texts are read here, for the person asking, from the files beside the store)."""
    from router.routing.veto import describe_code
    from router.store.nearmisses import nearmisses_by_cluster, read_generic_negatives, read_nearmisses
    from router.store.utterances import read_utterances, utterances_by_slug

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
                texts = utterances_by_slug(read_utterances(config_mod.utterances_path(ctx.cluster_path)))
                out["slug"] = member.slug
                out["text"] = member.hook if where[2] == 0 else texts[member.slug][where[2] - 1]
            elif kind == "near_miss":
                cluster_id = clusters[where[0]].cluster_id
                near = nearmisses_by_cluster(read_nearmisses(config_mod.nearmisses_path(ctx.cluster_path)))
                out["cluster_id"] = cluster_id
                out["text"] = near[cluster_id][where[1]]
            else:
                out["text"] = read_generic_negatives()[where[0]]
        except (LookupError, OSError, ValueError):
            out["text"] = None   # the file changed since the table was built
        return out

    shown = {key: value for key, value in veto.items() if key not in ("best_member", "nearest_negative", "negatives")}
    shown["nearest_negative"] = exemplar(veto.get("nearest_negative"))
    shown["best_member_exemplar"] = exemplar(veto.get("best_member"))
    return shown


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
