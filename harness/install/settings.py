"""Claude Code settings.json transforms for the installer, the sentinel and doctor. Pure: bytes in,
bytes or data out; the reading, archiving and writing live in ``harness.install.settingsfile``;
the hook commands themselves in ``harness.install.hookcommand``, minimal edits of the JSON text in
``harness.install.jsonedit``; where the settings files are, in ``harness.project``.

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

import json
import os
from dataclasses import dataclass

from harness.install.hookcommand import HOOK_TIMEOUT_SECONDS, handler, has_mark
from harness.install.jsonedit import render_change, same_data
from router.errors import InputError

EVENT = "UserPromptSubmit"
# The router also installs a SessionStart handler: after compaction or /clear the earlier
# injections are gone from the requests, so the session record must be forgotten (issue 13).
# The matcher keeps it from running on startup and resume (the handler checks the source too).
SESSION_EVENT = "SessionStart"
SESSION_MATCHER = "compact|clear"
EVENTS = (EVENT, SESSION_EVENT)


class SettingsError(InputError):
    """A settings.json that is not valid JSON, or not shaped as Claude Code documents it."""


# --------------------------------------------------------------------------- parsing


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
    from router.jsontext import loads_strict

    # NaN/Infinity: Python reads them, Claude Code's JSON.parse does not, and a rewrite could not
    # keep them; deep nesting: Python's parser would overflow its stack.
    settings = loads_strict(text, path, "settings file", "correct the JSON (or move the file aside); "
                            "nothing was changed", error=SettingsError)
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
    outer = where
    for event in EVENTS:
        groups = hooks.get(event)
        if groups is None:
            continue
        where = _line_of(text, f'"{event}"') or outer
        if not isinstance(groups, list):
            raise SettingsError(f'"hooks.{event}" must be a list of matcher groups', path=path, line=where,
                                fix='write it as [{"hooks": [...]}]; nothing was changed')
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                raise SettingsError(f'"hooks.{event}[{i}]" must be an object with a "hooks" list', path=path,
                                    line=where, fix='write it as {"hooks": [...]}; nothing was changed')


# --------------------------------------------------------------------------- finding entries


@dataclass(frozen=True)
class Entry:
    """One command handler found in a settings object (of ``event``, UserPromptSubmit by default)."""

    group: int
    index: int
    command: str
    timeout: object
    marked: bool  # carries ``mark`` (ours); False for a hand-written equivalent
    event: str = EVENT

    @property
    def where(self):
        return f"hooks.{self.event}[{self.group}].hooks[{self.index}]"


def find_entries(settings, mark, also=None, event=EVENT):
    """``event``'s handlers whose command carries ``mark``, plus, when ``also(command)`` is
    given, unmarked ones it accepts (e.g. a hand-written ``memory-router hook``)."""
    found = []
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
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
                found.append(Entry(gi, hi, command, item.get("timeout"), marked, event))
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


def add_entry(settings, command, mark, timeout=HOOK_TIMEOUT_SECONDS, conflicts=None, event=EVENT, matcher=None):
    """``settings`` with our handler ``command`` present exactly once among ``event``'s handlers
    (a new matcher group gets ``matcher`` when one is given).

    - already there, same command and timeout: ``unchanged`` (the same object, nothing to write);
    - ours there with another command (a moved venv, other --clusters): ``updated`` in place;
    - absent: ``added`` as a new matcher group at the end of ``hooks.UserPromptSubmit``, every
      other key, event and handler kept in its order.

    ``conflicts(command)`` flags unmarked handlers doing the same job; if any exists the result
    is ``conflict`` and ``settings`` is returned unchanged, since a second copy would run twice.
    """
    ours = find_entries(settings, mark, event=event)
    if not ours and conflicts is not None:
        others = [e for e in find_entries(settings, mark, also=conflicts, event=event) if not e.marked]
        if others:
            return Change(settings, "conflict", ", ".join(f"{e.where}: {e.command}" for e in others))
    if ours:
        first = ours[0]
        if len(ours) == 1 and first.command == command and first.timeout == timeout:
            return Change(settings, "unchanged", first.where)
        result = _copy(settings)
        groups = result["hooks"][event]
        groups[first.group]["hooks"][first.index] = handler(command, timeout)
        # Extra copies of our own handler (e.g. a file merged by hand) would run twice: drop them.
        for extra in sorted(ours[1:], key=lambda e: (e.group, e.index), reverse=True):
            del groups[extra.group]["hooks"][extra.index]
        drop_emptied(result, {e.group for e in ours[1:]}, event)
        return Change(result, "updated", first.where)
    result = _copy(settings)
    # ``"hooks": null`` (or a null event list) means none, as a missing key does.
    if result.get("hooks") is None:
        result["hooks"] = {}
    hooks = result["hooks"]
    if hooks.get(event) is None:
        hooks[event] = []
    groups = hooks[event]
    group = {"matcher": matcher} if matcher is not None else {}
    group["hooks"] = [handler(command, timeout)]
    groups.append(group)
    return Change(result, "added", f"hooks.{event}[{len(groups) - 1}].hooks[0]")


def combine(first, second):
    """One change made of two applied in turn (``second`` was computed on ``first.settings``)."""
    if second.action == "conflict":
        return second
    if first.action == "conflict":
        return first
    changed = [c for c in (first, second) if c.action != "unchanged"]
    if not changed:
        return Change(second.settings, "unchanged", ", ".join(c.detail for c in (first, second) if c.detail))
    action = "added" if any(c.action == "added" for c in changed) else changed[0].action
    return Change(second.settings, action, ", ".join(c.detail for c in changed if c.detail))


def remove_entries(settings, mark, events=EVENTS):
    """``settings`` without the handlers carrying ``mark`` (in every one of ``events``). A matcher
    group, the event list and the ``hooks`` object are dropped only when removing our handler is
    what emptied them."""
    ours = [e for event in events for e in find_entries(settings, mark, event=event)]
    if not ours:
        return Change(settings, "absent")
    result = _copy(settings)
    for event in events:
        mine = [e for e in ours if e.event == event]
        if not mine:
            continue
        groups = result["hooks"][event]
        for entry in sorted(mine, key=lambda e: (e.group, e.index), reverse=True):
            del groups[entry.group]["hooks"][entry.index]
        drop_emptied(result, {e.group for e in mine}, event)
    return Change(result, "removed", ", ".join(e.where for e in ours))


def drop_emptied(settings, touched_groups, event=EVENT):
    """Drop the matcher groups in ``touched_groups`` that removing our handlers emptied, then the
    event's list and the ``hooks`` object if they are empty now (never one the user left empty)."""
    groups = settings["hooks"][event]
    for gi in sorted(touched_groups, reverse=True):
        if gi < len(groups) and not groups[gi].get("hooks"):
            del groups[gi]
    if not groups:
        del settings["hooks"][event]
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
    for another event's handler (the citation gate's, ``harness.install.gate``).
    """
    change = (remove or remove_entries)(settings, mark)
    if change.action == "absent":
        return "absent", None
    return plan_removal(current, settings, change.settings, record, backups, parse_settings)


def plan_removal(current, before, after, record, backups, parse):
    """How to write ``after`` (``before`` with our entry taken out) over the file whose bytes are
    ``current``, for any JSON file an installer edits (settings.json, .mcp.json): ``("delete",
    None)`` when install created the file and nobody changed it since; ``("restore", bytes)`` for
    the recorded backup, or any backup ``parse`` reads as equal, key for key, to ``after`` (its
    exact bytes); else ``("write", bytes)``, ``after`` as a minimal edit of ``current``."""
    from harness.fileops import sha256_bytes

    if record and record.get("written_sha256") == sha256_bytes(current):
        if not record.get("original_existed"):
            return "delete", None
        for path, data in backups:
            if path == record.get("backup") and sha256_bytes(data) == record.get("original_sha256"):
                return "restore", data
    for path, data in backups:
        try:
            backed_up = parse(data, path)
        except InputError:
            continue
        if same_data(backed_up, after):
            return "restore", data
    return "write", render_change(current, before, after)
