"""Whether a custom provider's budget fits inside the hook's own timeout (issue 24).

Claude Code kills a hook at the ``timeout`` its settings entry gives (``memory-router install``
writes ``INSTALLED_HOOK_TIMEOUT_S``) and discards what it would have
printed. A ``provider_timeout_ms`` at or near that timeout therefore silences every prompt the
provider is slow on, with no log line: the hook never reaches its own budget check. The budget
must leave the hook the time it needs besides the provider (start-up, the table read, the session
stage, the output; tens of milliseconds on a warm cache, more on the prompt that rebuilds it).

A pure check, so the config validator, ``install`` (which writes the timeout) and ``doctor`` (which
reads the installed one) can all apply the one rule. Standard library only, no imports.
"""

# The hook's share of its timeout that a provider budget may not take.
HOOK_OWN_MS = 1000
# The timeout (seconds) ``memory-router install`` writes into a hook entry, defined here once:
# harness.install.hookcommand.HOOK_TIMEOUT_SECONDS is this, and router.config bounds
# provider_timeout_ms by it (router may not import harness).
INSTALLED_HOOK_TIMEOUT_S = 5


def max_provider_budget_ms(hook_timeout_s):
    """The largest ``provider_timeout_ms`` a hook entry with ``hook_timeout_s`` seconds allows."""
    return max(0, int(hook_timeout_s * 1000) - HOOK_OWN_MS)


def budget_problem(provider_timeout_ms, hook_timeout_s):
    """``None`` when ``provider_timeout_ms`` fits the hook timeout ``hook_timeout_s`` (seconds,
    as the settings entry holds it), else one line saying why and what to set."""
    allowed = max_provider_budget_ms(hook_timeout_s)
    if provider_timeout_ms <= allowed:
        return None
    return (f"provider_timeout_ms = {provider_timeout_ms} does not fit the hook's {hook_timeout_s} s timeout: "
            f"Claude Code would kill the hook and drop its answer before the provider's budget ran out "
            f"(the hook keeps {HOOK_OWN_MS} ms for itself); set provider_timeout_ms to at most {allowed}, "
            f"or give the hook entry a timeout of at least {(provider_timeout_ms + HOOK_OWN_MS + 999) // 1000} s")
