"""Reading an engine's answer (docs/enrich.md): its text parsed as one JSON value, then checked
against the shipped schema (``enrich-protocol.schema.json``, through ``enrich_protocol.validator``).

An answer is untrusted input, whoever wrote it: a confused or hostile model, or a program that
lies. Each schema error's path says what goes: one utterance, one slug's list, one tag, or the
whole answer; what no schema can say (a Unicode category, a repeat, a taken id, an everyday tag,
the request's own per-memory limit) is checked by hand after it. Every note says what was dropped
and why, and never echoes more than a short, escaped piece of what the model wrote.
"""

import json
import re
import unicodedata
from collections import namedtuple

from harness.clusters.enrich_protocol import (
    DEFAULT_PER_MEMORY,
    ID_PREFIX,
    LABEL_PROTOCOL,
    MAX_ID_CHARS,
    MAX_LABEL_CHARS,
    MAX_TAGS,
    asked_slugs,
    load_schema,
    validator,
)
from router.store.utterances import MAX_UTTERANCE_CHARS, clean_utterance

MAX_ANSWER_BYTES = 2_000_000       # an answer past this is refused unread (a flood, not an answer)

_FENCE_RE = re.compile(r"\A```[A-Za-z]*[ \t]*\r?\n(.*?)\r?\n```\Z", re.S)
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn"))

AnswerCheck = namedtuple("AnswerCheck", "utterances notes refused")
AnswerCheck.__doc__ = ("What was kept of an enrich answer: ``{slug: [utterance, ...]}`` (asked slugs only), "
                       "notes (what was dropped and why), and ``refused`` (why nothing was kept) or None.")
LabelCheck = namedtuple("LabelCheck", "cluster_id label tags notes refused")


class AnswerError(ValueError):
    """An answer that is not one JSON value (the whole cluster is refused)."""


def show(value, limit=40):
    """A short, escaped rendering of something a model wrote, safe to print on one line."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=str)
    text = "".join(ch if ch.isprintable() and ch.isascii() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)
    return repr(text[:limit] + ("..." if len(text) > limit else ""))


def parse_answer_text(text):
    """The JSON value of an answer's text: the whole text, or one fenced code block that is all
    of it (a model's habit). Anything else raises ``AnswerError``."""
    if isinstance(text, bytes):
        if len(text) > MAX_ANSWER_BYTES:
            raise AnswerError(f"the answer is {len(text):,} bytes (at most {MAX_ANSWER_BYTES:,})")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise AnswerError("the answer is not UTF-8") from None
    stripped = text.strip()
    if not stripped:
        raise AnswerError("the answer is empty")
    fenced = _FENCE_RE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        return json.loads(stripped)
    except RecursionError:
        raise AnswerError("the answer is nested too deep") from None
    except ValueError as err:
        raise AnswerError(f"the answer is not JSON ({getattr(err, 'msg', err)} at character "
                          f"{getattr(err, 'pos', '?')}; it starts {show(stripped, 30)})") from None


def _hidden_characters(text):
    """Characters of a Unicode category the schema's pattern cannot name (format, surrogate, private,
    unassigned; and C1 controls): a bidi override or a zero-width space in an utterance."""
    return any(unicodedata.category(ch) in _HIDDEN_CATEGORIES for ch in text)


def schema_errors(kind, value):
    """``{path: [validator keyword, ...]}`` of every way ``value`` breaks ``$defs/kind``, each path
    a tuple of keys and indexes from the root (``()``: the value itself)."""
    found = {}
    for error in validator(kind).iter_errors(value):
        found.setdefault(tuple(error.absolute_path), []).append(error.validator)
    return found


# Why the schema refused one utterance or near-miss, by the keyword that failed.
_DROPPED_BY = {"type": "not a string", "minLength": "empty", "maxLength": f"over {MAX_UTTERANCE_CHARS} characters",
               "pattern": "with control or invisible characters"}


def _item_reason(keywords):
    return _DROPPED_BY.get(keywords[0], "that broke the protocol")


def _kept_text(value, seen):
    """The cleaned text of a string the schema accepted, and why not when it is not kept: the rules
    no schema can say (a Unicode category, whitespace alone, a repeat after folding case)."""
    if _hidden_characters(value.replace("\t", " ").replace("\n", " ").replace("\r", " ")):
        return None, "with control or invisible characters"
    text = clean_utterance(value)
    if not text:
        return None, "empty"
    if text.casefold() in seen:
        return None, "repeated"
    return text, None


def _count(n, what):
    return f"{n} {what}"


def check_enrich_answer(answer, slugs, per_memory):
    """Keep what is usable of an enrich answer for the asked ``slugs``; see ``AnswerCheck``. The
    shipped schema (``$defs/enrich_answer``) judges the shape and each utterance; an error at a
    path drops what is there (one utterance, one slug's list) or, at the root, refuses the answer."""
    errors = schema_errors("enrich_answer", answer)
    if () in errors or "type" in errors.get(("utterances",), ()):
        got = type(answer).__name__ if not isinstance(answer, dict) else "an object without an \"utterances\" object"
        return AnswerCheck({}, [], f"the answer is not {{\"utterances\": {{slug: [...]}}}} (got {got}); the "
                                   "engine must answer with the object docs/enrich.md shows")
    asked = set(slugs)
    notes, kept = [], {}
    unasked = [key for key in answer["utterances"] if key not in asked]
    dropped = dict.fromkeys(("not a string", "empty", f"over {MAX_UTTERANCE_CHARS} characters",
                             "with control or invisible characters", "that broke the protocol", "repeated",
                             f"past {per_memory} per memory"), 0)
    not_lists, missing = [], []
    for slug in slugs:
        if slug not in answer["utterances"]:
            missing.append(slug)
            continue
        if ("utterances", slug) in errors:
            not_lists.append(slug)
            continue
        texts, seen = [], set()
        for number, value in enumerate(answer["utterances"][slug]):
            why = errors.get(("utterances", slug, number))
            text, hand = (None, _item_reason(why)) if why else _kept_text(value, seen)
            if text is not None and len(texts) >= per_memory:
                text, hand = None, f"past {per_memory} per memory"
            if text is None:
                dropped[hand] += 1
                continue
            seen.add(text.casefold())
            texts.append(text)
        if texts:
            kept[slug] = texts
        else:
            missing.append(slug)
    extra_keys = [key for key in answer if key not in ("utterances", "near_misses")]
    if unasked:
        notes.append(f"ignored {_count(len(unasked), 'slug(s)')} not asked for: "
                     + ", ".join(show(k) for k in unasked[:3]) + (", ..." if len(unasked) > 3 else ""))
    if not_lists:
        notes.append("refused utterances that are not a list for " + ", ".join(not_lists))
    for why, n in dropped.items():
        if n:
            notes.append(f"dropped {n} utterance(s) {why}")
    if extra_keys:
        notes.append(f"ignored {_count(len(extra_keys), 'key(s)')} besides \"utterances\" and \"near_misses\"")
    if not kept and not slugs:
        return AnswerCheck({}, notes, None)
    if not kept:
        return AnswerCheck({}, notes, "no usable utterance for any memory asked about")
    if missing:
        notes.append("nothing usable for " + ", ".join(sorted(set(missing))) + " (asked again next run)")
    return AnswerCheck(kept, notes, None)


NearMissCheck = namedtuple("NearMissCheck", "texts notes answered")
NearMissCheck.__doc__ = ("What was kept of an answer's near-misses: the texts, notes on what was dropped, and "
                         "whether the answer had the key at all (a /1 engine's has not).")


def check_near_misses(answer, limit):
    """Keep what is usable of an answer's ``near_misses`` (at most ``limit``): the schema's rules for
    an utterance, then the same hand rules (no invisible characters, no repeats)."""
    if not isinstance(answer, dict) or "near_misses" not in answer:
        return NearMissCheck([], [], False)
    errors = schema_errors("enrich_answer", {"utterances": {}, "near_misses": answer["near_misses"]})
    if ("near_misses",) in errors:
        return NearMissCheck([], ["refused near_misses that are not a list"], True)
    texts, seen, dropped = [], set(), 0
    for number, value in enumerate(answer["near_misses"]):
        text = None if ("near_misses", number) in errors else _kept_text(value, seen)[0]
        if text is None or len(texts) >= limit:
            dropped += 1
            continue
        seen.add(text.casefold())
        texts.append(text)
    notes = [f"dropped {dropped} near-miss(es) that broke the protocol or the limit"] if dropped else []
    return NearMissCheck(texts, notes, True)


def clean_id(value, taken=()):
    """A cluster id from a model's word (lowercased; the schema has judged its characters), or None:
    ``layer1_`` added, at most ``MAX_ID_CHARS`` words, not in ``taken``."""
    words = value.strip().lower()
    if words.startswith(ID_PREFIX):
        words = words[len(ID_PREFIX):]
    if not words or len(words) > MAX_ID_CHARS or "__" in words or words.endswith("_"):
        return None
    candidate = ID_PREFIX + words
    return None if candidate in taken else candidate


def _folded(cluster):
    """The label answer's cluster with its id and tags stripped and lowercased (a model's habit the
    protocol forgives), for the schema to judge."""
    folded = dict(cluster)
    if isinstance(folded.get("id"), str):
        folded["id"] = folded["id"].strip().lower()
    if isinstance(folded.get("tags"), list):
        folded["tags"] = [tag.strip().lower() if isinstance(tag, str) else tag for tag in folded["tags"]]
    return folded


def check_label_answer(answer, taken_ids=(), is_everyday=lambda word: False, claimed=()):
    """Keep what is usable of a label answer; see ``LabelCheck``. The shipped schema
    (``$defs/label_answer``) judges each field; by hand: the id's length without its prefix and the
    taken ids, the label's invisible characters, and the tags ``is_everyday(word)`` refuses (the
    builder's rule: a tag hit alone reaches the score floor) or other clusters hold (``claimed``).
    A field the answer leaves out is left to the builder, without a note."""
    cluster = answer.get("cluster") if isinstance(answer, dict) else None
    if not isinstance(cluster, dict):
        return LabelCheck(None, None, (), [], "the answer is not {\"cluster\": {\"id\", \"label\", \"tags\"}}")
    cluster = _folded(cluster)
    errors = schema_errors("label_answer", {"cluster": cluster})
    notes = []
    cluster_id = None
    if "id" in cluster:
        cluster_id = None if ("cluster", "id") in errors else clean_id(cluster["id"], taken_ids)
        if cluster_id is None:
            notes.append(f"id {show(cluster['id'])} refused (lowercase words joined by _, at most {MAX_ID_CHARS} "
                         "characters, not another cluster's)")
    label = cluster.get("label")
    if label is not None:
        label = None if ("cluster", "label") in errors or _hidden_characters(label) else clean_utterance(label)
        if not label:
            notes.append(f"label {show(cluster['label'])} refused (text under {MAX_LABEL_CHARS} characters)")
            label = None
    tags, refused_tags = [], []
    raw_tags = cluster.get("tags") if "type" not in errors.get(("cluster", "tags"), ()) else []
    for number, word in enumerate(raw_tags or ()):
        if ("cluster", "tags", number) in errors or is_everyday(word) or word in claimed or word in tags:
            refused_tags.append(word)
        elif len(tags) < MAX_TAGS:
            tags.append(word)
    if refused_tags:
        notes.append(f"dropped {len(refused_tags)} tag(s) (everyday, not one word, repeated or another "
                     "cluster's): " + ", ".join(show(t, 20) for t in refused_tags[:4]))
    if cluster_id is None and label is None and not tags:
        return LabelCheck(None, None, (), notes, "nothing usable in the answer (no valid id, label or tag)")
    return LabelCheck(cluster_id, label, tuple(tags), notes, None)


def answer_tool_schema(request):
    """The input schema of the tool an SDK engine forces the model to call: the shipped schema's
    answer for this request (its slugs, at most ``per_memory`` each), self-contained (structured
    output; the answer is still checked when it comes back)."""
    defs = load_schema()["$defs"]
    if request.get("protocol") == LABEL_PROTOCOL:
        return defs["label_answer"]
    slugs = asked_slugs(request)
    item = {"type": "array", "items": defs["utterance"],
            "maxItems": request.get("per_memory", DEFAULT_PER_MEMORY)}
    return {"type": "object", "required": ["utterances"], "properties": {"utterances": {
        "type": "object", "required": slugs, "properties": {slug: item for slug in slugs},
        "additionalProperties": False}}}
