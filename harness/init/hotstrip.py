"""The hot strip ``memory-router init`` proposes: the few memories a slim MEMORY.md keeps always
loaded because the agent would not think to ask for them, corrections and environment gotchas
whose plausible answer is the wrong one (spec §11: "confabulation catchers"). Pure: memories in,
slugs out; the user confirms or edits the proposal (``harness.init.cli``) and it is written to the
config's ``hot_strip``, where ``slim render`` reads it.

How a memory is judged, from its hook line alone (the line the hot strip would show):

- ``user`` memories of the profile qualify too (issue 29 item 4): how the user wants answers
  (the answer first, no tables, no emoji...) applies to every answer and who the user is (their
  role) to every prompt, yet no prompt names them, so the router would never send them; at most
  ``PROFILE_CAP`` of them, the answer style first; the rest of the ``user`` memories (teammates,
  hardware, timezone) reach the agent through the router when a prompt names them, and
  ``slim render`` names each one that leaves the always-loaded index;
- otherwise only ``feedback`` (a correction) and ``env`` (an environment gotcha) memories
  qualify; project facts reach the agent through the router when a prompt names them;
- what went wrong once weighs most: a hook recording the damage of the plausible move (``lost``,
  ``broke``, ``gone``, ``erases``, ``nearly``, ``half-applied``...), that the obvious fix did not
  fix it, or when it happened (a date, a month, a run number) is a hard-won correction;
- what is at stake: production, data, secrets, destructive commands, schemas, hours of work;
- a hook that refuses the obvious move (``never``, ``instead``, ``before``, ``not``...) counts too;
- corrections weigh a little more than gotchas; ties keep the index order.

Written against the bundled example store's hand-picked strip; on the second held-out store
(benchmarks/heldout2, never used to choose these words) see docs/init.md for the overlap.

At most ``HOT_STRIP_CAP`` slugs, and no more than the slim index's byte budget leaves after the
router lines (``harness.slim.index.SLIM_TARGET_BYTES``)."""

import re

from harness.slim import index as slim

HOT_STRIP_CAP = 10
PROFILE_CAP = 3  # the answer style and the role: more would crowd out the corrections
MIN_SCORE = 3  # below: a rule, not a trap
QUALIFYING_TYPES = {"feedback": 1, "env": 0}
# A profile memory ranks above every correction (at most 7): it applies to every prompt.
STYLE_SCORE, ROLE_SCORE = 10, 8
_STYLE = re.compile(r"\b(answers?|repl(?:y|ies)|responses?|explanations?|tables?|emoji|terse|verbose|padding|"
                    r"praise|bullet|prose|tone|format(?:ted|ting)?|wants? the|prefers?)\b", re.I)
_ROLE = re.compile(r"\b(developer|engineer|scientist|researcher|consultant|analyst|designer|student|"
                   r"maintainer|founder|programmer|role)\b", re.I)
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_INCIDENT = re.compile(r"\b(lost|broke|broken|gone|erases?|nearly|half-applied|drove|hid|killed|kills|merged|"
                       r"corrupt\w*|leaked?|wiped|deleted|missed|sat a week|did ?n[o']t (?:fix|help)|"
                       r"still (?:fails|broken))\b|\b20\d\d-\d\d\b|"
                       rf"\bin (?:{_MONTHS})\b|\brun \d", re.I)
_STAKES = re.compile(r"\b(prod|production|data|secrets?|tokens?|keys?|passwords?|destroy|delete|rm|drop|"
                     r"overwrit\w*|force|schema|migrations?|archive|audit|irreversible|published|\d+ ?h|hours?|"
                     r"purged?|quota|expired?|silently)\b", re.I)
_REFUSES = re.compile(r"\b(never|instead|before|not|only|otherwise|without|rather than|even)\b|n't\b", re.I)


def hot_score(memory):
    """How strongly ``memory`` (type, hook) reads as a confabulation catcher; 0: not one."""
    if memory.type == "user":
        return profile_score(memory)
    base = QUALIFYING_TYPES.get(memory.type)
    if base is None:
        return 0
    hook = memory.hook
    incident = bool(_INCIDENT.search(hook))
    stakes = min(2, len({m.group(0).lower() for m in _STAKES.finditer(hook)}))
    refuses = bool(_REFUSES.search(hook))
    if not (incident or stakes or refuses):
        return 0  # a plain fact: nothing tempts the agent to the wrong answer
    return base + 3 * incident + stakes + refuses


def profile_score(memory):
    """A ``user`` memory's place in the strip: ``STYLE_SCORE`` for how the user wants answers,
    ``ROLE_SCORE`` for who the user is (a memory about a teammate is neither), else 0."""
    if "team" in memory.slug.split("_"):
        return 0  # a teammate, reached when a prompt names them
    if _STYLE.search(memory.hook):
        return STYLE_SCORE
    if _ROLE.search(memory.hook) or "role" in memory.slug.split("_"):
        return ROLE_SCORE
    return 0


def strip_bytes(memories):
    """The bytes the hot-strip lines of ``memories`` take in the slim index."""
    return sum(len(f"- {m.slug} {slim.EM_DASH} {m.hook}\n".encode("utf-8")) for m in memories)


def propose(memories, router_lines=(), cap=HOT_STRIP_CAP, target_bytes=slim.SLIM_TARGET_BYTES):
    """The proposed hot strip: slugs, best first, at most ``cap``, within the bytes the slim
    index has left beside its ``router_lines`` (the layer-0 router it will hold)."""
    skeleton = slim.assemble_slim_index([], list(router_lines))
    budget = target_bytes - len(skeleton.encode("utf-8"))
    ranked = sorted(((hot_score(m), position, m) for position, m in enumerate(memories)),
                    key=lambda item: (-item[0], item[1]))
    chosen, used, profile = [], 0, 0
    for score, _position, memory in ranked:
        if score < MIN_SCORE or len(chosen) >= cap:
            break
        size = strip_bytes([memory])
        if used + size > budget or (memory.type == "user" and profile >= PROFILE_CAP):
            continue
        chosen.append(memory.slug)
        used += size
        profile += memory.type == "user"
    return chosen


def parse_answer(answer, proposal, known):
    """The hot strip a user's answer to the proposal means. Empty (Enter) or ``y``: the proposal;
    ``-`` or ``none``: no hot strip; otherwise slugs or proposal numbers (1-based), separated by
    spaces or commas: exactly those, in that order. An unknown slug or a number out of range is a
    ``ValueError`` naming it (the face asks again)."""
    text = answer.strip()
    if text.lower() in ("", "y", "yes"):
        return list(proposal)
    if text.lower() in ("-", "none", "n", "no"):
        return []
    chosen = []
    for word in re.split(r"[\s,]+", text):
        if not word:
            continue
        if word.isdigit():
            number = int(word)
            if not 1 <= number <= len(proposal):
                raise ValueError(f"{word} is not one of the proposal's numbers (1 to {len(proposal)})")
            slug = proposal[number - 1]
        elif word in known:
            slug = word
        else:
            raise ValueError(f"{word!r} is no memory of this store")
        if slug not in chosen:
            chosen.append(slug)
    return chosen
