"""``memory-router gate check FILE... | -``: the citation gate over text no write passes through
(a pull request body, a commit message, a file written before the gate was installed).

Same parser, same skip list and same ledger discovery as the hook (``router.gate.gate.check_texts``),
so the two cannot disagree. Exit 0: nothing blocked; 1: a citation would be blocked; 2: a path
that cannot be read (one line, no traceback) or a bad config. ``memory-router gate`` with no
subcommand is the PreToolUse hook itself, dispatched before argparse by the CLI's ``main``.
"""

import os
import sys

from harness import options
from router.errors import InputError
from router.safeio import open_regular

HOOK_DESCRIPTION = (
    "memory-router gate (no subcommand) is the PreToolUse hook: it reads a Write/Edit/MultiEdit/"
    "NotebookEdit payload on stdin and refuses a write citing a decision id absent from the ledger "
    "or a memory slug the store does not hold (options: --config FILE, --clusters FILE, "
    "--memory-dir DIR). It always exits 0. See docs/citation-gate.md.")


def register(subparsers):
    import argparse

    from router.config import describe_citation_defaults

    gate = subparsers.add_parser(
        "gate", help="the citation gate: a PreToolUse hook, and `gate check` for text no write passes through",
        description=HOOK_DESCRIPTION,
        epilog="citation gate defaults (override in memory-router.toml or [tool.memory-router]):\n"
               + describe_citation_defaults(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    # file operands: a committed file named like an option is refused by name, never obeyed
    actions = gate.add_subparsers(dest="gate_command", metavar="ACTION",
                                  parser_class=options.file_operand_parser())
    check = actions.add_parser(
        "check", help="check files (or - for stdin) with the gate's rules",
        description="Check each FILE (or stdin, -) exactly as the hook checks a write: decision ids "
                    "against the ledgers from the file's directory up (stdin, and a file in no git "
                    "work tree or project such as a pull request body in /tmp: from the current "
                    "directory up), memory citations against the memory directory and the cluster "
                    "file. Ledger files and the fixtures directory are skipped. Exit 1 if any "
                    "citation would be blocked, 2 if a path cannot be read.")
    check.add_argument("paths", nargs="+", metavar="FILE", help="files to check; - reads stdin; after --, "
                       "every argument is a file, even one named like an option")
    check.add_argument("--config", metavar="FILE", help="config file (default: found from the current directory)")
    check.add_argument("--clusters", metavar="FILE", help="cluster file whose member slugs count as memories")
    options.memory_dir(check, options.MEMORY_DIR_GUESSED)
    options.json_output(check)
    check.set_defaults(handler=run_check)
    gate.set_defaults(handler=lambda args: _usage(gate))


def _usage(parser):
    parser.print_help(sys.stderr)
    return 2


def read_source(path, stdin=None):
    """The text of ``path`` (``-``: stdin), or an ``InputError`` naming the path."""
    if path == "-":
        data = (stdin or sys.stdin.buffer).read()
    else:
        try:
            with open_regular(path, "rb") as handle:
                data = handle.read()
        except OSError as err:
            raise InputError(f"cannot read: {err.strerror or err}", path=path,
                             fix="pass a readable file, or - for stdin") from None
    return data.decode("utf-8", errors="replace")


def in_a_tree(directory, project_dirs):
    """True when a git work tree (a directory holding ``.git``) or one of ``project_dirs``
    encloses ``directory``: a file there has ledgers of its own to walk up to."""
    current = os.path.abspath(directory)
    projects = [os.path.abspath(p) for p in project_dirs if p]
    while True:
        if current in projects or os.path.exists(os.path.join(current, ".git")):
            return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


def ledger_start(file_path, cwd):
    """Where the ledger walk for ``file_path`` starts: its own directory inside a git work tree
    or the project, else (a pull request body saved to /tmp) the current directory, as for stdin.
    Without this a loose file found no ledger and every id it cited passed; and a ``DECISIONS.md``
    beside it in a shared directory would decide for it."""
    from router.config import project_dirs

    directory = os.path.dirname(file_path)
    return directory if in_a_tree(directory, project_dirs(cwd)) else cwd


def check_paths(paths, options, stdin=None, cwd=None):
    """One result dict per path (``citations.decide``'s keys plus ``path`` and ``skipped``).

    Every path is read before any is checked, so an unreadable one stops the run with exit 2."""
    from router.gate.gate import check_texts

    cwd = os.path.abspath(cwd or os.getcwd())
    sources = [(path, read_source(path, stdin)) for path in paths]
    results = []
    for path, text in sources:
        file_path = None if path == "-" else os.path.abspath(os.path.join(cwd, path))
        start = ledger_start(file_path, cwd) if file_path else None
        result = check_texts(file_path, [(path, text)], options, cwd, ledger_dir=start)
        result["path"] = path
        results.append(result)
    return results


def run_check(args, stdin=None, stdout=None):
    out = stdout or sys.stdout
    options = {"config": args.config, "clusters": args.clusters, "memory-dir": args.memory_dir}
    results = check_paths(args.paths, options, stdin)
    blocked = any(result["verdict"] == "block" for result in results)
    if args.json:
        from harness.output import print_json

        print_json({"blocked": blocked, "results": results}, out)
        return 1 if blocked else 0
    from router.gate.citations import render

    for result in results:
        name = "<stdin>" if result["path"] == "-" else result["path"]
        if result["skipped"]:
            out.write(f"{name}: skipped ({result['skipped']})\n")
        elif result["verdict"] == "pass":
            out.write(f"{name}: ok\n")
        else:
            out.write(f"{name}: {'BLOCKED' if result['verdict'] == 'block' else 'warnings'}\n")
            out.write("".join(f"  {line}\n" for line in render(result).splitlines()))
    return 1 if blocked else 0
