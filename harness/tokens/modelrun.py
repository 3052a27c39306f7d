"""(c) of ``tokens report``: the modelled session, run through the hook's own code.

The routed session: the prompt set in ``sessionmodel.spread_order`` (any prefix samples the whole
set), cycled, each prompt routed by the configured provider (``router.providers.provider.route``)
and sent through the hook's session stage (``transcripts.replay.SessionStage``: the very
``session_step`` and ``after_compaction`` the hook calls), so a line the session holds is never
paid twice and a compaction makes the SessionStart hook send again what the last prompt relied on.
With ``--history`` the sessions are the user's own, with their own API calls and compactions.

The worst case: the worst this router can do on this store: every prompt sends the longest lines
the session does not hold yet that one injection can carry (``lines_per_injection`` of at most two
clusters, under ``max_context_chars``), until every line is held or a compaction forgets them.
"""

from harness.tokens import counts as tk
from harness.tokens import sessionmodel
from router.routing.injection import line_key, render_injection

SESSION_START_PREFIX = "<system-reminder>\nSessionStart hook additional context: "
# Prompts a modelled session routes, at most: the break-even is scanned this far past --turns.
HORIZON_CAP = 1000


def sent_tokens(text, counter, prefix=tk.REMINDER_PREFIX):
    """Tokens of what the model sees for a hook's text (0: nothing sent)."""
    return counter.count(prefix + text + tk.REMINDER_SUFFIX) if text else 0


class RoutedSender:
    """``send``/``compact`` for ``sessionmodel.run_session`` over ``sequence`` (prompt texts)."""

    def __init__(self, sequence, table, settings, cluster_path, counter):
        from transcripts.replay import SessionStage

        self.sequence, self.table, self.settings, self.cluster_path = sequence, table, settings, cluster_path
        self.counter = counter
        self.stage = SessionStage("tokens-report", ["tokens", 0, 0])
        self.decisions = {}

    def decision(self, prompt):
        from router.providers.provider import route

        if prompt not in self.decisions:
            self.decisions[prompt] = route(prompt, self.table, self.settings, cluster_file=self.cluster_path,
                                           log_as="tokens")
        return self.decisions[prompt]

    def send(self, index):
        prompt = self.sequence[index]
        plan = self.stage.send(self.decision(prompt), prompt, self.settings, index + 1)
        return sent_tokens(plan["text"], self.counter)

    def compact(self, index):
        return sent_tokens(self.stage.compact(index + 1), self.counter, SESSION_START_PREFIX)


class WorstSender:
    """``send``/``compact`` for the worst case (``sessionmodel.worst_lines`` at every prompt)."""

    def __init__(self, cluster_file, settings, counter):
        self.settings, self.counter = settings, counter
        self.limit = settings.get("lines_per_injection") or settings["line_cap"]
        self.max_chars = settings["max_context_chars"]
        self.clusters = []
        for cluster in cluster_file.clusters:
            rows = [(line_key(m.slug, m.hook), len(f"- {m.slug} \u2014 {m.hook}".encode("utf-8")),
                     {"cluster_id": cluster.cluster_id, "slug": m.slug, "hook": m.hook}) for m in cluster.members]
            self.clusters.append((cluster.cluster_id, rows))
        self.total_lines = sum(len(rows) for _cid, rows in self.clusters)
        self.held = set()
        self.last = ((), [])

    def send(self, _index):
        clusters, lines = sessionmodel.worst_lines(self.clusters, self.held, self.limit)
        if not lines:
            self.last = ((), [])
            return 0
        total = sum(len(rows) for cid, rows in self.clusters if cid in clusters)
        text, kept = render_injection(list(clusters), lines, 0, total, self.max_chars)
        self.held.update(line_key(line["slug"], line["hook"]) for line in kept)
        self.last = (clusters, kept)
        return sent_tokens(text, self.counter)

    def compact(self, _index):
        # The SessionStart hook sends again at most what the last prompt relied on: at worst, its lines.
        clusters, kept = self.last
        self.held = {line_key(line["slug"], line["hook"]) for line in kept}
        if not kept:
            return 0
        header = render_injection(list(clusters), kept, 0, len(kept), self.max_chars)[0]
        return sent_tokens(header, self.counter, SESSION_START_PREFIX)


def prompt_sequence(prompts, count):
    """``count`` prompts: ``prompts`` in spread order, cycled."""
    spread = [prompts[i] for i in sessionmodel.spread_order(len(prompts))]
    return sessionmodel.cycle(spread, count)


def model_prompt_set(prompts, turns, table, settings, cluster_path, cluster_file, counter, memory, compaction,
                     calls_per_prompt=1):
    """The routed and worst scenarios over a prompt set (a suite's or the store's utterances):
    ``{"routed": totals, "worst": totals, "steps": {name: [Step]}}``; the totals are over
    ``turns`` prompts, the break-even over a horizon past them."""
    horizon = max(turns, min(10 * len(prompts), HORIZON_CAP))
    sequence = prompt_sequence(prompts, horizon)
    out = {"steps": {}}
    flat, slim = memory
    for name, sender in (("routed", RoutedSender(sequence, table, settings, cluster_path, counter)),
                         ("worst", WorstSender(cluster_file, settings, counter))):
        steps = sessionmodel.run_session(horizon, sender.send, sender.compact, slim, calls_per_prompt, **compaction)
        out[name] = sessionmodel.scenario(steps[:turns], steps, flat, slim)
        out["steps"][name] = steps
    out["routed"]["distinct_prompts_routed"] = len(set(sequence[:turns]))
    return out


def model_history(sessions, table, settings, cluster_path, cluster_file, counter, memory):
    """The routed and worst scenarios over the user's own sessions (``transcripts.evidence``'s
    ``SessionEvidence``s), with each turn's own API calls and compactions; a new session starts
    with an empty history (counted as a compaction that sends nothing again)."""
    from router.providers.provider import route
    from transcripts.replay import SessionStage

    flat, slim = memory
    steps = {"routed": [], "worst": []}
    for session in sessions:
        stage = SessionStage(session.session_id or session.path, ["tokens", 0, 0])
        worst = WorstSender(cluster_file, settings, counter)
        turns = list(session.prompts)
        for number, turn in enumerate(turns, 1):
            last = number == len(turns)
            sent = 0
            if turn.skip is None:
                decision = route(turn.prompt, table, settings, cwd=session.cwd, cluster_file=cluster_path,
                                 log_as="tokens")
                sent = sent_tokens(stage.send(decision, turn.prompt, settings, number)["text"], counter)
            calls = max(1, turn.calls)
            resent = sent_tokens(stage.compact(number), counter, SESSION_START_PREFIX) if turn.compacted else 0
            steps["routed"].append(sessionmodel.Step(sent, calls, turn.compacted or last, 0 if last else resent))
            worst_sent = worst.send(number) if turn.skip is None else 0
            worst_resent = worst.compact(number) if turn.compacted else 0
            steps["worst"].append(sessionmodel.Step(worst_sent, calls, turn.compacted or last,
                                                    0 if last else worst_resent))
    out = {"steps": steps}
    compactions = sum(1 for session in sessions for turn in session.prompts if turn.compacted)
    for name in ("routed", "worst"):
        out[name] = sessionmodel.scenario(steps[name], steps[name], flat, slim)
        # A session's end empties the history too, but it is not one of the sessions' compactions.
        out[name]["compactions"] = compactions
    out["routed"]["sessions"] = len(sessions)
    return out
