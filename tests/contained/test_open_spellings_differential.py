"""``Root.open`` of a ``str`` path takes the walk in one backend call
before parsing it (the walk configs' hot path); every spelling it does not
take (empty, ``.``, ``..`` or ``//`` inside, a leading or trailing ``/``, a
NUL, a non-ASCII or long one, a link on the way, a bad mode) must answer as
:meth:`Root.open_handle`, which parses first: the same file, or the same
error.  On every backend config, on real files."""

from __future__ import annotations

import os
import stat as st

import pytest

_SPELLINGS = [
    "a/b/f", "a//b/f", "a/./b/f", "./a/b/f", "a/b/../b/f", "a/b/f/", "/a/b/f", "", ".",
    "a/b", "a/b/", "a/l/f", "a/b/nope", "a/b/f\x00x", "a/é/f", "a/" + "x" * 300,
    "/".join(["a"] * 130) + "/f", "a/b/fifo", "lf", "..", "a/../../x",
]


def _tree(base: str) -> None:
    os.makedirs(os.path.join(base, "a", "b"))
    os.makedirs(os.path.join(base, "a", "é"))
    for rel, data in (("a/b/f", b"f"), ("a/é/f", b"e")):
        with open(os.path.join(base, rel), "wb") as fh:
            fh.write(data)
    os.symlink("b", os.path.join(base, "a", "l"))
    os.symlink("a/b/f", os.path.join(base, "lf"))
    os.mkfifo(os.path.join(base, "a", "b", "fifo"))


def _outcome(call) -> tuple[object, ...]:
    try:
        fd = call()
    except (OSError, ValueError) as exc:
        return (type(exc).__name__, getattr(exc, "errno", None))
    info = os.fstat(fd)
    os.close(fd)
    return ("opened", info.st_dev, info.st_ino, st.S_IFMT(info.st_mode))


@pytest.mark.parametrize("spelling", _SPELLINGS)
@pytest.mark.parametrize("mode", [0o666, 0o600, -1, 0o7777])
def test_open_answers_every_spelling_as_open_handle(tmp_path, make_root, spelling, mode):
    _tree(str(tmp_path))
    with make_root(str(tmp_path)) as root:
        direct = _outcome(lambda: root.open(spelling, os.O_RDONLY, mode))

        def handled() -> int:
            handle = root.open_handle(spelling, os.O_RDONLY, mode)
            fd = os.dup(handle.fd)
            handle.close()
            return fd

        assert direct == _outcome(handled)
        if spelling == "a/b/f" and mode in (0o666, 0o600):
            assert direct[0] == "opened"
