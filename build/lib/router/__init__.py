"""memory-router: route Claude Code memory clusters into each prompt.

The ``router`` package is the core: cluster-file parsing, tokenising, scoring and the
fail-open ``UserPromptSubmit`` hook. It imports only the standard library so the hook
stays within a few milliseconds of Python's own start-up.
"""

__version__ = "0.1.0"
