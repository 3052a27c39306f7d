"""The command-line options several commands share, each defined once (the shape of pip's
``cmdoptions``): a command's face adds one with ``options.json_output(parser)`` and so on, so the
same flag means the same thing, with the same help, in every command that takes it.

Where a default depends on the command (which memory directory, which cluster file), the help
says it in the command's words through the one parameter each function takes.
"""

CLUSTERS_DEFAULT = ("$MEMORY_ROUTER_CLUSTERS, the config file, brain/memory-layer1-clusters.md, else the bundled "
                    "example store")
CONFIG_DEFAULT = ("memory-router.toml or [tool.memory-router] in pyproject.toml, in $CLAUDE_PROJECT_DIR or the "
                  "current directory")
# harness.project.resolve_memory_dir's policy, as the help says it.
MEMORY_DIR_FROM_CONFIG = "memory_dir in the config file"
MEMORY_DIR_GUESSED = MEMORY_DIR_FROM_CONFIG + ", else Claude Code's ~/.claude/projects/<project>/memory"


def json_output(parser):
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def clusters(parser, default=CLUSTERS_DEFAULT, what="cluster file (.md or .tsv)"):
    parser.add_argument("--clusters", metavar="FILE", help=f"{what}; default: {default}")


def config(parser, what="config file"):
    parser.add_argument("--config", metavar="FILE", help=f"{what} (default: {CONFIG_DEFAULT})")


def clusters_and_config(parser):
    """``--clusters`` and ``--config``, found as the hook finds them (``harness.context``)."""
    clusters(parser)
    config(parser)


def memory_dir(parser, default=MEMORY_DIR_FROM_CONFIG, what="memory directory"):
    """``--memory-dir``; ``default`` names the rest of the policy the command applies
    (``MEMORY_DIR_GUESSED`` for the commands that only read)."""
    parser.add_argument("--memory-dir", metavar="DIR", help=f"{what} (default: {default})")


def project(parser, what="project directory"):
    parser.add_argument("--project", metavar="DIR", help=f"{what} (default: the current directory)")


def dry_run(parser, what="print the diff; change nothing"):
    parser.add_argument("--dry-run", action="store_true", help=what)


def file_operand_parser():
    """The parser class for subcommands whose operands are file names (``add_subparsers(
    parser_class=options.file_operand_parser())``): a token that looks like an option but is none
    of the command's is refused by name, with the ``--`` that makes it a file. Without it argparse
    said "unrecognized arguments" or "the following arguments are required: FILE" (naming no
    file) for a file called ``--foo.md``; pre-commit passes the names of committed files."""
    import argparse

    class FileOperandParser(argparse.ArgumentParser):
        def parse_known_args(self, args=None, namespace=None):
            # only where operands are files: elsewhere "if it is a file" would mislead
            operands = any(not action.option_strings for action in self._actions)
            token = unplaced_option(self, args or []) if operands else None
            if token is not None:
                from harness import printedcommands

                self.error(f"{token} is not an option of {self.prog}; if it is a file, put -- before the "
                           f"file names: {printedcommands.command(*self.prog.split(), '--', token)}")
            return super().parse_known_args(args, namespace)

    return FileOperandParser


def unplaced_option(parser, args):
    """The first token of ``args`` (up to ``--``) that argparse would take for an option but that
    names none of ``parser``'s options (nor a unique abbreviation of one), else None. A known
    option's value is skipped; ``-`` (stdin), a negative number and a token holding a space are
    operands to argparse too."""
    import re

    known = parser._option_string_actions
    tokens = iter(args)
    for token in tokens:
        if token == "--":
            return None
        if len(token) < 2 or token[0] not in parser.prefix_chars or " " in token:
            continue
        if re.fullmatch(r"-\d+|-\d*\.\d+", token) and not parser._has_negative_number_optionals:
            continue
        name = token.split("=", 1)[0]
        action = known.get(name)
        if action is None and token[1] not in parser.prefix_chars:
            action = known.get(token[:2])            # -kPATTERN, -vk: a short option and what follows
            if action is not None:
                continue
        if action is None and parser.allow_abbrev and token[1] in parser.prefix_chars:
            matches = {known[option] for option in known if option.startswith(name)}
            action = matches.pop() if len(matches) == 1 else None
        if action is None:
            return token
        if "=" not in token and (action.nargs is None or isinstance(action.nargs, int)):
            for _ in range(1 if action.nargs is None else action.nargs):
                next(tokens, None)
    return None


def help_formatter():
    """The help formatter of every parser (``harness.cli`` sets it on each): argparse's own
    wrapping to the terminal's width, except that a word is never cut (a slug, a path or an option
    stays whole on one line) and a description or epilog keeps the lines it was written with: each
    line is a paragraph wrapped on its own, and a line indented (a list item) wraps under itself."""
    import argparse
    import textwrap

    class ParagraphHelpFormatter(argparse.HelpFormatter):
        def _split_lines(self, text, width):
            text = self._whitespace_matcher.sub(" ", text).strip()
            return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]

        def _fill_text(self, text, width, indent):
            lines = []
            for line in _short_paragraphs(text).splitlines():
                if not line.strip():
                    lines.append("")
                    continue
                lead = indent + line[:len(line) - len(line.lstrip())]
                hang = lead + ("    " if lead.strip() == "" and lead != indent else "")
                lines += textwrap.wrap(line.strip(), width, initial_indent=lead, subsequent_indent=hang,
                                       break_long_words=False, break_on_hyphens=False) or [""]
            return "\n".join(lines)

    return ParagraphHelpFormatter


# A description line longer than this is cut into paragraphs of whole sentences of about this size.
PARAGRAPH_CHARS = 420
_SENTENCE_END = None


def _short_paragraphs(text):
    """``text`` with each unindented line longer than ``PARAGRAPH_CHARS`` cut into paragraphs of whole
    sentences (a sentence ends at ``. `` before a capital, a parenthesis or an option): a
    1,300-character description reads as three or four short paragraphs, not one wall."""
    import re

    global _SENTENCE_END
    if _SENTENCE_END is None:
        _SENTENCE_END = re.compile(r"(?<=[a-z0-9)'\]]\.)\s+(?=[A-Z(]|--)")
    out = []
    for line in text.split("\n"):
        if len(line) <= PARAGRAPH_CHARS or line[:1].isspace():
            out.append(line)
            continue
        paragraph = ""
        for sentence in _SENTENCE_END.split(line):
            if paragraph and len(paragraph) + 1 + len(sentence) > PARAGRAPH_CHARS:
                out += [paragraph, ""]
                paragraph = sentence
            else:
                paragraph = f"{paragraph} {sentence}" if paragraph else sentence
        out.append(paragraph)
    return "\n".join(out)


def apply_help_formatter(parser):
    """Give ``parser`` and every subcommand's parser, at any depth, ``help_formatter()``."""
    import argparse

    formatter = help_formatter()
    stack, seen = [parser], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.formatter_class = formatter
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    return parser
