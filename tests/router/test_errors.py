import pytest

from router.errors import ClusterFileError, InputError, MemoryRouterError, decode_utf8, read_utf8


def test_format_names_file_line_column_and_fix():
    err = InputError("bad thing", path="f.md", line=3, column=7, fix="do this")
    assert str(err) == "f.md:3:7: bad thing (fix: do this)"
    assert err.exit_code == 2 and MemoryRouterError("x").exit_code == 1


def test_read_utf8_reads_and_drops_a_bom(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"\xef\xbb\xbfhello\n")
    assert read_utf8(path, "file", "fix it") == "hello\n"


@pytest.mark.parametrize("data, line", [(b"ok\nok\ncaf\xe9\n", 3), (b"\xff", 1)])
def test_bad_byte_names_its_line(tmp_path, data, line):
    path = tmp_path / "f.md"
    path.write_bytes(data)
    with pytest.raises(ClusterFileError) as info:
        read_utf8(path, "cluster file", "fix it", ClusterFileError)
    assert info.value.line == line and "cluster file is not valid UTF-8" in str(info.value)
    with pytest.raises(InputError):
        decode_utf8(data, path, "MEMORY.md")


def test_missing_file_is_the_given_error_with_the_fix(tmp_path):
    with pytest.raises(InputError) as info:
        read_utf8(tmp_path / "absent.md", "labels file", "pass an existing YAML labels file")
    assert "cannot read labels file" in str(info.value) and "pass an existing YAML labels file" in str(info.value)
