"""The tokens command: what the slim index saves, net of what the hook injects."""
