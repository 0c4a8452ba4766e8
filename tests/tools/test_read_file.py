"""read_file behaviour: windows, truncation, digests, line endings, streaming."""

from __future__ import annotations

import hashlib
import os
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from corral.contained import Root
from corral.tools import Denied, Limits, ReadRequest, Toolbox
from corral.tools._builtin import read_file as read_file_module


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def marker(cap: int, chars: int) -> str:
    return f" [... line cut: {cap} of {chars} characters shown]"


def reference(data: bytes, offset: int, limit: int, cap: int, budget: int) -> dict:
    """An independent, whole-file model of what read_file returns."""
    text = data.decode("utf-8")
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    sep = "\n" if "\n" in text or "\r" not in text else "\r"
    pieces = text.split(sep) if text else []
    ends = bool(text) and text.endswith(sep)
    if ends:
        pieces.pop()
    lines = []
    for i, piece in enumerate(pieces):
        ended = i < len(pieces) - 1 or ends
        if sep == "\n" and ended and piece.endswith("\r"):
            piece = piece[:-1]
        lines.append(piece)
    rows, cut = [], []
    for number, line in enumerate(lines[offset - 1:offset - 1 + limit], start=offset):
        if len(line) > cap:
            line = line[:cap] + marker(cap, len(line))
            cut.append(number)
        rows.append(f"{number}\t{line}")
    kept, used = [], -1
    for row in rows:
        used += len(row.encode()) + 1
        if used > budget and kept:
            break
        kept.append(row)
    end = offset + len(kept) - 1
    lf = data.count(b"\n") - data.count(b"\r\n")
    crlf = data.count(b"\r\n")
    cr = data.count(b"\r") - crlf
    kinds = [k for k, n in (("lf", lf), ("crlf", crlf), ("cr", cr)) if n]
    out = {"content": "\n".join(kept), "startLine": offset, "endLine": end,
           "totalLines": len(lines), "truncated": end < len(lines), "sha256": sha(data),
           "size": len(data), "lineEndings": "none" if not kinds else
           kinds[0] if len(kinds) == 1 else "mixed", "bom": bom}
    if end < len(lines):
        out["nextOffset"] = end + 1
    cut = [n for n in cut if n <= end]
    if cut:
        out["cutLines"] = cut
    return out


def read(toolbox: Toolbox, path: str, **args) -> dict:
    result = toolbox.call("read_file", {"path": path, **args})
    assert result["ok"] is True, result
    return result


@pytest.fixture
def small_chunks(monkeypatch):
    """Force the streaming path with tiny chunks (every boundary is exercised)."""
    monkeypatch.setattr(read_file_module, "FAST_BYTES", 0)
    monkeypatch.setattr(read_file_module, "CHUNK", 7)


def test_window_truncation_and_next_offset(tmp_path, make_root):
    data = "".join(f"line {n}\n" for n in range(1, 11)).encode()
    (tmp_path / "ten.txt").write_bytes(data)
    toolbox = Toolbox(make_root(tmp_path))
    result = read(toolbox, "ten.txt", offset=3, limit=4)
    assert result["content"] == "3\tline 3\n4\tline 4\n5\tline 5\n6\tline 6"
    assert (result["startLine"], result["endLine"], result["totalLines"]) == (3, 6, 10)
    assert result["truncated"] is True and result["nextOffset"] == 7
    assert result["sha256"] == sha(data)  # of the whole file, not the window
    last = read(toolbox, "ten.txt", offset=7)
    assert last["endLine"] == 10 and last["truncated"] is False and "nextOffset" not in last
    whole = read(toolbox, "ten.txt")
    assert whole["content"].splitlines()[0] == "1\tline 1" and whole["truncated"] is False


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_next_offset_chain_covers_the_file(tmp_path, make_root, monkeypatch, stream):
    if stream:
        monkeypatch.setattr(read_file_module, "FAST_BYTES", 0)
        monkeypatch.setattr(read_file_module, "CHUNK", 4096)
    lines = [f"{n}: " + "é€x" * (n % 37) + ("\ttab" if n % 5 == 0 else "") for n in range(6000)]
    lines[100] = "y" * 5000  # one long line: cut, and said to be
    data = "\n".join(lines).encode() + b"\n"
    (tmp_path / "big.txt").write_bytes(data)
    toolbox = Toolbox(make_root(tmp_path), limits=Limits(read_bytes=20_000))
    got: list[str] = []
    offset, calls = 1, 0
    while True:
        result = read(toolbox, "big.txt", offset=offset)
        calls += 1
        assert result["sha256"] == sha(data) and result["totalLines"] == 6000
        assert len(result["content"].encode()) <= 20_000
        for row in result["content"].split("\n"):
            number, _, text = row.partition("\t")
            assert int(number) == len(got) + 1  # numbers continue across calls
            got.append(text)
        assert result["endLine"] == len(got)
        if not result["truncated"]:
            break
        assert result["nextOffset"] == result["endLine"] + 1
        offset = result["nextOffset"]
    assert calls > 3  # the byte budget really cut the windows
    expected = list(lines)
    expected[100] = "y" * 2000 + marker(2000, 5000)
    assert got == expected


def test_line_numbers_are_the_file_lines(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("a\n\nc\n")
    result = read(Toolbox(make_root(tmp_path)), "f.txt")
    assert result["content"] == "1\ta\n2\t\n3\tc"
    assert result["totalLines"] == 3


@pytest.mark.parametrize("data, endings, total, content", [
    (b"a\nb\n", "lf", 2, "1\ta\n2\tb"),
    (b"a\r\nb\r\n", "crlf", 2, "1\ta\n2\tb"),
    (b"a\rb\r", "cr", 2, "1\ta\n2\tb"),
    (b"a\r\nb\nc", "mixed", 3, "1\ta\n2\tb\n3\tc"),
    (b"a\nb\rc\n", "mixed", 2, "1\ta\n2\tb\rc"),
    (b"no ending", "none", 1, "1\tno ending"),
    (b"", "none", 0, ""),
    (b"last\r", "cr", 1, "1\tlast"),
    (b"x\r\nlast\r", "mixed", 2, "1\tx\n2\tlast\r"),
])
def test_line_endings(tmp_path, make_root, data, endings, total, content):
    (tmp_path / "f.txt").write_bytes(data)
    result = read(Toolbox(make_root(tmp_path)), "f.txt")
    assert result["lineEndings"] == endings
    assert result["totalLines"] == total
    assert result["content"] == content
    assert result["bom"] is False
    assert result["size"] == len(data)


def test_bom_detected_and_not_shown(tmp_path, make_root):
    data = b"\xef\xbb\xbfhello\r\nworld\r\n"
    (tmp_path / "bom.txt").write_bytes(data)
    result = read(Toolbox(make_root(tmp_path)), "bom.txt")
    assert result["bom"] is True
    assert result["lineEndings"] == "crlf"
    assert result["content"] == "1\thello\n2\tworld"
    assert result["sha256"] == sha(data)


def test_empty_file(tmp_path, make_root):
    (tmp_path / "empty").write_bytes(b"")
    result = read(Toolbox(make_root(tmp_path)), "empty")
    assert result == {"ok": True, "path": "empty", "content": "", "startLine": 1, "endLine": 0,
                      "totalLines": 0, "truncated": False, "sha256": sha(b""), "size": 0,
                      "lineEndings": "none", "bom": False}


def test_long_line_cut_and_listed(tmp_path, make_root):
    (tmp_path / "min.js").write_text("short\n" + "€" * 2500 + "\nafter\n")
    result = read(Toolbox(make_root(tmp_path)), "min.js")
    rows = result["content"].split("\n")
    assert rows[1] == "2\t" + "€" * 2000 + marker(2000, 2500)
    assert rows[2] == "3\tafter"
    assert result["cutLines"] == [2]


def test_long_line_broken_only_by_lone_carriage_returns_is_cut(tmp_path, make_root):
    # in an LF file a lone \r does not end a line: the 3,000-character line
    # must still be cut, though a \r occurs every 100 characters
    long = ("\r" + "x" * 99) * 30
    (tmp_path / "f.txt").write_text("a\n" + long + "\nb\n", newline="")
    result = read(Toolbox(make_root(tmp_path)), "f.txt")
    assert result["cutLines"] == [2]
    assert result["content"].split("\n")[1] == "2\t" + long[:2000] + marker(2000, 3000)
    assert result["lineEndings"] == "mixed"


def test_limit_is_capped_at_the_default_window(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("x\n" * 50)
    toolbox = Toolbox(make_root(tmp_path), limits=Limits(read_lines=20))
    result = read(toolbox, "f.txt", limit=1000)
    assert result["endLine"] == 20 and result["nextOffset"] == 21 and result["truncated"]


def test_absolute_path_inside_root_is_echoed_relative(tmp_path, make_root):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    result = read(Toolbox(make_root(tmp_path)), str(tmp_path / "src" / "a.py"))
    assert result["path"] == "src/a.py"


def test_symlink_inside_root_is_read(tmp_path, make_root):
    (tmp_path / "real.txt").write_text("real\n")
    os.symlink("real.txt", tmp_path / "alias.txt")
    result = read(Toolbox(make_root(tmp_path)), "alias.txt")
    assert result["path"] == "alias.txt" and result["content"] == "1\treal"


def test_hardlink_allowed_by_option(tmp_path, make_root):
    (tmp_path / "a.txt").write_text("shared\n")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    refused = Toolbox(make_root(tmp_path)).call("read_file", {"path": "b.txt"})
    assert refused["code"] == "UNSUPPORTED" and refused["details"]["kind"] == "hardlink"
    allowed = read(Toolbox(make_root(tmp_path), allow_hardlinks=True), "b.txt")
    assert allowed["content"] == "1\tshared"


def test_read_only_toolbox_reads(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("x\n")
    assert read(Toolbox(make_root(tmp_path), read_only=True), "f.txt")["content"] == "1\tx"


def test_host_is_asked_with_the_root_relative_path(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("x\n")
    asked = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r) or True)
    read(toolbox, str(tmp_path / "d" / "./f.txt"))
    assert asked == [ReadRequest("d/f.txt")]


@pytest.mark.parametrize("answer, code", [(False, "DENIED"), (Denied("no"), "DENIED"),
                                          (RuntimeError("boom /secret/host/path"), "INTERNAL")])
def test_host_refusals_return_no_content(tmp_path, make_root, answer, code):
    (tmp_path / "f.txt").write_text("payload\n")

    def authorize(request):
        if isinstance(answer, Exception):
            raise answer
        return answer

    result = Toolbox(make_root(tmp_path), authorize=authorize).call("read_file", {"path": "f.txt"})
    assert result["code"] == code
    assert "payload" not in str(result) and "/secret/host/path" not in str(result)


def test_swap_during_authorization_fails_closed(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("authorized content\n")
    (tmp_path / "other.txt").write_text("swapped in\n")

    def authorize(request):
        os.replace(tmp_path / "other.txt", tmp_path / "f.txt")
        return True

    result = Toolbox(make_root(tmp_path), authorize=authorize).call("read_file", {"path": "f.txt"})
    assert result["code"] == "STALE" and result["details"]["kind"] == "swapped"
    assert "content" not in result and "swapped in" not in str(result)


# -- the streaming path --------------------------------------------------------

TEXT = hst.lists(hst.sampled_from(["a", "b", "\n", "\r", "\r\n", "é", "€", "𝄞", "\t", " "]),
                 max_size=60).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, bom=hst.booleans(), offset=hst.integers(1, 12), limit=hst.integers(1, 12),
       cap=hst.integers(1, 8), budget=hst.integers(1, 120), chunk=hst.integers(1, 9))
def test_fast_and_streaming_paths_match_the_reference(tmp_path_factory, monkeypatch, text, bom,
                                                       offset, limit, cap, budget, chunk):
    directory = tmp_path_factory.mktemp("prop")
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    (directory / "f.txt").write_bytes(data)
    limits = Limits(read_lines=limit, read_line_chars=cap, read_bytes=budget)
    with Root(directory) as root:
        toolbox = Toolbox(root, limits=limits)
        fast = toolbox.call("read_file", {"path": "f.txt", "offset": offset})
        with monkeypatch.context() as patch:
            patch.setattr(read_file_module, "FAST_BYTES", 0)
            patch.setattr(read_file_module, "CHUNK", chunk)
            streamed = toolbox.call("read_file", {"path": "f.txt", "offset": offset})
    assert fast == streamed
    expected = reference(data, offset, limit, cap, budget)
    if offset > max(expected["totalLines"], 1):
        assert fast["code"] == "INVALID_ARGUMENT"
        assert fast["details"]["kind"] == "offset_past_end"
        return
    assert fast == {"ok": True, "path": "f.txt", **expected}


def test_stream_keeps_a_multibyte_character_split_across_chunks(tmp_path, small_chunks):
    data = ("ab€" * 20 + "\n" + "𝄞" * 9 + "\n").encode()
    (tmp_path / "f.txt").write_bytes(data)
    result = read(Toolbox(tmp_path), "f.txt")
    assert result["content"] == "1\t" + "ab€" * 20 + "\n2\t" + "𝄞" * 9


@pytest.mark.parametrize("data, line, offset", [
    (b"ok\nok\n\xff\n", 3, 6),
    (b"ok\xe2\x82\n", 1, 2),  # a character cut by a newline
    (b"ok\nends badly \xe2\x82", 2, 14),  # a character cut by the end of the file
])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_undecodable_byte_is_located(tmp_path, monkeypatch, data, line, offset, stream):
    if stream:
        monkeypatch.setattr(read_file_module, "FAST_BYTES", 0)
        monkeypatch.setattr(read_file_module, "CHUNK", 4)
    (tmp_path / "f.txt").write_bytes(data)
    result = Toolbox(tmp_path).call("read_file", {"path": "f.txt"})
    assert result["code"] == "UNSUPPORTED" and result["details"]["kind"] == "encoding"
    assert (result["details"]["line"], result["details"]["byteOffset"]) == (line, offset)
    assert result["details"]["size"] == len(data)


def test_nul_late_in_a_streamed_file_is_binary(tmp_path, monkeypatch):
    monkeypatch.setattr(read_file_module, "FAST_BYTES", 1024)
    monkeypatch.setattr(read_file_module, "CHUNK", 1024)
    data = b"text\n" * 2000 + b"\x00" + b"more\n"
    (tmp_path / "f.bin").write_bytes(data)
    result = Toolbox(tmp_path).call("read_file", {"path": "f.bin", "limit": 1})
    assert result["code"] == "UNSUPPORTED" and result["details"] == {
        "path": "f.bin", "kind": "binary", "size": len(data), "message": result["message"]}


def test_window_of_a_large_file_is_streamed_not_loaded(tmp_path):
    # 48 MiB of text: a window near the middle must cost about one chunk of
    # memory, while the digest and line count still cover every byte.
    line = b"0123456789abcdef" * 4 + b"\n"  # 65 bytes
    count = 48 * 1024 * 1024 // len(line)
    block = line * 16384
    with open(tmp_path / "big.log", "wb") as out:
        for _ in range(count // 16384):
            out.write(block)
        out.write(line * (count % 16384))
    expected = hashlib.sha256()
    with open(tmp_path / "big.log", "rb") as src:
        for piece in iter(lambda: src.read(1 << 22), b""):
            expected.update(piece)
    toolbox = Toolbox(tmp_path)
    tracemalloc.start()
    try:
        result = read(toolbox, "big.log", offset=count // 2, limit=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 6 * 1024 * 1024, peak  # the file is 48 MiB
    assert result["totalLines"] == count
    assert result["sha256"] == expected.hexdigest()
    assert result["content"] == "\n".join(f"{n}\t{line.decode().rstrip()}"
                                          for n in range(count // 2, count // 2 + 3))
    assert result["nextOffset"] == count // 2 + 3


def test_read_uses_the_fast_path_when_there_is_one(tmp_path, make_root):
    # a failed openat2 falls back to the (secure, slower) walk silently;
    # read_file's opens and identity checks must not need it
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a = 1\n")
    root = make_root(tmp_path)
    result = read(Toolbox(root), "src/a.py")
    assert result["content"] == "1\ta = 1"
    assert root.stats["walk_fallbacks"] == 0
