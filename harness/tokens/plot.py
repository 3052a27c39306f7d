"""``tokens report --plot FILE``: the session curve as a PNG (or SVG). matplotlib is the optional
``lab`` extra, imported here and only here, never on the hook's path; without it the command
stops with one line naming the extra."""

import os

from router.errors import InputError

FORMATS = (".png", ".svg")
LABELS = {"flat": "flat MEMORY.md on every call", "slim_routed": "slim + the router, as the hook runs it",
          "slim_worst": "slim + the router's worst case"}


def check_plot_path(path):
    """Refuse a name matplotlib cannot write, before any work is done."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise InputError(f"--plot needs a .png or .svg file name, got {ext or 'no extension'}", path=path,
                         fix="name the file session.png or session.svg")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError("--plot names a file in a directory that does not exist", path=path,
                         fix="create the directory first, or pass another path")


def import_pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        import sys

        from harness import installsource

        raise InputError("--plot needs matplotlib, which is not installed",
                         fix=installsource.extra_hint("lab", installsource.installed_source(), sys.executable)) from None
    return plt


def plot_session(curve, path, method):
    """Write the running totals of ``curve`` (``report["session"]["curve"]``) to ``path``; returns
    its absolute path."""
    check_plot_path(path)
    plt = import_pyplot()
    figure, axes = plt.subplots(figsize=(9, 4.8), dpi=110)
    prompts = range(1, curve["prompts"] + 1)
    for key, values in curve["series"].items():
        axes.plot(prompts, values, label=LABELS.get(key, key), linewidth=1.6)
    for key, at in curve["break_even"].items():
        if at and at <= curve["prompts"]:
            axes.axvline(at, linestyle=":", linewidth=1, color="grey")
            axes.annotate(f"break-even {at}", (at, 0), xytext=(3, 3), textcoords="offset points", fontsize=8)
    if curve["turns"] < curve["prompts"]:
        axes.axvline(curve["turns"], linestyle="--", linewidth=1, color="black",
                     label=f"the modelled session (--turns {curve['turns']})")
    axes.set_xlabel("prompt")
    axes.set_ylabel(f"input tokens sent so far ({method})")
    axes.set_title("Modelled session: flat vs slim MEMORY.md (memory-router tokens report)")
    axes.set_xlim(1, max(2, curve["prompts"]))
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None} if str(path).lower().endswith(".svg") else None)
    plt.close(figure)
    return os.path.abspath(path)
