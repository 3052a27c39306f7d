"""The uninstall command: take the hooks out, never stranding a slim index, and with --all undo init."""
