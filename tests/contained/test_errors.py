"""The core's errors declare ``component`` (:class:`PathError`) and still
are, show and pickle as the built-in ``OSError`` kinds callers catch."""

from __future__ import annotations

import errno
import pickle
import traceback

import pytest

from corral.contained import ContainedError, EscapeError, PathError


def test_a_missing_file_is_a_file_not_found_error_with_its_component(make_root, scratch):
    (scratch / "src").mkdir()
    root = make_root(scratch)
    with pytest.raises(FileNotFoundError) as info:
        root.read_text("src/utl/x.py")
    exc = info.value
    assert isinstance(exc, PathError) and not isinstance(exc, ContainedError)
    assert exc.component == "src/utl" and exc.filename == "src/utl/x.py"
    assert exc.errno == errno.ENOENT
    # shown as the built-in class: the name, the repr and a traceback's last line
    assert type(exc).__name__ == "FileNotFoundError"
    assert repr(exc) == repr(FileNotFoundError(*exc.args))
    assert traceback.format_exception_only(exc) == traceback.format_exception_only(
        FileNotFoundError(exc.errno, exc.strerror, exc.filename))


def test_a_pickled_error_comes_back_as_the_built_in_class_with_its_component(make_root, scratch):
    (scratch / "f").write_text("x")
    root = make_root(scratch)
    with pytest.raises(NotADirectoryError) as info:
        root.read_text("f/x")
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is NotADirectoryError
    assert (back.errno, back.filename, back.component) == (errno.ENOTDIR, "f/x", "f")


def test_the_core_s_own_errors_are_path_errors_too(make_root, scratch):
    root = make_root(scratch)
    with pytest.raises(EscapeError) as info:
        root.read_text("../x")
    assert isinstance(info.value, PathError) and info.value.component is not None
    # a PathError made by hand names no component until it is given one
    assert PathError(errno.EIO, "x").component is None


def test_an_os_error_from_elsewhere_is_not_a_path_error():
    assert not isinstance(FileNotFoundError(errno.ENOENT, "x"), PathError)
