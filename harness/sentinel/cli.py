"""``memory-router sentinel install | uninstall | check | hook``: the spec §3 one-shot sentinel test
(the hook itself is ``harness.sentinel.hook``, run as ``python -P -m harness.sentinel``; writes go
through ``harness.install.settingsfile``)."""

import os
import sys

from harness import options, printedcommands
from harness import project as proj
from harness.install import hookcommand
from harness.install import settings as inst
from harness.install.settingsfile import (
    SENTINEL_ROLE,
    apply_add,
    apply_remove,
    read_record,
    read_settings,
    record_path,
    report_write,
    target_settings,
)
from router.errors import InputError


def cmd_sentinel_install(args):
    from harness.sentinel import hook as sentinel

    settings_path, _level = target_settings(project=args.project)
    project_dir = proj.project_dir(args.project)
    previous = read_record(settings_path, SENTINEL_ROLE)
    if not args.text and previous and not previous.get("uninstalled_at") and os.path.isfile(settings_path):
        _snap, settings = read_settings(settings_path)
        if inst.find_entries(settings, hookcommand.SENTINEL_MARK):
            print(f"the sentinel is already installed in {settings_path}: {previous.get('text')}; nothing changed")
            print("(pass --text to wire a new one)")
            return 0
    text = args.text or sentinel.new_sentinel_text()
    if not text.strip() or "\n" in text:
        raise InputError("the sentinel text must be one non-empty line", fix="pass --text WORD")
    state_dir = proj.state_dir_for(settings_path)
    flag = sentinel.flag_path_for(state_dir, text)
    command = hookcommand.sentinel_hook_command(os.path.abspath(sys.executable), flag, text)
    action, detail, backup = apply_add(settings_path, SENTINEL_ROLE, hookcommand.SENTINEL_MARK, command,
                                       dry_run=args.dry_run, extra={"text": text, "flag": flag})
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    report_write(action, detail, backup, settings_path, "the one-shot sentinel hook")
    print(f"sentinel: {text}")
    print(f"flag file: {flag} (created on the first prompt; the hook is silent while it exists)")
    if os.path.exists(flag):
        print("note: that flag already exists, so this sentinel will not fire; pass a new --text", file=sys.stderr)
    print("next: start a fresh Claude Code session in the project, send three or more prompts, then run")
    locate = printedcommands.substitution(printedcommands.PROGRAM, "transcript", "locate", "--project", project_dir)
    print("  " + printedcommands.memory_router("sentinel", "check", locate, "--project", project_dir))
    print("and finally: " + printedcommands.memory_router("sentinel", "uninstall", "--project", project_dir))
    return 0


def cmd_sentinel_uninstall(args):
    settings_path = proj.project_settings_path(proj.project_dir(args.project))
    action, backup = apply_remove(settings_path, SENTINEL_ROLE, hookcommand.SENTINEL_MARK, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    report_write(action, "", backup, settings_path, "the sentinel hook")
    record = read_record(settings_path, SENTINEL_ROLE)
    if record and record.get("text"):
        print(f"the sentinel's text stays recorded for `sentinel check`: {record['text']}")
    return 0


def cmd_sentinel_check(args):
    text = args.sentinel
    if not text:
        settings_path = proj.project_settings_path(proj.project_dir(args.project))
        record = read_record(settings_path, SENTINEL_ROLE)
        if not record or not record.get("text"):
            raise InputError("no sentinel recorded for this project", path=record_path(settings_path, SENTINEL_ROLE),
                             fix="pass --sentinel TEXT, or --project DIR where `sentinel install` ran")
        text = record["text"]
    return sentinel_check_report(args.transcript, text, as_json=args.json)


def sentinel_check_report(transcript, text, as_json=False):
    """Spec §3 from a transcript: the audit's check (c), the sentinel in exactly one entry, an
    injection at its prompt; and enough later prompts to show it was not re-sent. Exit 0 / 1."""
    from transcripts.audit import audit_path
    from transcripts.auditmodel import FAIL, PASS
    from transcripts.locate import EMPTY_PATH_FIX, EMPTY_PATH_MESSAGE, subagent_files

    if not str(transcript).strip():
        raise InputError(EMPTY_PATH_MESSAGE, fix=EMPTY_PATH_FIX)
    if not os.path.isfile(transcript):
        raise InputError("no such transcript file", path=transcript,
                         fix="`memory-router transcript locate --project DIR` prints the newest one")
    result = audit_path(transcript, text, subagent_files=subagent_files(transcript))
    main = result.stream("main")
    if main is None:
        raise InputError("no main-session lines in this transcript", path=transcript)
    check_c, check_b = main.check("c"), main.check("b")
    prompts = main.prompt_count if main.prompt_count is not None else len(main.prompts)
    hit_line = check_c.evidence[0].line if check_c.evidence else None
    # Prompts past the listed ones (a very long session) all come after every listed one.
    later = sum(1 for p in main.prompts if hit_line is not None and p.line > hit_line) + (
        main.prompts_not_listed if hit_line is not None else 0)
    problems = []
    if check_c.status != PASS:
        problems.append(f"(c) {check_c.status}: {check_c.message}")
    if check_b.status == FAIL:
        problems.append(f"(b) fail: {check_b.message}")
    if check_c.status == PASS and later < 2:
        problems.append(f"only {later} prompt(s) after the sentinel's: spec §3 needs later turns to show it "
                        "is not re-sent; send two or more further prompts and check again")
    ok = not problems
    if as_json:
        from harness.output import print_json

        print_json({"ok": ok, "transcript": os.path.abspath(transcript), "sentinel": text,
                    "claude_code_versions": list(result.versions), "prompts": prompts,
                    "prompts_after_sentinel": later,
                    "check_c": {"status": check_c.status, "message": check_c.message,
                                "lines": [e.line for e in check_c.evidence]},
                    "check_b": {"status": check_b.status, "message": check_b.message},
                    "problems": problems})
    else:
        print(f"transcript: {transcript}")
        print(f"sentinel: {text}")
        print(f"(c) {check_c.status.upper()}: {check_c.message}")
        print(f"(b) {check_b.status.upper()}: {check_b.message}")
        print(f"prompts: {prompts} ({later} after the sentinel's)")
        print("verdict: " + ("CONFIRMED: the sentinel entered once, at its prompt, and was not re-sent on later turns"
                             if ok else "NOT CONFIRMED: " + "; ".join(problems)))
    return 0 if ok else 1


def cmd_sentinel_hook(args):
    from harness.sentinel import hook as sentinel

    return sentinel.run(["--flag", args.flag, "--text", args.text])


def register(subparsers):
    sentinel = subparsers.add_parser(
        "sentinel", help="the one-shot sentinel test: an injection reaches the model once, at its prompt",
        description="Proves on a real session what the router relies on: a prompt hook's injection reaches the "
                    "model once, at its prompt, and the later turns still hold it. 'install' wires a hook that "
                    "injects a "
                    "unique sentinel on the first prompt only, 'check' audits a transcript for it (exactly once, "
                    "at its prompt), 'uninstall' takes the hook out again.")
    sub = sentinel.add_subparsers(dest="sentinel_command", metavar="ACTION", required=True)
    s_install = sub.add_parser(
        "install", help="wire a one-shot UserPromptSubmit hook injecting a unique sentinel",
        description="Adds, to DIR/.claude/settings.json, a hook that injects MEMORY-ROUTER-SENTINEL-<random hex> "
                    "(or --text) as additionalContext on the first prompt only: its flag file "
                    "DIR/.claude/memory-router/sentinel-<text>.fired is created atomically the first time, and "
                    "while it exists the hook prints nothing. The text and flag are recorded in "
                    "DIR/.claude/memory-router/sentinel.json for `sentinel check`.")
    options.project(s_install)
    s_install.add_argument("--text", metavar="TEXT", help="the sentinel (default: a new random one)")
    options.dry_run(s_install)
    s_install.set_defaults(handler=cmd_sentinel_install)
    s_uninstall = sub.add_parser(
        "uninstall", help="remove the sentinel hook (its recorded text is kept)",
        description="Removes exactly the hook `sentinel install` added to DIR/.claude/settings.json (found by "
                    "its '# memory-router sentinel install' mark), restoring the file byte for byte when nothing else "
                    "changed. The recorded sentinel text stays in DIR/.claude/memory-router/sentinel.json so "
                    "`sentinel check` still works on the session.",
        epilog="exit codes: 0 removed or not installed; 1 refused (the file changed meanwhile, or is read-only); "
               "2 invalid settings.json")
    options.project(s_uninstall)
    options.dry_run(s_uninstall)
    s_uninstall.set_defaults(handler=cmd_sentinel_uninstall)
    s_check = sub.add_parser(
        "check", help="the transcript audit's sentinel check: exactly once, at its prompt",
        description="Runs `memory-router transcript audit TRANSCRIPT --sentinel TEXT`; TEXT defaults to the one "
                    "`sentinel install` recorded for --project.",
        epilog="exit codes: 0 the sentinel entered once, at its prompt; 1 a check failed; 2 unreadable input")
    s_check.add_argument("transcript", metavar="TRANSCRIPT",
                         help="the session's .jsonl transcript (memory-router transcript locate prints it)")
    s_check.add_argument("--sentinel", metavar="TEXT", help="the sentinel text (default: the recorded one)")
    s_check.add_argument("--project", metavar="DIR", help="where the sentinel was installed (default: cwd)")
    options.json_output(s_check)
    s_check.set_defaults(handler=cmd_sentinel_check)
    s_hook = sub.add_parser(
        "hook", help="the sentinel hook itself (what settings.json runs)",
        description="Run by Claude Code, not by hand: prints the sentinel as additionalContext unless the flag "
                    "file exists, and creates the flag, so the sentinel is injected on the first prompt only. "
                    "Always exits 0.")
    s_hook.add_argument("--flag", metavar="FILE", required=True, help="the flag file marking that it fired")
    s_hook.add_argument("--text", metavar="TEXT", required=True, help="the sentinel text to inject")
    s_hook.set_defaults(handler=cmd_sentinel_hook)
