"""The sentinel command and hook (spec §3 one-shot test). Empty on purpose: ``python -P -m
harness.sentinel`` runs the hook (``__main__``), and must import nothing more than it needs."""
