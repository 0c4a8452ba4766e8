"""classify is a pure function: an error, the call and the facts gathered
before it in, a refusal out.  Every row is tried here without a
filesystem (no root, no temporary directory): what the tree held is said
by the :class:`Facts` alone.  The gathering through the view is tried by
the recovery and refusal tests through ``Toolbox.call``."""

from __future__ import annotations

import ast
import errno
from pathlib import Path

import pytest

import corral.tools._refusals.classify as classify_module
from corral.contained import (EscapeError, HardLinkError, InvalidPathError, PathError,
                              RootVanishedError, SpecialFileError, StaleError, SymlinkError)
from corral.tools import Refusal, Suggests
from corral.tools._refusals.catalogue import Code, Kind, denied_rule, not_found
from corral.tools._refusals.classify import (Call, Facts, Seen, asks_for_close_names, classify,
                                             component_of, names_path)
from corral.tools._refusals.locator import Found

READ = Call("read_file", {"path": "src/mian.py"}, Suggests(retry_on=frozenset({"file"})))
EDIT = Call("edit_file", {"path": "src/mian.py", "oldText": "a", "newText": "b"},
            Suggests(read_instead=True))


def _error(code: int, path: str, component: str | None = None) -> PathError:
    exc = PathError(code, errno.errorcode[code], path)
    exc.component = component if component is not None else path
    return exc


def _missing(path: str = "src/mian.py", component: str | None = None) -> PathError:
    return _error(errno.ENOENT, path, component)


def _facts(**fields) -> Facts:
    fields.setdefault("path", "src/mian.py")
    fields.setdefault("field", "path")
    return Facts(**fields)


# -- a missing path: close names, a respelling, the suggested call -----------------------


def test_a_missing_file_names_the_close_file_and_retries_with_it():
    facts = _facts(close=("src/main.py",), seen={"src/main.py": Seen("file")})
    refusal = classify(_missing(), READ, facts).envelope()
    assert refusal["code"] == "NOT_FOUND"
    assert refusal["details"] == {"path": "src/mian.py", "missing": "src/mian.py",
                                  "field": "path", "didYouMean": ["src/main.py"],
                                  "kind": "not_found", "message": "src/mian.py does not exist"}
    assert (refusal["suggestedTool"], refusal["suggestedArgs"]) == (
        "read_file", {"path": "src/main.py"})


def test_a_tool_that_changes_files_offers_a_read_of_the_close_file():
    facts = _facts(close=("src/main.py",), seen={"src/main.py": Seen("file")})
    refusal = classify(_missing(), EDIT, facts)
    assert (refusal.suggested_tool, refusal.suggested_args) == ("read_file",
                                                                {"path": "src/main.py"})


def test_a_close_name_of_the_wrong_kind_is_named_but_not_retried():
    facts = _facts(close=("src/main.py",), seen={"src/main.py": Seen("directory")})
    refusal = classify(_missing(), READ, facts)
    assert refusal.details["didYouMean"] == ["src/main.py"]
    assert (refusal.suggested_tool, refusal.suggested_args) == ("list_directory",
                                                                {"path": "src"})


def test_a_hard_linked_close_file_is_offered_only_where_hard_links_are_allowed():
    seen = {"src/main.py": Seen("file", links=2)}
    refused = classify(_missing(), READ, _facts(close=("src/main.py",), seen=seen))
    assert refused.suggested_tool == "list_directory"
    allowed = classify(_missing(), READ, _facts(close=("src/main.py",), seen=seen,
                                                allow_hardlinks=True))
    assert allowed.suggested_tool == "read_file"


def test_a_close_name_that_is_no_plausible_typo_is_not_retried():
    facts = _facts(close=("src/domain.py",), seen={"src/domain.py": Seen("file")})
    refusal = classify(_missing(), READ, facts)
    assert refusal.details["didYouMean"] == ["src/domain.py"]
    assert refusal.suggested_tool == "list_directory"


def test_a_close_name_gone_before_its_kind_was_seen_is_not_retried():
    refusal = classify(_missing(), READ, _facts(close=("src/main.py",)))
    assert refusal.suggested_tool == "list_directory"


def test_a_hidden_parent_is_never_offered_to_list():
    refusal = classify(_missing(), READ, _facts(parent_hidden=True))
    assert refusal.code is Code.NOT_FOUND and refusal.suggested_tool is None
    assert "didYouMean" not in refusal.details


def test_a_respelled_path_is_named_with_how_it_was_read():
    found = Found(("src/util/mian.py",), "with the leading folders it left out", 1200,
                  complete=False)
    facts = _facts(found=found, seen={"src/util/mian.py": Seen("file")})
    refusal = classify(_missing(), READ, facts).envelope()
    assert refusal["details"]["didYouMean"] == ["src/util/mian.py"]
    assert refusal["details"]["readAs"] == "with the leading folders it left out"
    assert refusal["details"]["searched"] == 1200
    assert refusal["details"]["searchComplete"] is False
    assert "src/util/mian.py exists" in refusal["hint"]
    # a respelling is what the model meant, typo or not
    assert (refusal["suggestedTool"], refusal["suggestedArgs"]) == (
        "read_file", {"path": "src/util/mian.py"})


def test_a_path_no_argument_named_gets_no_suggested_call():
    facts = Facts(path="src/mian.py", close=("src/main.py",))
    refusal = classify(_missing(), READ, facts)
    assert refusal.details["didYouMean"] == ["src/main.py"]
    assert refusal.suggested_tool is None and "field" not in refusal.details


def test_a_missing_parent_is_named_as_the_missing_component():
    refusal = classify(_missing("srx/a/b.py", "srx"), READ,
                       _facts(path="srx/a/b.py", close=("src/a/b.py",),
                              seen={"src/a/b.py": Seen("file")}))
    assert refusal.details["missing"] == "srx"
    assert refusal.message == "srx/a/b.py does not exist: there is no srx"
    assert refusal.suggested_args == {"path": "src/a/b.py"}


# -- what the facts say before any row ------------------------------------------------------


def test_a_hidden_component_is_answered_as_the_rule_answers_whatever_the_error():
    hidden = denied_rule("secrets/x", "path")
    for exc in (_missing("secrets/x"), _error(errno.ENOTDIR, "secrets/x", "secrets"),
                _error(errno.ELOOP, "secrets/x")):
        assert classify(exc, READ, _facts(path="secrets/x", hidden=hidden)) is hidden


def test_a_root_that_is_gone_is_internal_never_not_found_or_changed():
    gone = Facts(root_gone=True)
    for exc in (_missing(), StaleError("changed", "a", component="a"),
                not_found("a", "a"), Refusal(Code.STALE, "a changed", "Read it again.",
                                             kind=Kind.SWAPPED)):
        assert classify(exc, READ, gone).code is Code.INTERNAL
    # a refusal of another kind stands: the root being gone does not change it
    outside = Refusal(Code.OUTSIDE_ROOT, "x is outside the root", "No.", kind=Kind.DOTDOT)
    assert classify(outside, READ, gone) is outside
    assert classify(not_found("a", "a"), READ, Facts()).code is Code.NOT_FOUND


@pytest.mark.parametrize("exc", [
    RuntimeError("/home/someone/private"), KeyError("x"), MemoryError(),
    RootVanishedError("the root was removed", "a"),
    OSError(errno.EIO, "Input/output error"),  # names no path
    OSError(errno.EIO, "Input/output error", "src/a.py"),  # no row for EIO
])
def test_what_has_no_row_is_internal_and_scrubbed(exc, caplog):
    refusal = classify(exc, READ, _facts(path="src/a.py")).envelope()
    assert refusal["code"] == "INTERNAL" and set(refusal["details"]) == {"message"}
    assert "private" not in str(refusal) and "src/a.py" not in str(refusal)
    assert caplog.records, "the cause is logged"


# -- the rows by type and by errno ----------------------------------------------------------


@pytest.mark.parametrize("exc, code, kind", [
    (StaleError("changed", "a.py", component="a.py"), "STALE", "swapped"),
    (EscapeError("out", "a.py", component="a.py", reason="symlink"), "OUTSIDE_ROOT", "symlink"),
    (SymlinkError("a link", "a.py", component="a.py"), "UNSUPPORTED", "symlink"),
    (SpecialFileError("a socket", "a.py", component="a.py", kind="socket"), "UNSUPPORTED",
     "socket"),
    (HardLinkError("linked", "a.py", component="a.py", links=3), "UNSUPPORTED", "hardlink"),
    (InvalidPathError("bad", "a.py", component="a.py"), "INVALID_ARGUMENT", "path"),
    (_error(errno.ENOTDIR, "a.py"), "INVALID_ARGUMENT", "not_directory"),
    (_error(errno.EISDIR, "a.py"), "INVALID_ARGUMENT", "directory"),
    (_error(errno.EEXIST, "a.py"), "ALREADY_EXISTS", "exists"),
    (_error(errno.ENOTEMPTY, "a.py"), "INVALID_ARGUMENT", "not_empty"),
    (_error(errno.ELOOP, "a.py"), "UNSUPPORTED", "symlink_loop"),
    (_error(errno.EACCES, "a.py"), "DENIED", "permission"),
    (_error(errno.EPERM, "a.py"), "DENIED", "permission"),
    (_error(errno.EROFS, "a.py"), "DENIED", "read_only_filesystem"),
    (_error(errno.ENOSPC, "a.py"), "TOO_LARGE", "no_space"),
    (_error(errno.EDQUOT, "a.py"), "TOO_LARGE", "no_space"),
    (_error(errno.EXDEV, "a.py"), "UNSUPPORTED", "cross_device"),
    (_error(errno.ENAMETOOLONG, "a.py"), "INVALID_ARGUMENT", "path_too_long"),
], ids=lambda v: v if isinstance(v, str) else type(v).__name__)
def test_each_row_gives_its_code_and_kind(exc, code, kind):
    refusal = classify(exc, READ, _facts(path="a.py")).envelope()
    assert (refusal["code"], refusal["details"]["kind"]) == (code, kind)
    assert refusal["details"]["path"] == "a.py"
    # a changed file and a hard-linked one are refused whatever argument named them
    assert refusal["details"].get("field") == (None if kind in ("swapped", "hardlink")
                                               else "path")


def test_a_file_taken_for_a_directory_is_named():
    exc = _error(errno.ENOTDIR, "src/a.py/b", "src/a.py")
    refusal = classify(exc, READ, _facts(path="src/a.py/b"))
    assert refusal.message == "src/a.py is a file, so src/a.py/b cannot be inside it"
    assert refusal.details["component"] == "src/a.py"


def test_the_path_spoken_of_is_the_facts_not_the_error():
    # a write that creates parents fails on a parent; the model named the file
    exc = _error(errno.EACCES, "deep", "deep")
    refusal = classify(exc, READ, _facts(path="deep/er/file.txt"))
    assert refusal.details["path"] == "deep/er/file.txt"
    assert "deep" in refusal.message


# -- the pure helpers the gathering asks ---------------------------------------------------


def test_only_a_missing_name_asks_for_close_names():
    assert asks_for_close_names(_missing())
    assert asks_for_close_names(FileNotFoundError(errno.ENOENT, "gone", "a"))
    assert not asks_for_close_names(_error(errno.EEXIST, "a"))
    # a row by type wins over the errno it carries
    assert not asks_for_close_names(StaleError("changed", "a", err=errno.ENOENT))
    assert not asks_for_close_names(not_found("a", "a"))
    assert not asks_for_close_names(RuntimeError("a"))


def test_the_path_and_component_an_error_names():
    assert names_path(_missing("a/b", "a")) == "a/b" and component_of(_missing("a/b", "a")) == "a"
    assert names_path(OSError(errno.EIO, "x")) is None
    assert names_path(not_found("a", "a")) is None and names_path(ValueError("a")) is None
    assert component_of(OSError(errno.ENOENT, "x", "a")) is None


def test_the_answer_is_the_same_for_the_same_input():
    facts = _facts(close=("src/main.py",), seen={"src/main.py": Seen("file")})
    first, second = classify(_missing(), READ, facts), classify(_missing(), READ, facts)
    assert first.envelope() == second.envelope()


def test_classify_looks_at_nothing():
    """The module imports nothing that reaches a filesystem or the call's
    view: no os, no contained Root, no runtime, no Looking."""
    source = Path(classify_module.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported |= {f"{node.module}.{alias.name}" for alias in node.names}
    assert not {name for name in imported
                if name in ("os", "socket", "shutil", "pathlib")
                or name.endswith((".Root", ".Handle", ".Target", ".Looking"))
                or "_runtime" in name or ".looking" in name}, imported
