"""THREATS row 26: the host's ``authorize`` allows only on
``None`` or ``True``.  ``False`` denies with the default reason, ``Denied``
with its own, any other answer denies and says the callback returned an
unexpected value, and an exception fails closed.  Every row is tried on a
mutating call (nothing may be written) and on a read."""

from __future__ import annotations

import pytest

from corral.tools import Denied, Toolbox


class Boom(Exception):
    pass


def answer(value):
    def authorize(request):
        if isinstance(value, BaseException):
            raise value
        return value
    return authorize


ALLOW = [None, True]
# (answer, code, kind, message for a write of a.txt)
DENY = [
    (False, "DENIED", "host", "the host refused to write a.txt"),
    (0, "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize callback "
     "returned a value of type int, which is not an answer (only None or True allow, False "
     "denies)"),
    ("", "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize callback "
     "returned a value of type str, which is not an answer (only None or True allow, False "
     "denies)"),
    ([], "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize callback "
     "returned a value of type list, which is not an answer (only None or True allow, False "
     "denies)"),
    ("no", "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize "
     "callback returned a value of type str, which is not an answer (only None or True allow, "
     "False denies)"),
    (1, "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize callback "
     "returned a value of type int, which is not an answer (only None or True allow, False "
     "denies)"),
    ("yes", "DENIED", "host_unexpected", "the host refused to write a.txt: its authorize "
     "callback returned a value of type str, which is not an answer (only None or True allow, "
     "False denies)"),
    (Denied("not today"), "DENIED", "host", "the host refused to write a.txt: not today"),
    (Boom("host bug at /secret/host/path"), "INTERNAL", None,
     "the tool failed for an internal reason (the cause is in the host's log, not here)"),
]


@pytest.mark.parametrize("value", ALLOW, ids=repr)
def test_none_and_true_allow(tmp_path, make_root, value):
    with Toolbox(make_root(tmp_path), authorize=answer(value)) as toolbox:
        assert toolbox.call("write_file", {"path": "a.txt", "content": "x"})["ok"] is True
        assert toolbox.call("read_file", {"path": "a.txt"})["ok"] is True
    assert (tmp_path / "a.txt").read_text() == "x"


@pytest.mark.parametrize("value, code, kind, message", DENY, ids=lambda v: repr(v)[:20])
def test_everything_else_denies(tmp_path, make_root, value, code, kind, message):
    (tmp_path / "r.txt").write_text("r\n")
    with Toolbox(make_root(tmp_path), authorize=answer(value)) as toolbox:
        write = toolbox.call("write_file", {"path": "a.txt", "content": "x"})
        read = toolbox.call("read_file", {"path": "r.txt"})
        delete = toolbox.call("delete_file", {"path": "r.txt"})
    assert not (tmp_path / "a.txt").exists() and (tmp_path / "r.txt").exists()
    for result in (write, read, delete):
        assert result["ok"] is False and result["code"] == code
        assert result["details"].get("kind") == kind
        assert "/secret/host/path" not in str(result)
    assert write["message"] == message
    if kind == "host_unexpected":
        assert write["hint"] == ("Do not repeat this call; ask the user to fix the host's "
                                 "authorize callback.")
