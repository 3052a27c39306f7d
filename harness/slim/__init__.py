"""The slim command: render the slim MEMORY.md (hot strip + cluster router) and roll it back."""
