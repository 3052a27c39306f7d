"""Claude Code settings data shared by the tests of the settings transforms (harness.install.settings),
the hook commands (harness.install.hookcommand) and minimal JSON edits (harness.install.jsonedit)."""

import json

OURS = "/venv/bin/memory-router hook # memory-router install"
FOREIGN_HANDLER = {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/inject.sh", "timeout": 10}


def settings_with_foreign_hooks():
    return {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "check.sh"}]}],
            "UserPromptSubmit": [{"hooks": [dict(FOREIGN_HANDLER)]}],
        },
        "model": "opus",
    }


def dumps(obj, indent=2):
    return (json.dumps(obj, indent=indent) + "\n").encode()
