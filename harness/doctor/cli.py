"""``memory-router doctor``: is the hook installed, does it run, what will it read, is MEMORY.md
within Claude Code's load limit (the checks are in ``harness.doctor.checks``)."""

from harness import options
from harness.doctor.checks import doctor_report
from harness.project import project_dir


def cmd_doctor(args):
    from harness.output import console, print_json, table

    directory = project_dir(args.project)
    checks = doctor_report(directory, args.memory_dir)
    failed = [c for c in checks if c["status"] == "fail"]
    if args.json:
        print_json({"ok": not failed, "project": directory, "checks": checks})
    else:
        from rich.text import Text

        styles = {"pass": "green", "fail": "bold red", "warn": "yellow", "info": "cyan"}
        out = console()
        # The verdict first; the checks behind it only when they need the reader (issue 29 item 9):
        # an all-pass doctor was 45 lines.
        out.print(verdict_line(directory, checks), style="bold red" if failed else "green")
        shown = checks if args.verbose else [c for c in checks if c["status"] in ("fail", "warn")]
        if shown:
            rows = [(c["name"], Text(c["status"].upper(), style=styles[c["status"]]),
                     c["message"] + (f" (fix: {c['fix']})" if c.get("fix") and c["status"] == "fail" else ""))
                    for c in shown]
            out.print(table("every check" if args.verbose else "what needs you", ["check", "status", "detail"], rows))
        if not args.verbose:
            out.print("-v shows every check")
    return 1 if failed else 0


def verdict_line(directory, checks):
    """One line: how many checks ran and how many failed or warned."""
    failed = sum(c["status"] == "fail" for c in checks)
    warned = sum(c["status"] == "warn" for c in checks)
    counted = sum(c["status"] != "info" for c in checks)
    verdict = f"{failed} of {counted} checks failed" if failed else f"all {counted} checks passed"
    return f"memory-router doctor: {verdict}" + (f", {warned} warning(s)" if warned else "") + f" ({directory})"


def register(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    doctor = subparsers.add_parser(
        "doctor", help="is the hook installed, does it run, what will it read, is MEMORY.md within limits",
        description="Reads the project (.claude/settings.json, shared), local (.claude/settings.local.json) and user "
                    "settings; reports the scope each router hook comes from and whether a shared one runs a "
                    "command every teammate has (memory-router on PATH), runs each hook command once with a neutral "
                    "payload (exit 0 and empty or "
                    "hookSpecificOutput JSON, and nothing in its fail-open log), the cluster file it will read, "
                    "disableAllHooks and CLAUDE_CONFIG_DIR, the provider's budget against the hook's timeout, the "
                    "store it read (cluster file and memory directory, each with how it was found), and MEMORY.md "
                    "against the 200-line / 25 KB load limit.",
        epilog="exit codes: 0 every check passed (warnings allowed); 1 a check failed", formatter_class=raw)
    options.project(doctor)
    options.memory_dir(doctor, options.MEMORY_DIR_GUESSED)
    doctor.add_argument("-v", "--verbose", action="store_true",
                        help="every check in a table (default: the verdict, then only what failed or warned)")
    options.json_output(doctor)
    doctor.set_defaults(handler=cmd_doctor)
