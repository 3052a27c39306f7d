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
        rows = [(c["name"], Text(c["status"].upper(), style=styles[c["status"]]),
                 c["message"] + (f" (fix: {c['fix']})" if c.get("fix") and c["status"] == "fail" else ""))
                for c in checks]
        out = console()
        out.print(table(f"memory-router doctor: {directory}", ["check", "status", "detail"], rows))
        out.print(f"{len(failed)} check(s) failed" if failed else "all checks passed",
                  style="bold red" if failed else "green")
    return 1 if failed else 0


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
    options.json_output(doctor)
    doctor.set_defaults(handler=cmd_doctor)
