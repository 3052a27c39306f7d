"""The one-shot sentinel hook for spec §3: inject a unique string once, then stay silent.

Run by Claude Code as a UserPromptSubmit command (``memory-router sentinel install`` wires it)::

    /abs/python -P -m harness.sentinel --flag /proj/.claude/memory-router/sentinel-<hex>.fired \\
        --text MEMORY-ROUTER-SENTINEL-<hex>

The first run creates the flag file with O_CREAT|O_EXCL (atomic: of two prompts racing, exactly
one wins) and prints the sentinel as additionalContext; every later run finds the flag and prints
nothing. Like the router hook it fails open: whatever goes wrong it prints nothing and exits 0,
because exit 2 would erase the user's prompt. It never prints without having set the flag first,
so it can never fire twice and fake a re-send. Standard library only.
"""

import os
import time

SENTINEL_PREFIX = "MEMORY-ROUTER-SENTINEL-"


def new_sentinel_text():
    """A sentinel no transcript can already contain by chance."""
    import secrets  # only at install time: the hook itself stays on json/os/sys/time

    return SENTINEL_PREFIX + secrets.token_hex(8)


def flag_path_for(state_dir, text):
    """The flag file of one sentinel: a new sentinel gets a new flag, so an old one never mutes it."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)[-64:]
    return os.path.join(state_dir, f"sentinel-{safe}.fired")


def sentinel_context(text):
    return (f"memory-router sentinel (spec \u00a73 one-shot test; no action needed, do not repeat it): {text}")


def hook_output(text):
    from router.agenttext import hook_output as output_shape

    return output_shape(sentinel_context(text))


def parse_args(argv):
    from router.argv import parse_long_options

    options = parse_long_options(argv, ("flag", "text"), "sentinel")
    if not options["flag"] or not options["text"]:
        raise ValueError("both --flag FILE and --text TEXT are required")
    return options


def claim_flag(path):
    """True exactly once per flag file: the call that created it."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(f"fired {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} pid {os.getpid()}\n")
    return True


def run(argv, stdin=None, stdout=None):
    """Entry point of the sentinel hook. Always returns 0."""
    from router.hookio import run_fail_open

    def respond(_raw):
        # The payload is read (so Claude Code never meets a closed pipe) but does not matter.
        options = parse_args(argv)
        return hook_output(options["text"]) if claim_flag(options["flag"]) else None

    return run_fail_open("sentinel", respond, stdin, stdout)

