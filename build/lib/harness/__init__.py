"""The harness: every claim of the spec as a runnable check (slim index, tokens, installer)."""
