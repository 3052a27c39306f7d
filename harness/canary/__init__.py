"""The canary and checklist commands: YAML routing canaries (run, eval, fit), the behavioural
canary's checklist and its verdict."""
