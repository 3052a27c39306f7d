"""Claude Code session transcripts: a streaming reader, the injection audit, locate and census."""
