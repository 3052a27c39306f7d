"""The lab command: the real Claude Code run offline against a loopback stand-in for the Messages
API, and what its requests carried measured (docs/lab.md)."""
