"""The doctor command: is the hook installed, does it run, what will it read."""
