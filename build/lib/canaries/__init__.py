"""Declarative YAML canary suites: the deterministic routing gate, metrics, fit and baselines."""
