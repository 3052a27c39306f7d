"""Synthetic sessions in the real 2.1.328 transcript shape, for the replay tests: the writer is
``benchmarks/replay.py``'s (one generator for the benchmark and the tests), its lines the real
2.1.328 lines in tests/fixtures/replay/v2.1.328-lines.json."""

import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "replay.py"


def bench():
    """``benchmarks/replay.py`` as a module."""
    spec = importlib.util.spec_from_file_location("replay_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_session(directory, session_id, steps, start=1796058991.0):
    """Write one session of ``steps`` (``(prompt, [slugs read])`` or ``"compact"``) under
    ``directory``; returns its path."""
    module = bench()
    writer = module.SessionWriter(module.load_lines(), session_id, start=start)
    for step in steps:
        if step == "compact":
            writer.compact()
        else:
            prompt, reads = step
            writer.prompt(prompt, reads)
    return pathlib.Path(writer.write(str(directory)))
