"""The clusters command: build, check and convert cluster files."""
