"""The one way a user-named path is opened: never blocks, refuses what is not a regular file."""

import errno
import os
import subprocess
import sys
import threading

import pytest

from router import safeio

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def _in_subprocess(code, *args):
    """Run ``code`` in a child with a timeout, so a hang fails the test instead of freezing it."""
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=20)


def test_reading_a_fifo_is_refused_at_once(fifo):
    result = _in_subprocess(
        "import sys; from router.safeio import read_regular_bytes\n"
        "try:\n    read_regular_bytes(sys.argv[1])\nexcept OSError as err:\n    print(err.strerror)", fifo)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "it is a named pipe (FIFO), not a regular file"


@pytest.mark.parametrize("mode", ["a", "w", "ab"])
def test_writing_to_a_fifo_without_a_reader_is_refused_at_once(fifo, mode):
    result = _in_subprocess(
        "import sys; from router.safeio import open_regular\n"
        "try:\n    open_regular(sys.argv[1], sys.argv[2])\nexcept OSError as err:\n    print(type(err).__name__)",
        fifo, mode)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "NotRegularFileError"


def test_appending_to_a_fifo_with_a_reader_is_refused_and_writes_nothing(fifo):
    received = []

    def reader():
        with open(fifo, "rb") as handle:  # blocks until the writer below opens
            received.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    with pytest.raises(safeio.NotRegularFileError, match="named pipe"):
        # With a reader waiting, the open succeeds; fstat is what refuses it.
        for _ in range(200):
            try:
                safeio.open_regular(fifo, "a")
            except safeio.NotRegularFileError as err:
                if err.errno == errno.ENXIO:  # the reader has not opened yet
                    threading.Event().wait(0.01)
                    continue
                raise
    thread.join(timeout=10)
    assert received == [b""]


def test_directory_is_an_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory"):
        safeio.read_regular_bytes(tmp_path)


def test_character_device_is_refused():
    with pytest.raises(safeio.NotRegularFileError, match="character device"):
        safeio.read_regular_bytes(os.devnull)


def test_regular_file_reads_and_appends_blocking(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"abc")
    assert safeio.read_regular_bytes(path) == b"abc"
    with safeio.open_regular(path, "a", encoding="utf-8") as handle:
        assert os.get_blocking(handle.fileno())
        handle.write("d")
    assert path.read_bytes() == b"abcd"
    with pytest.raises(FileNotFoundError):
        safeio.read_regular_bytes(tmp_path / "missing")


def test_limit_is_checked_before_reading(tmp_path):
    path = tmp_path / "big"
    path.write_bytes(b"x" * 100)
    with pytest.raises(OSError, match="100 bytes, over the limit of 10"):
        safeio.read_regular_bytes(path, limit=10)
