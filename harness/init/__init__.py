"""``memory-router init``: one command from a project to a working install (docs/init.md)."""
