"""Claude Code settings.json transforms for the installer, the sentinel and doctor. Pure: bytes in,
bytes or data out; the reading, archiving and writing live in ``harness.install_cli``.

How our hook entries are recognised (claude-code-formats.md §1.1). A command handler may only
carry the documented fields (``type``, ``command``, ``args``, ``timeout``, ``statusMessage``, ...);
an unknown key risks Claude Code rejecting the whole settings file, and ``statusMessage`` is text a
person may edit. So the mark lives inside the command string, as a trailing shell comment::

    '/home/me/.venv/bin/memory-router' hook # memory-router install

Claude Code runs a handler's ``command`` through a shell (only ``args`` means exec form, which we
never use), and ``#`` starts a comment in sh, bash, zsh and PowerShell alike, so the mark never
reaches the hook's argv. Uninstall removes exactly the handlers whose command ends with our mark;
a ``memory-router hook`` line written by hand is reported, never touched.
"""

import difflib
import json
import os
import re
import shlex
from dataclasses import dataclass

from router.errors import InputError

EVENT = "UserPromptSubmit"
ROUTER_MARK = "# memory-router install"
SENTINEL_MARK = "# memory-router sentinel install"
HOOK_TIMEOUT_SECONDS = 5
SETTINGS_NAME = "settings.json"
LOCAL_SETTINGS_NAME = "settings.local.json"

_ROUTER_EXE_RE = re.compile(r"(^|[\\/])memory-router(\.exe)?$", re.I)


class SettingsError(InputError):
    """A settings.json that is not valid JSON, or not shaped as Claude Code documents it."""


# --------------------------------------------------------------------------- locations


def claude_config_dir(environ=None):
    """Claude Code's user directory: ``$CLAUDE_CONFIG_DIR`` if set, else ``~/.claude`` (the same
    rule the transcript locator follows)."""
    from transcripts.locate import config_dir

    return os.path.abspath(os.fspath(config_dir(environ)))


def user_settings_path(environ=None):
    return os.path.join(claude_config_dir(environ), SETTINGS_NAME)


def project_settings_path(project_dir, local=False):
    return os.path.join(os.path.abspath(project_dir), ".claude", LOCAL_SETTINGS_NAME if local else SETTINGS_NAME)


def state_dir_for(settings_path):
    """Where memory-router keeps its backups and install records for one settings file:
    ``<dir of settings.json>/memory-router/`` (``.claude/memory-router/`` or
    ``~/.claude/memory-router/``), on the same file system as the file it protects."""
    return os.path.join(os.path.dirname(os.path.abspath(settings_path)), "memory-router")


# --------------------------------------------------------------------------- parsing and style


@dataclass(frozen=True)
class JsonStyle:
    """How a settings file was laid out, so a rewrite changes as little as possible."""

    indent: object = 2          # int spaces, "\t", or None for a one-line file
    newline: str = "\n"
    trailing_newline: bool = True
    bom: bool = False
    ascii_only: bool = False


def detect_style(data):
    """The layout of ``data`` (bytes of a JSON file); Claude Code's own 2-space style if empty."""
    bom = data.startswith(b"\xef\xbb\xbf")
    text = data[3:].decode("utf-8", errors="replace") if bom else data.decode("utf-8", errors="replace")
    if not text.strip():
        return JsonStyle(bom=bom)
    newline = "\r\n" if "\r\n" in text else "\n"
    body = text.strip()
    indent = None
    if "\n" in body:
        indent = 2
        for line in body.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and stripped[0] not in "}]":
                lead = line[: len(line) - len(stripped)]
                if lead.startswith("\t"):
                    indent = "\t"
                elif lead:
                    indent = len(lead)
                break
    ascii_only = not re.search(r"[^\x00-\x7f]", text) and "\\u" in text
    return JsonStyle(indent=indent, newline=newline, trailing_newline=text.endswith(("\n", "\r")),
                     bom=bom, ascii_only=ascii_only)


def parse_settings(data, path):
    """The settings object in ``data`` (bytes). An empty file reads as ``{}``.

    Raises ``SettingsError`` (exit 2) naming ``path:line:column`` for anything that is not a JSON
    object, or whose ``hooks`` section is not shaped as Claude Code documents it, because a rewrite
    built on a guess could lose the user's other settings.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise SettingsError("settings file is not valid UTF-8", path=path, line=line,
                            fix="save it as UTF-8; nothing was changed") from None
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as err:
        raise SettingsError(f"invalid JSON: {err.msg}", path=path, line=err.lineno, column=err.colno,
                            fix="correct the JSON (or move the file aside); nothing was changed") from None
    if not isinstance(settings, dict):
        raise SettingsError(f"settings must be a JSON object, got {type(settings).__name__}", path=path,
                            line=1, column=1, fix="make the file a JSON object {...}; nothing was changed")
    _check_hooks_shape(settings, path, text)
    return settings


def _line_of(text, needle):
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1


def _check_hooks_shape(settings, path, text):
    hooks = settings.get("hooks")
    if hooks is None:
        return
    where = _line_of(text, '"hooks"')
    if not isinstance(hooks, dict):
        raise SettingsError('"hooks" must be an object of event names', path=path, line=where,
                            fix='see https://code.claude.com/docs/en/hooks; nothing was changed')
    groups = hooks.get(EVENT)
    if groups is None:
        return
    where = _line_of(text, f'"{EVENT}"') or where
    if not isinstance(groups, list):
        raise SettingsError(f'"hooks.{EVENT}" must be a list of matcher groups', path=path, line=where,
                            fix='write it as [{"hooks": [...]}]; nothing was changed')
    for i, group in enumerate(groups):
        if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
            raise SettingsError(f'"hooks.{EVENT}[{i}]" must be an object with a "hooks" list', path=path,
                                line=where, fix='write it as {"hooks": [...]}; nothing was changed')


def render_settings(settings, style=JsonStyle()):
    """``settings`` as bytes in ``style``."""
    if style.indent is None:
        text = json.dumps(settings, ensure_ascii=style.ascii_only)
    else:
        text = json.dumps(settings, indent=style.indent, ensure_ascii=style.ascii_only)
    if style.trailing_newline:
        text += "\n"
    if style.newline != "\n":
        text = text.replace("\n", style.newline)
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if style.bom else data


def same_data(a, b):
    """Equal as JSON, key order included (``{"a":1,"b":2}`` differs from ``{"b":2,"a":1}``)."""
    return json.dumps(a, ensure_ascii=False) == json.dumps(b, ensure_ascii=False)


def unified_diff(before, after, path):
    """A unified diff of two byte strings as text (for ``--dry-run``)."""
    a = before.decode("utf-8", errors="replace").splitlines(keepends=True)
    b = after.decode("utf-8", errors="replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, fromfile=f"{path} (now)", tofile=f"{path} (after)"))


# --------------------------------------------------------------------------- commands


def quote_for_shell(word, windows=None):
    """One shell word. Claude Code runs hooks through bash (Git Bash on Windows), where a
    single-quoted word is literal; Windows paths get forward slashes, which Git Bash accepts."""
    windows = (os.name == "nt") if windows is None else windows
    if windows:
        word = word.replace("\\", "/")
    return shlex.quote(word)


def router_hook_command(exe_argv, clusters=None, config=None, mark=ROUTER_MARK, windows=None):
    """The command string for the router hook: ``exe_argv`` (e.g. ``['/abs/memory-router']`` or
    ``['/abs/python', '-P', '-m', 'router']``) + ``hook`` + options, then our mark."""
    words = [quote_for_shell(w, windows) for w in exe_argv] + ["hook"]
    if clusters:
        words += ["--clusters", quote_for_shell(os.path.abspath(clusters), windows)]
    if config:
        words += ["--config", quote_for_shell(os.path.abspath(config), windows)]
    return " ".join(words) + " " + mark


def sentinel_hook_command(python, flag_path, text, mark=SENTINEL_MARK, windows=None):
    """The one-shot sentinel command: ``python -P -m harness.sentinel --flag F --text T``.

    ``-P`` keeps the project's own directory off ``sys.path``, so a project that has a
    ``harness/`` package of its own cannot shadow ours."""
    words = [quote_for_shell(python, windows), "-P", "-m", "harness.sentinel",
             "--flag", quote_for_shell(os.path.abspath(flag_path), windows),
             "--text", quote_for_shell(text, windows)]
    return " ".join(words) + " " + mark


def handler(command, timeout=HOOK_TIMEOUT_SECONDS):
    return {"type": "command", "command": command, "timeout": timeout}


def has_mark(command, mark):
    return isinstance(command, str) and command.rstrip().endswith(mark)


def command_words(command):
    """The shell words of ``command`` (comments dropped), or ``None`` if it does not split."""
    try:
        return shlex.split(command, comments=True, posix=True)
    except ValueError:
        return None


_OPERATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;"})
_PREFIX_WORDS = frozenset({"env", "exec", "nohup", "command", "time"})
_PYTHON_RE = re.compile(r"(^|[\\/])(python[0-9.]*|py)(\.exe)?$", re.I)


def _shell_tokens(command):
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return None


def runs_router_hook(command):
    """True when ``command`` runs ``memory-router hook`` (or ``python -m router hook``) as a
    command, however it was written (``cd x && memory-router hook``, ``env A=1 memory-router
    hook``): what doctor looks for, and what a second install must not duplicate."""
    if not isinstance(command, str):
        return False
    words = _shell_tokens(command)
    if not words:
        return False
    at_command = True
    for i, word in enumerate(words):
        if word in _OPERATORS:
            at_command = True
            continue
        if not at_command:
            continue
        if word in _PREFIX_WORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            continue
        at_command = False
        rest = words[i + 1:]
        if _ROUTER_EXE_RE.search(word) and rest[:1] == ["hook"]:
            return True
        if _PYTHON_RE.search(word):
            flags = 0
            while flags < len(rest) and rest[flags].startswith("-") and rest[flags] != "-m":
                flags += 1
            if rest[flags:flags + 3] == ["-m", "router", "hook"]:
                return True
    return False


def command_option(command, name):
    """The value of ``--name VALUE`` / ``--name=VALUE`` in ``command``, or ``None``."""
    words = command_words(command) or []
    flag = "--" + name
    for i, word in enumerate(words):
        if word == flag and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(flag + "="):
            return word[len(flag) + 1:]
    return None


# --------------------------------------------------------------------------- finding entries


@dataclass(frozen=True)
class Entry:
    """One UserPromptSubmit command handler found in a settings object."""

    group: int
    index: int
    command: str
    timeout: object
    marked: bool  # carries ``mark`` (ours); False for a hand-written equivalent

    @property
    def where(self):
        return f"hooks.{EVENT}[{self.group}].hooks[{self.index}]"


def find_entries(settings, mark, also=None):
    """UserPromptSubmit handlers whose command carries ``mark``, plus, when ``also(command)`` is
    given, unmarked ones it accepts (e.g. a hand-written ``memory-router hook``)."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    groups = hooks.get(EVENT) if isinstance(hooks, dict) else None
    if not isinstance(groups, list):
        return found
    for gi, group in enumerate(groups):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        for hi, item in enumerate(handlers):
            if not isinstance(item, dict):
                continue
            command = item.get("command")
            if not isinstance(command, str):
                continue
            marked = has_mark(command, mark)
            if marked or (also is not None and also(command)):
                found.append(Entry(gi, hi, command, item.get("timeout"), marked))
    return found


def disable_all_hooks(settings):
    return isinstance(settings, dict) and settings.get("disableAllHooks") is True


# --------------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class Change:
    settings: dict
    action: str   # "added", "updated", "unchanged", "removed", "absent"
    detail: str = ""


def _copy(settings):
    return json.loads(json.dumps(settings))


def add_entry(settings, command, mark, timeout=HOOK_TIMEOUT_SECONDS, conflicts=None):
    """``settings`` with our handler ``command`` present exactly once.

    - already there, same command and timeout: ``unchanged`` (the same object, nothing to write);
    - ours there with another command (a moved venv, other --clusters): ``updated`` in place;
    - absent: ``added`` as a new matcher group at the end of ``hooks.UserPromptSubmit``, every
      other key, event and handler kept in its order.

    ``conflicts(command)`` flags unmarked handlers doing the same job; if any exists the result
    is ``conflict`` and ``settings`` is returned unchanged, since a second copy would run twice.
    """
    ours = find_entries(settings, mark)
    if not ours and conflicts is not None:
        others = [e for e in find_entries(settings, mark, also=conflicts) if not e.marked]
        if others:
            return Change(settings, "conflict", ", ".join(f"{e.where}: {e.command}" for e in others))
    if ours:
        first = ours[0]
        if len(ours) == 1 and first.command == command and first.timeout == timeout:
            return Change(settings, "unchanged", first.where)
        result = _copy(settings)
        groups = result["hooks"][EVENT]
        groups[first.group]["hooks"][first.index] = handler(command, timeout)
        # Extra copies of our own handler (e.g. a file merged by hand) would run twice: drop them.
        for extra in sorted(ours[1:], key=lambda e: (e.group, e.index), reverse=True):
            del groups[extra.group]["hooks"][extra.index]
        _drop_emptied(result, {e.group for e in ours[1:]})
        return Change(result, "updated", first.where)
    result = _copy(settings)
    hooks = result.setdefault("hooks", {})
    groups = hooks.setdefault(EVENT, [])
    groups.append({"hooks": [handler(command, timeout)]})
    return Change(result, "added", f"hooks.{EVENT}[{len(groups) - 1}].hooks[0]")


def remove_entries(settings, mark):
    """``settings`` without the handlers carrying ``mark``. A matcher group, the event list and the
    ``hooks`` object are dropped only when removing our handler is what emptied them."""
    ours = find_entries(settings, mark)
    if not ours:
        return Change(settings, "absent")
    result = _copy(settings)
    groups = result["hooks"][EVENT]
    for entry in sorted(ours, key=lambda e: (e.group, e.index), reverse=True):
        del groups[entry.group]["hooks"][entry.index]
    _drop_emptied(result, {e.group for e in ours})
    return Change(result, "removed", ", ".join(e.where for e in ours))


def _drop_emptied(settings, touched_groups):
    groups = settings["hooks"][EVENT]
    for gi in sorted(touched_groups, reverse=True):
        if gi < len(groups) and not groups[gi].get("hooks"):
            del groups[gi]
    if not groups:
        del settings["hooks"][EVENT]
        if not settings["hooks"]:
            del settings["hooks"]


# --------------------------------------------------------------------------- install records


def new_record(settings_path, role, original, written, backup, command, extra=None):
    """What an install wrote, so uninstall can give back the user's exact bytes.

    ``original`` is ``None`` when the file did not exist. Stored as JSON in
    ``state_dir_for(settings_path)/<role>.json``."""
    from harness.fileops import sha256_bytes

    record = {
        "format": 1,
        "role": role,
        "settings": os.path.abspath(settings_path),
        "original_existed": original is not None,
        "original_sha256": sha256_bytes(original) if original is not None else None,
        "backup": backup,
        "written_sha256": sha256_bytes(written),
        "command": command,
    }
    if extra:
        record.update(extra)
    return record


def plan_uninstall(current, settings, mark, record, backups, remove=None):
    """Decide what uninstall writes. Returns ``(action, data)``:

    - ``("absent", None)``: none of our handlers is there; nothing to do;
    - ``("delete", None)``: the file is exactly what our install created from nothing;
    - ``("restore", bytes)``: the file is exactly what our install wrote, or removing our handler
      gives back, key for key and in order, a settings object we backed up: that backup's bytes,
      so the user's own formatting returns byte for byte;
    - ``("write", bytes)``: otherwise, our handler removed structurally, the rest re-rendered
      in the file's own style.

    ``record`` is the install record (or ``None``); ``backups`` a list of ``(path, bytes)``,
    newest first, of earlier versions of this settings file. ``remove`` replaces ``remove_entries``
    for another event's handler (the citation gate's, ``harness.gate_install``).
    """
    from harness.fileops import sha256_bytes

    change = (remove or remove_entries)(settings, mark)
    if change.action == "absent":
        return "absent", None
    if record and record.get("written_sha256") == sha256_bytes(current):
        if not record.get("original_existed"):
            return "delete", None
        for path, data in backups:
            if path == record.get("backup") and sha256_bytes(data) == record.get("original_sha256"):
                return "restore", data
    for _path, data in backups:
        try:
            backed_up = parse_settings(data, _path)
        except InputError:
            continue
        if same_data(backed_up, change.settings):
            return "restore", data
    return "write", render_change(current, settings, change.settings)


# --------------------------------------------------------------------------- doctor helpers


def probe_payload(project_dir, prompt="memory-router doctor probe: please ignore"):
    """A neutral UserPromptSubmit payload (claude-code-formats.md §1.3) for a trial run."""
    return {
        "session_id": "00000000-0000-4000-8000-memoryrouter0",
        "transcript_path": "",
        "cwd": os.path.abspath(project_dir),
        "permission_mode": "default",
        "hook_event_name": EVENT,
        "prompt": prompt,
    }


def judge_hook_output(returncode, stdout, stderr=b""):
    """``(ok, message)`` for one trial run of a UserPromptSubmit command.

    Passes on exit 0 with no output, or with the JSON shape Claude Code honours; fails on any
    other exit code, on plain text (Claude Code would add it to every prompt's context) and on
    JSON without ``hookSpecificOutput.hookEventName`` (a bare ``additionalContext`` is ignored)."""
    err = stderr.decode("utf-8", errors="replace").strip().splitlines()
    err_hint = f": {err[0][:200]}" if err else ""
    if returncode != 0:
        meaning = {2: " (exit 2 would erase the user's prompt)", 127: " (command not found)",
                   126: " (not executable)"}.get(returncode, "")
        return False, f"exited {returncode}{meaning}{err_hint}"
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        return True, "exit 0, printed nothing"
    if not text.startswith("{"):
        return False, f"exit 0 but printed plain text, which Claude Code adds to the context: {text[:120]!r}"
    try:
        data = json.loads(text)
    except ValueError:
        return False, "exit 0 but printed invalid JSON (Claude Code would add it as plain text)"
    out = data.get("hookSpecificOutput") if isinstance(data, dict) else None
    if not isinstance(out, dict) or out.get("hookEventName") != EVENT or not isinstance(out.get("additionalContext"), str):
        return False, ("exit 0 but the JSON lacks hookSpecificOutput.hookEventName == \"UserPromptSubmit\" with a "
                       "string additionalContext, so Claude Code ignores it")
    return True, f"exit 0, printed additionalContext ({len(out['additionalContext'])} chars)"


# --------------------------------------------------------------------------- minimal edits


class _Node:
    __slots__ = ("kind", "start", "end", "children")

    def __init__(self, kind, start):
        self.kind = kind          # "object", "array" or "scalar"
        self.start = start
        self.end = start
        self.children = []        # (key or None, start of the member or item, value node)


_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _parse_spans(text):
    """Where every value of a (valid) JSON text starts and ends: what lets an edit touch only the
    characters that change, keeping the user's own layout everywhere else."""
    from json.decoder import scanstring

    def value(i):
        i = _WS.match(text, i).end()
        char = text[i]
        if char in "{[":
            node = _Node("object" if char == "{" else "array", i)
            close = "}" if char == "{" else "]"
            i = _WS.match(text, i + 1).end()
            if text[i] == close:
                node.end = i + 1
                return node
            while True:
                i = _WS.match(text, i).end()
                key, member_start = None, i
                if node.kind == "object":
                    key, i = scanstring(text, i + 1)
                    i = _WS.match(text, i).end() + 1  # past ':'
                child = value(i)
                node.children.append((key, member_start if key is not None else child.start, child))
                i = _WS.match(text, child.end).end()
                if text[i] == ",":
                    i += 1
                    continue
                node.end = i + 1
                return node
        node = _Node("scalar", i)
        if char == '"':
            node.end = scanstring(text, i + 1)[1]
        else:
            node.end = _SCALAR.match(text, i).end()
        return node

    return value(0)


def _line_indent(text, pos):
    """The leading whitespace of the line holding ``pos``."""
    line_start = text.rfind("\n", 0, pos) + 1
    end = _WS.match(text, line_start).end()
    return text[line_start:min(end, pos)].replace("\r", "").replace("\n", "")


def _starts_line(text, pos):
    line_start = text.rfind("\n", 0, pos) + 1
    return not text[line_start:pos].strip()


def _dump(value, style, prefix, multiline):
    if multiline and style.indent is not None:
        out = json.dumps(value, indent=style.indent, ensure_ascii=style.ascii_only)
        return out.replace("\n", style.newline + prefix)
    return json.dumps(value, ensure_ascii=style.ascii_only)


def _unit(style):
    return "\t" if style.indent == "\t" else " " * (style.indent or 0)


def _element_text(key, value, style, prefix, multiline):
    body = _dump(value, style, prefix, multiline)
    return body if key is None else json.dumps(key, ensure_ascii=style.ascii_only) + ": " + body


def _match_items(keyed, old_items, new_items):
    """``(kept pairs (old i, new j), added items, deleted old indices)``, or ``None`` when the
    change is not a pure append, delete or in-place change (reordered keys, say)."""
    if not keyed and len(old_items) == len(new_items):
        return [(i, i) for i in range(len(old_items))], [], []
    kept, j = [], 0
    for i, (key, value) in enumerate(old_items):
        if j < len(new_items) and (key == new_items[j][0] if keyed else same_data(value, new_items[j][1])):
            kept.append((i, j))
            j += 1
        elif keyed and any(key == k for k, _v in new_items[j:]):
            return None
    added = new_items[j:]
    if keyed and any(any(k == key for key, _v in old_items) for k, _v in added):
        return None
    survivors = {i for i, _j in kept}
    return kept, added, [i for i in range(len(old_items)) if i not in survivors]


def _container_edits(text, node, old_items, new_items, style, edits):
    """Edits turning ``node`` (holding ``old_items``) into one holding ``new_items``, both lists of
    ``(key, value)``; False when the change is not one this can express minimally."""
    if len(node.children) != len(old_items):
        return False  # duplicate keys: json.loads kept the last, the text holds both
    matched = _match_items(node.kind == "object", old_items, new_items)
    if matched is None:
        return False
    kept, added, deleted = matched
    if deleted and added:
        return False
    for i, j in kept:
        if not same_data(old_items[i][1], new_items[j][1]):
            if not _value_edits(text, node.children[i][2], old_items[i][1], new_items[j][1], style, edits):
                return False
    children = node.children
    if deleted:
        if len(deleted) == len(children):
            edits.append((node.start + 1, node.end - 1, ""))
            return True
        runs = []
        for i in deleted:
            if runs and i == runs[-1][-1] + 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        for run in runs:
            a, b = run[0], run[-1]
            if a > 0:  # from the end of the survivor before, so its comma goes too
                edits.append((children[a - 1][2].end, children[b][2].end, ""))
            else:      # up to the start of the survivor after
                edits.append((children[a][1], children[b + 1][1], ""))
        return True
    if added:
        newline = style.newline
        if children:
            last_start = children[-1][1]
            at = children[-1][2].end
            if style.indent is not None and _starts_line(text, last_start):
                prefix = _line_indent(text, last_start)
                parts = ["," + newline + prefix + _element_text(k, v, style, prefix, True) for k, v in added]
            else:
                parts = [", " + _element_text(k, v, style, "", False) for k, v in added]
            edits.append((at, at, "".join(parts)))
        else:
            if style.indent is None:
                inner = ", ".join(_element_text(k, v, style, "", False) for k, v in added)
            else:
                outer = _line_indent(text, node.start)
                prefix = outer + _unit(style)
                inner = ("," + newline + prefix).join(_element_text(k, v, style, prefix, True) for k, v in added)
                inner = newline + prefix + inner + newline + outer
            edits.append((node.start + 1, node.end - 1, inner))
    return True


def _value_edits(text, node, old, new, style, edits):
    if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
        return _container_edits(text, node, list(old.items()), list(new.items()), style, edits)
    if isinstance(old, list) and isinstance(new, list) and node.kind == "array":
        return _container_edits(text, node, [(None, v) for v in old], [(None, v) for v in new], style, edits)
    multiline = "\n" in text[node.start:node.end] or (
        isinstance(new, (dict, list)) and style.indent is not None and _starts_line(text, node.start))
    edits.append((node.start, node.end, _dump(new, style, _line_indent(text, node.start), multiline)))
    return True


def render_change(original, old, new, style=None):
    """``new`` as bytes, written as a minimal edit of ``original`` (the bytes ``old`` was parsed
    from): every line that does not change keeps its exact bytes, so a hand-formatted
    settings.json stays as its owner wrote it. Falls back to ``render_settings`` whenever the edit
    does not parse back to exactly ``new``."""
    style = style or detect_style(original)
    bom = original.startswith(b"\xef\xbb\xbf")
    try:
        text = (original[3:] if bom else original).decode("utf-8")
        if not text.strip():
            raise ValueError("empty")
        edits = []
        if not _value_edits(text, _parse_spans(text), old, new, style, edits):
            raise ValueError("not a simple change")
        for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
            text = text[:start] + replacement + text[end:]
        if not same_data(json.loads(text), new):
            raise ValueError("the edit did not reproduce the new settings")
    except (ValueError, IndexError, UnicodeDecodeError):
        return render_settings(new, style)
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if bom else data
