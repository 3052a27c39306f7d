"""The hot-path hooks' argument parser: argparse costs more to import than a whole route."""


def parse_long_options(argv, names, what="hook"):
    """``--name VALUE`` / ``--name=VALUE`` for each of ``names``; anything else is a ValueError
    (which a hook turns into silence, failing open). Returns {name: value or None}."""
    options = dict.fromkeys(names)
    i = 0
    while i < len(argv):
        arg = argv[i]
        for name in options:
            flag = "--" + name
            if arg == flag and i + 1 < len(argv):
                options[name] = argv[i + 1]
                i += 1
                break
            if arg.startswith(flag + "="):
                options[name] = arg[len(flag) + 1:]
                break
        else:
            raise ValueError(f"unknown {what} argument {arg!r}")
        i += 1
    return options
