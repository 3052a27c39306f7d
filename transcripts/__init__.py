"""Claude Code session transcripts: a streaming reader, the injection audit, locate and census.

``reader.read_session(path)`` streams classified entries; ``audit.audit_session(entries,
sentinel)`` proves each UserPromptSubmit injection entered once, at its prompt (spec §3);
``turns.first_turn(entries)`` gives the first prompt with its injections, reply and tool calls;
``locate.locate(project)`` finds the newest transcript; ``census.census_entries`` counts types.
"""
