"""The manifest of a lab session run (``run.json``): written by ``harness.lab.runner`` when the
session ends, read by ``memory-router lab report``, and how a directory of runs is recognised.

Apart from the runner because reading runs back needs no client and no run: the report and its
tests only read directories the runner left."""

import json
import os
from dataclasses import asdict

from router.errors import InputError
from router.safeio import open_regular

MANIFEST = "run.json"


def write_manifest(run, seconds=None):
    data = asdict(run)
    data["seconds"] = seconds
    data["format"] = 1
    with open_regular(os.path.join(run.run_dir, MANIFEST), "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def load_manifest(run_dir):
    """The ``run.json`` of one session run, as a dict; InputError (exit 2) when missing or bad."""
    path = os.path.join(run_dir, MANIFEST)
    try:
        with open_regular(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as err:
        raise InputError(f"not a lab run directory: cannot read {MANIFEST}: {err.strerror or err}", path=run_dir,
                         fix="pass a directory made by memory-router lab run") from None
    except ValueError as err:
        raise InputError(f"{MANIFEST} is not valid JSON: {err}", path=path,
                         fix="re-run memory-router lab run into a new directory") from None
    if not isinstance(data, dict) or "memory" not in data:
        raise InputError(f"{MANIFEST} is not a lab run manifest", path=path,
                         fix="pass a directory made by memory-router lab run")
    return data


def session_dirs(run_dir):
    """The session runs under ``run_dir``: itself if it holds run.json, else its subdirectories
    that do (``lab run --memory flat,slim,none`` writes one per memory mode)."""
    if os.path.isfile(os.path.join(run_dir, MANIFEST)):
        return [run_dir]
    try:
        names = sorted(os.listdir(run_dir))
    except OSError as err:
        raise InputError(f"cannot read the run directory: {err.strerror or err}", path=run_dir,
                         fix="pass a directory made by memory-router lab run") from None
    found = [os.path.join(run_dir, n) for n in names if os.path.isfile(os.path.join(run_dir, n, MANIFEST))]
    if not found:
        raise InputError("no lab session run here (no run.json in it or its subdirectories)", path=run_dir,
                         fix="pass a directory made by memory-router lab run")
    return found
