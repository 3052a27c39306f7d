"""Whether a process is still running, for tests that end an engine and its children."""


def alive(pid):
    """True while ``pid`` runs and is not a zombie (Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
