"""The lab's one picture: memory bytes per API call, one line per session. matplotlib is imported
here and only here (the optional extra ``lab``), never on the hook's path."""

import os

from router.errors import InputError

FORMATS = (".png", ".svg")


def plot_memory_per_call(series, path, title="Memory bytes per API call (measured from the real client)"):
    """Write a line chart of ``series`` (``{label: [bytes per call]}``) to ``path`` (.png or .svg)."""
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise InputError(f"--plot needs a .png or .svg file name, got {ext or 'no extension'}", path=path,
                         fix="name the file memory.png or memory.svg")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        import sys

        from harness import installsource

        raise InputError("--plot needs matplotlib, which is not installed",
                         fix=installsource.extra_hint("lab", installsource.installed_source(), sys.executable)) from None
    figure, axes = plt.subplots(figsize=(9, 4.8), dpi=110)
    for label, values in series.items():
        axes.plot(range(1, len(values) + 1), [v / 1000 for v in values], label=label, linewidth=1.6)
    axes.set_xlabel("API call")
    axes.set_ylabel("memory text in the request (KB)")
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None} if ext == ".svg" else None)
    plt.close(figure)
    return os.path.abspath(path)
