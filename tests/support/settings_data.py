"""Claude Code settings data shared by the tests of the settings transforms (harness.install.settings),
the hook commands (harness.install.hookcommand), minimal JSON edits (harness.install.jsonedit) and
the commands that write settings.json (install, sentinel)."""

import json

OURS = "/venv/bin/memory-router hook # memory-router install"
FOREIGN_HANDLER = {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/inject.sh", "timeout": 10}


# A user's settings.json, formatted by hand, with hooks of its own: what install, the sentinel and
# doctor must leave byte for byte (and give back byte for byte on uninstall).
FOREIGN_SETTINGS = (
    b'{\n'
    b'    "permissions": {"allow": ["Bash(ls:*)", "Read(~/notes/**)"]},\n'
    b'    "hooks": {\n'
    b'        "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "check.sh"}]}],\n'
    b'        "UserPromptSubmit": [\n'
    b'            {"hooks": [{"type": "command", "command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/ctx.sh",'
    b' "timeout": 10}]}\n'
    b'        ]\n'
    b'    },\n'
    b'    "model": "opus"\n'
    b'}\n'
)


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
