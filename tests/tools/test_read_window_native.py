"""read_file's native window (``corral_text_window``, native/corral_read.h)
gives exactly the answer of the Python path, and declines (so Python runs)
whenever it could not: a byte order mark, any ``\\r``, a line that may need
cutting.  Without the native module the Python path answers alone."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings, strategies as hs

import corral.tools._builtin.read_file as read_file
from corral.contained import available_backends, backend_by_name
from corral.tools import Toolbox

HAS_NATIVE = "native" in available_backends()
needs_native = pytest.mark.skipif(not HAS_NATIVE, reason="the native module is not built here")


def answer(data: bytes, offset: int, limit: int, cap: int, budget: int, native: bool,
           monkeypatch: pytest.MonkeyPatch) -> tuple[object, ...]:
    """Everything read_file would say of ``data``, by one path or the other."""
    with monkeypatch.context() as patch:
        patch.setattr(read_file, "NATIVE_WINDOW", native)
        facts = read_file._whole("f.txt", data, "digest", offset, limit, cap, budget,
                                 backend_by_name("native"))
    rendered = facts.rendered or read_file._render(offset, facts, cap, budget)
    return (rendered, facts.total, facts.endings, facts.bom, facts.size, facts.sha256,
            facts.rendered is not None)


# mostly ASCII, some 2-, 3- and 4-byte characters; lines around the cap (in bytes and characters)
chars = hs.sampled_from("ab \t") | hs.sampled_from("\u00e9\u4e2d\U0001f600")
lines = hs.lists(hs.text(alphabet=chars, max_size=12), max_size=12)


@needs_native
@settings(max_examples=500, deadline=None)
@given(rows=lines, end=hs.sampled_from(["", "\n", "\r\n", "\r"]), crlf=hs.booleans(),
       bom=hs.booleans(), offset=hs.integers(1, 2) | hs.integers(1, 14), limit=hs.integers(1, 14),
       cap=hs.integers(1, 30) | hs.just(60), budget=hs.integers(0, 160),
       edge=hs.none() | hs.tuples(hs.integers(0, 14), hs.integers(-1, 1)))
def test_native_and_python_windows_agree(rows, end, crlf, bom, offset, limit, cap, budget, edge):
    text = ("\r\n" if crlf and rows[:1] == ["a"] else "\n").join(rows) + end
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    mp = pytest.MonkeyPatch()
    try:
        if edge is not None:  # a budget on, or a byte either side of, where a line ends
            whole = answer(data, offset, limit, cap, 1 << 30, False, mp)[0][0].split("\n")
            budget = max(0, len("\n".join(whole[:edge[0] + 1]).encode()) + edge[1])
        native = answer(data, offset, limit, cap, budget, True, mp)
        python = answer(data, offset, limit, cap, budget, False, mp)
    finally:
        mp.undo()
    assert native[:-1] == python[:-1]
    assert python[-1] is False
    plain = not bom and b"\r" not in data
    window = text.split("\n")[offset - 1:offset - 1 + limit]
    if plain and all(len(row.encode()) <= cap for row in window):
        assert native[-1] is True  # the native path rendered it
    if native[-1]:
        assert plain


# control characters text holds (\b \t \n \v \f \x1b), those it does not, and DEL
controls = hs.sampled_from(b"\x08\t\n\x0b\x0c\x1b\x01\x02\x07\x0e\x1a\x1c\x1f\x7f")


@needs_native
@settings(max_examples=300, deadline=None)
@given(text=hs.lists(hs.sampled_from(b"ab \n") | controls, max_size=60),
       pad=hs.integers(0, 9000), at_head=hs.booleans())
def test_binary_by_control_characters_is_said_alike(text, pad, at_head):
    """The native pass counts the head's control characters (the first
    8,000 bytes) as looks_binary does: a file is refused as binary by both
    paths or by neither, on either side of the one-in-ten line."""
    body = bytes(text)
    filler = b"x\n" * (pad // 2)
    data = body + filler if at_head else filler + body
    outcomes = []
    for native in (True, False):
        mp = pytest.MonkeyPatch()
        try:
            outcomes.append(answer(data, 1, 50, 2000, 1 << 20, native, mp)[:-1])
        except Exception as exc:  # the refusal, compared by what it says
            outcomes.append((type(exc).__name__, str(exc)))
        finally:
            mp.undo()
    assert outcomes[0] == outcomes[1]
    head = data[:8000]
    odd = sum(1 for b in head if (b < 32 and b not in b"\x08\t\n\r\x0b\x0c\x1b") or b == 127)
    assert (odd * 10 > len(head)) == (outcomes[0][0] == "Refusal"), outcomes[0]


# rows of printable ASCII, and a few bytes no plain window holds: NUL, a
# control character, a byte that is no UTF-8, a UTF-8 character
odd_rows = hs.lists(hs.lists(hs.sampled_from([b"a", b"b", b" "]) | hs.sampled_from(
    [b"\x00", b"\x01", b"\xff", "\u00e9".encode()]), max_size=6).map(b"".join), max_size=12)


@needs_native
@settings(max_examples=400, deadline=None)
@given(rows=odd_rows, end=hs.sampled_from([b"", b"\n"]), offset=hs.integers(1, 13),
       limit=hs.integers(1, 13), budget=hs.integers(1, 120) | hs.just(1 << 20))
def test_a_window_is_said_alike_whatever_the_bytes_outside_it(rows, end, offset, limit, budget):
    """A NUL, a control character or a byte that is no UTF-8 anywhere in
    the file (inside the window shown or not) is refused, or answered, by
    the native path exactly as by the Python path."""
    data = b"\n".join(rows) + end
    outcomes = []
    for native in (True, False):
        mp = pytest.MonkeyPatch()
        try:
            outcomes.append(answer(data, offset, limit, 2000, budget, native, mp)[:-1])
        except Exception as exc:  # the refusal, compared by what it says
            outcomes.append((type(exc).__name__, str(exc)))
        finally:
            mp.undo()
    assert outcomes[0] == outcomes[1]
    if b"\x00" in data:
        assert outcomes[0][0] == "Refusal"


@needs_native
@pytest.mark.parametrize("data, args", [
    (b"", {}), (b"\n", {}), (b"\n\n\n", {"offset": 2}), (b"one", {}), (b"one\ntwo", {"offset": 2}),
    (b"x\n" * 5000, {"offset": 4990, "limit": 20}), (b"x\n" * 5000, {"offset": 3}),
    ("\u00e9l\u00e8ve\n".encode() * 30, {"offset": 7, "limit": 3}),
    (b"a" * 2000 + b"\nb\n", {}), (b"a" * 2001 + b"\nb\n", {}),
    (("\u4e2d" * 700 + "\n").encode() * 3, {}),
    (b"\xef\xbb\xbfbom\n", {}), (b"cr\r\nlf\n", {}), (b"x\n" * 3, {"offset": 9}),
])
def test_through_the_toolbox_with_and_without_the_module(tmp_path, make_root, monkeypatch,
                                                         data, args):
    (tmp_path / "f.txt").write_bytes(data)
    toolbox = Toolbox(make_root(tmp_path))
    call = {"path": "f.txt", **args}
    native = toolbox.call("read_file", call)
    monkeypatch.setattr(read_file, "NATIVE_WINDOW", False)
    assert toolbox.call("read_file", call) == native
    if native["ok"]:
        assert native["sha256"] == hashlib.sha256(data).hexdigest()


@needs_native
def test_the_byte_budget_is_kept_exactly(tmp_path, monkeypatch):
    from corral.tools import Limits
    (tmp_path / "f.txt").write_text("".join(f"{'x' * 10}\n" for _ in range(100)))
    for budget in (1, 11, 12, 13, 24, 25, 26, 38, 500):  # "1\tx..." is 12 bytes, each next 13
        toolbox = Toolbox(tmp_path, limits=Limits(read_bytes=budget))
        native = toolbox.call("read_file", {"path": "f.txt"})
        monkeypatch.setattr(read_file, "NATIVE_WINDOW", False)
        assert toolbox.call("read_file", {"path": "f.txt"}) == native
        monkeypatch.setattr(read_file, "NATIVE_WINDOW", True)
        shown = native["endLine"]
        assert shown >= 1 and (len(native["content"].encode()) <= budget or shown == 1)


@needs_native
@pytest.mark.parametrize("data", [b"\n" * 5000, b"ab\n" * 400_000,
                                  ("\u00e9" * 30 + "\n").encode() * 20_000])
def test_windows_larger_than_the_kept_buffer(tmp_path, monkeypatch, data):
    """A host's large byte budget: the window needs a buffer of its own."""
    from corral.tools import Limits
    (tmp_path / "f.txt").write_bytes(data)
    toolbox = Toolbox(tmp_path, limits=Limits(read_bytes=4 << 20, read_lines=500_000))
    call = {"path": "f.txt", "limit": 400_000}
    assert read_file._whole("f.txt", data, "", 1, 400_000, 2000, 4 << 20,
                            backend_by_name("native")).rendered is not None
    native = toolbox.call("read_file", call)
    assert native["ok"] is True and native["endLine"] == min(400_000, data.count(b"\n"))
    monkeypatch.setattr(read_file, "NATIVE_WINDOW", False)
    assert toolbox.call("read_file", call) == native


@pytest.mark.parametrize("args", [
    {"offset": 9223372036854775806}, {"offset": 9223372036854775807},
    {"offset": 10**40}, {"offset": 1e308}, {"offset": 2, "limit": 10**40},
    {"offset": 2, "limit": 1e308}, {"offset": 10**40, "limit": 10**40},
    {"offset": 2, "limit": 2**53 - 1},
], ids=["int64-max-1", "int64-max", "1e40", "1e308", "limit-1e40", "limit-1e308", "both",
        "limit-safe-max"])
def test_offsets_and_limits_of_any_size_are_answered_not_internal(tmp_path, make_root, args):
    """A model's huge offset or limit (past int64, a float like 1e308) gets
    a typed answer on every backend, never INTERNAL: the window past the end
    is refused as INVALID_ARGUMENT, and so is a number past JSON's safe
    integers (2**53 - 1) before it reaches any C code; a limit within them
    shows to the end."""
    (tmp_path / "f.txt").write_bytes(b"a\nb\nc\n")
    toolbox = Toolbox(make_root(tmp_path))
    result = toolbox.call("read_file", {"path": "f.txt", **args})
    if args["offset"] > 3:
        assert result["ok"] is False and result["code"] == "INVALID_ARGUMENT", result
        assert result["details"]["field"] == "offset"
    elif args.get("limit", 0) > 2**53 - 1:
        assert result["ok"] is False and result["code"] == "INVALID_ARGUMENT", result
        assert result["details"]["field"] == "limit"
    else:
        assert result["ok"] is True and result["content"] == "2\tb\n3\tc", result


@pytest.mark.parametrize("name", ["os"] + (["native"] if HAS_NATIVE else []))
def test_the_backend_window_checks_its_numbers(name):
    backend = backend_by_name(name)
    for bad in ({"offset": 0}, {"limit": -1}, {"cap": -1}, {"budget": -(10**40)}):
        args = {"offset": 1, "limit": 5, "cap": 10, "budget": 100, **bad}
        with pytest.raises(ValueError):
            backend.text_window(b"a\nb\n", **args)
    with pytest.raises(TypeError):
        backend.text_window(b"a\n", 1.5, 1, 10, 100)
    huge = backend.text_window(b"a\nb\n", 10**40, 10**40, 10**40, 10**40)
    if name == "native":
        assert huge is not None and (huge.total, huge.shown, huge.content) == (2, 0, "")
    else:
        assert huge is None  # the os backend leaves every window to the caller
