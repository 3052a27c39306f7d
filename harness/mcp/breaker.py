"""The MCP server's circuit breaker for a custom provider that keeps overrunning its budget
(issue 24 item 19; docs/mcp.md#a-provider-that-keeps-overrunning).

A custom provider runs in a child process killed at ``provider_timeout_ms``
(``router.providers.providerproc``), so an overrun leaves nothing behind; but each one still costs the
whole budget and answers nothing. After ``threshold`` overruns in a row the server stops calling
it for ``cooloff_s`` seconds: ``route`` answers a tool error naming the provider, its budget, when
it is tried again and the fix, at once. Not the built-in fallback: the ``route`` tool promises the
decision the prompt hook makes, and the hook with this provider injects nothing, so lines from
another provider would be context the user's prompts never get. ``search_memory`` and
``get_memory`` never call a provider and keep working.

After the cool-off the next ``route`` calls the provider once: an answer in time closes the
breaker, another overrun opens it again for a new cool-off. An overrun is a call that failed
after using its whole budget (``is_overrun``); a provider that fails at once (an import error)
costs nothing and is not counted. Plain Python with an injectable clock, so it is tested
without waiting.
"""

import time

from router.errors import RefusedError

OVERRUNS_TO_OPEN = 3
COOLOFF_SECONDS = 60.0


def is_overrun(decision, elapsed_s, budget_s):
    """True when a custom provider's ``decision`` is the silent one of a failure
    (``router.providers.provider.route``: explanation ``failed: ...``) and the call took its whole budget."""
    explanation = decision.get("explanation") if isinstance(decision, dict) else None
    return isinstance(explanation, str) and explanation.startswith("failed: ") and elapsed_s >= budget_s


class ProviderBreaker:
    """Counts one provider's overruns in a row; open (refusing) for ``cooloff_s`` after
    ``threshold`` of them."""

    def __init__(self, threshold=OVERRUNS_TO_OPEN, cooloff_s=COOLOFF_SECONDS, clock=time.monotonic):
        self.threshold = threshold
        self.cooloff_s = cooloff_s
        self.clock = clock
        self.overruns = 0
        self.open_until = None
        self.provider = None

    def check(self, provider, budget_ms):
        """Raise ``RefusedError`` while the breaker is open for ``provider``; otherwise return
        (after the cool-off: the one trial call). A different provider (the config changed)
        starts from nothing."""
        if provider != self.provider:
            self.provider, self.overruns, self.open_until = provider, 0, None
        if self.open_until is None:
            return
        left = self.open_until - self.clock()
        if left <= 0:
            return
        raise RefusedError(
            f"provider {provider} overran its budget of {budget_ms} ms on {self.overruns} calls in a row, so "
            f"this server does not call it for the next {left:.0f} s (search_memory and get_memory still work)",
            fix="make the provider answer within provider_timeout_ms, or set provider = \"weighted\" in "
                "memory-router.toml; restarting the server resets this")

    def record(self, provider, overran):
        """Count one call's outcome: an overrun adds one (opening at the threshold, or again at
        once after a failed trial), an answer in time closes the breaker."""
        if provider != self.provider:
            self.provider, self.overruns, self.open_until = provider, 0, None
        if not overran:
            self.overruns, self.open_until = 0, None
            return
        self.overruns += 1
        if self.overruns >= self.threshold:
            self.open_until = self.clock() + self.cooloff_s

    @property
    def is_open(self):
        return self.open_until is not None and self.open_until > self.clock()
