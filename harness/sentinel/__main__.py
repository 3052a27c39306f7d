"""``python -P -m harness.sentinel --flag F --text T``: the sentinel hook as ``sentinel install``
writes it into settings files (harness.install.settings.hookcommand.sentinel_hook_command); kept working
for the settings files that already hold it."""

import sys

from harness.sentinel.hook import run

sys.exit(run(sys.argv[1:]))
