"""write_file behaviour: creation, replacement guards, authorization order,
swaps, the per-path lock, and filesystem faults."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import threading
import time

import pytest

from .helpers.faults import EACCES, ENOSPC, FaultBackend

from corral.contained import Root
from corral.tools import Denied, Toolbox, WriteRequest


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(toolbox: Toolbox, path: str, content: str, **args) -> dict:
    return toolbox.call("write_file", {"path": path, "content": content, **args})


def listing(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_creates_file_and_parents(tmp_path, make_root):
    result = write(Toolbox(make_root(tmp_path)), "pkg/sub/mod.py", "x = 1\n")
    assert result == {"ok": True, "path": "pkg/sub/mod.py", "bytes": 6,
                      "sha256": sha(b"x = 1\n"), "createdDirectories": ["pkg", "pkg/sub"],
                      "created": True}
    assert (tmp_path / "pkg/sub/mod.py").read_bytes() == b"x = 1\n"
    assert listing(tmp_path) == ["pkg", "pkg/sub", "pkg/sub/mod.py"]  # no temporary left


def test_existing_parents_are_not_reported(tmp_path, make_root):
    (tmp_path / "pkg").mkdir()
    result = write(Toolbox(make_root(tmp_path)), "pkg/new/a.py", "")
    assert result["createdDirectories"] == ["pkg/new"] and result["bytes"] == 0


def test_content_is_written_exactly(tmp_path, make_root):
    content = "crlf\r\nlone\rnul\x00tab\t€\n"
    result = write(Toolbox(make_root(tmp_path)), "exact.bin", content)
    assert (tmp_path / "exact.bin").read_bytes() == content.encode()
    assert result["sha256"] == sha(content.encode())


def test_directories_are_authorized_before_they_exist(tmp_path, make_root):
    seen = []

    def authorize(request):
        seen.append((request, [(tmp_path / d).exists() for d in request.creates_directories]))
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "a/b/c.txt", "hi\n")
    assert result["ok"] is True
    assert seen == [(WriteRequest("a/b/c.txt", bytes=3, sha256=sha(b"hi\n"), overwrite=False,
                                  existing_sha256=None, creates_directories=("a", "a/b")),
                     [False, False])]
    assert (tmp_path / "a/b/c.txt").read_text() == "hi\n"


def test_replacement_is_described_to_the_host(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("old\n")
    seen = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: seen.append(r) or True)
    assert write(toolbox, "f.txt", "new\n", overwrite=True)["created"] is False
    assert seen == [WriteRequest("f.txt", bytes=4, sha256=sha(b"new\n"), overwrite=True,
                                 existing_sha256=sha(b"old\n"), creates_directories=())]


@pytest.mark.parametrize("answer, code", [
    (False, "DENIED"), (Denied("not now"), "DENIED"), (RuntimeError("host bug"), "INTERNAL")])
def test_refused_authorization_does_nothing(tmp_path, make_root, answer, code):
    (tmp_path / "keep.txt").write_text("old\n")

    def authorize(request):
        if isinstance(answer, Exception):
            raise answer
        return answer

    toolbox = Toolbox(make_root(tmp_path), authorize=authorize)
    assert write(toolbox, "new/dir/f.txt", "x")["code"] == code
    assert write(toolbox, "keep.txt", "x", overwrite=True)["code"] == code
    assert listing(tmp_path) == ["keep.txt"]
    assert (tmp_path / "keep.txt").read_text() == "old\n"


def test_internal_refusal_is_scrubbed(tmp_path, make_root):
    def authorize(request):
        raise OSError(13, "Permission denied", str(tmp_path / "host" / "secret"))

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "f.txt", "x")
    assert result["code"] == "INTERNAL" and set(result["details"]) == {"message"}
    assert str(tmp_path) not in json.dumps(result) and "Permission" not in json.dumps(result)


def test_replace_guards(tmp_path, make_root):
    (tmp_path / "f.txt").write_bytes(b"v1\n")
    toolbox = Toolbox(make_root(tmp_path))
    refused = write(toolbox, "f.txt", "v2\n")
    assert refused["code"] == "ALREADY_EXISTS"
    assert refused["details"]["currentSha256"] == sha(b"v1\n")
    stale = write(toolbox, "f.txt", "v2\n", expectedSha256=sha(b"other"))
    assert stale["code"] == "STALE"
    assert (tmp_path / "f.txt").read_bytes() == b"v1\n"
    # the digest read_file returns is the one to pass; the result chains on
    digest = toolbox.call("read_file", {"path": "f.txt"})["sha256"]
    second = write(toolbox, "f.txt", "v2\n", expectedSha256=digest.upper())
    assert second["ok"] is True and second["created"] is False
    assert second["sha256"] == toolbox.call("read_file", {"path": "f.txt"})["sha256"]
    third = write(toolbox, "f.txt", "v3\n", expectedSha256=second["sha256"])
    assert third["ok"] is True
    assert write(toolbox, "f.txt", "v4\n", overwrite=True)["ok"] is True
    assert (tmp_path / "f.txt").read_bytes() == b"v4\n"


def test_replace_keeps_the_mode(tmp_path, make_root):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "run.sh", 0o751)
    assert write(Toolbox(make_root(tmp_path)), "run.sh", "#!/bin/sh\necho\n",
                 overwrite=True)["ok"] is True
    assert stat.S_IMODE(os.stat(tmp_path / "run.sh").st_mode) == 0o751


def test_symlink_is_neither_followed_nor_replaced(tmp_path, make_root):
    (tmp_path / "real.txt").write_text("target\n")
    os.symlink("real.txt", tmp_path / "link.txt")
    result = write(Toolbox(make_root(tmp_path)), "link.txt", "x", overwrite=True)
    assert result["code"] == "UNSUPPORTED" and result["details"]["target"] == "real.txt"
    assert os.readlink(tmp_path / "link.txt") == "real.txt"
    assert (tmp_path / "real.txt").read_text() == "target\n"


def test_symlink_to_denied_file_does_not_name_it(tmp_path, make_root):
    (tmp_path / ".env").write_text("KEY=1\n")
    os.symlink(".env", tmp_path / "settings")
    toolbox = Toolbox(make_root(tmp_path), deny=[".env"])
    result = write(toolbox, "settings", "x", overwrite=True)
    assert result["code"] == "DENIED"  # the alias resolves into the deny rule
    assert (tmp_path / ".env").read_text() == "KEY=1\n"


def test_hard_link_is_replaced_not_written_through(tmp_path, make_root):
    (tmp_path / "a.txt").write_text("shared\n")
    os.link(tmp_path / "a.txt", tmp_path / "b.txt")
    result = write(Toolbox(make_root(tmp_path)), "b.txt", "mine\n", overwrite=True)
    assert result["ok"] is True
    assert (tmp_path / "b.txt").read_text() == "mine\n"
    assert (tmp_path / "a.txt").read_text() == "shared\n"  # the other link keeps its content
    assert os.stat(tmp_path / "a.txt").st_nlink == 1
    assert any("hard links" in w for w in result["warnings"])


def test_warnings_for_damaged_content(tmp_path, make_root):
    toolbox = Toolbox(make_root(tmp_path))
    escaped = write(toolbox, "a.py", "def f():\\n    return 1\\n" * 5)
    assert escaped["ok"] is True and "escaped twice" in escaped["warnings"][0]
    lazy = write(toolbox, "b.py", "def f():\n    # ... rest of code unchanged\n")
    assert lazy["ok"] is True and "placeholder" in lazy["warnings"][0]
    clean = write(toolbox, "c.py", "print('a\\nb')\nx = ...\n")
    assert "warnings" not in clean


def test_read_only_toolbox_offers_no_write(tmp_path, make_root):
    toolbox = Toolbox(make_root(tmp_path), read_only=True)
    assert "write_file" not in toolbox.names
    assert "write_file" not in [d["name"] for d in toolbox.definitions()]
    result = write(toolbox, "f.txt", "x")
    assert result["code"] == "DENIED" and result["details"]["kind"] == "read_only"
    assert listing(tmp_path) == []


# -- swaps while the host decides ------------------------------------------------

def test_swapped_file_fails_closed(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("authorized\n")
    (tmp_path / "evil.txt").write_text("swapped in\n")

    def authorize(request):
        os.replace(tmp_path / "evil.txt", tmp_path / "f.txt")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "f.txt", "new",
                   overwrite=True)
    assert result["code"] == "STALE" and result["details"]["kind"] == "swapped"
    assert (tmp_path / "f.txt").read_text() == "swapped in\n"


def test_file_rewritten_in_place_fails_closed(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("authorized\n")

    def authorize(request):
        with open(tmp_path / "f.txt", "r+") as f:  # same inode, new content
            f.write("REWRITTEN!\n")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "f.txt", "new",
                   overwrite=True)
    assert result["code"] == "STALE"
    assert (tmp_path / "f.txt").read_text() == "REWRITTEN!\n"


def test_file_created_meanwhile_is_not_replaced(tmp_path, make_root):
    def authorize(request):
        (tmp_path / "f.txt").write_text("theirs\n")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "f.txt", "mine")
    assert result["code"] == "STALE"
    assert (tmp_path / "f.txt").read_text() == "theirs\n"


def test_symlink_planted_meanwhile_is_not_followed(tmp_path, make_root):
    (tmp_path / "target.txt").write_text("target\n")

    def authorize(request):
        os.symlink("target.txt", tmp_path / "f.txt")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "f.txt", "mine")
    assert result["ok"] is False
    assert (tmp_path / "target.txt").read_text() == "target\n"
    assert os.path.islink(tmp_path / "f.txt")


def test_parent_swapped_meanwhile_fails_closed(tmp_path, make_root):
    (tmp_path / "d").mkdir()
    (tmp_path / "other").mkdir()

    def authorize(request):
        os.rename(tmp_path / "d", tmp_path / "d.old")
        os.symlink("other", tmp_path / "d")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "d/f.txt", "x")
    assert result["code"] == "STALE"
    assert listing(tmp_path / "other") == [] and listing(tmp_path / "d.old") == []


def test_directories_created_meanwhile_fail_closed(tmp_path, make_root):
    def authorize(request):
        os.makedirs(tmp_path / "a" / "b")
        return True

    result = write(Toolbox(make_root(tmp_path), authorize=authorize), "a/b/f.txt", "x")
    assert result["code"] == "STALE"
    assert listing(tmp_path) == ["a", "a/b"]


# -- the per-path lock -----------------------------------------------------------

def test_lock_serialises_read_decide_write(tmp_path, make_root):
    (tmp_path / "f.txt").write_text("base\n")
    base = sha(b"base\n")
    inside = [0]
    most = [0]
    guard = threading.Lock()

    def authorize(request):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.05)  # a slow host: the other writer arrives meanwhile
        with guard:
            inside[0] -= 1
        return True

    toolbox = Toolbox(make_root(tmp_path), authorize=authorize)
    results = []
    threads = [threading.Thread(target=lambda n=n: results.append(
        write(toolbox, "./f.txt" if n else "f.txt", f"writer {n}\n", expectedSha256=base)))
        for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1  # never two decisions about one file at once
    assert sorted(r.get("code", "ok") for r in results) == ["STALE", "ok"]
    winner = next(r for r in results if r["ok"])
    assert sha((tmp_path / "f.txt").read_bytes()) == winner["sha256"]


# -- faults from the filesystem --------------------------------------------------

def fault_toolbox(path, **faults) -> Toolbox:
    return Toolbox(Root(path, backend=FaultBackend(**faults), fast_path=False))


def test_enospc_keeps_the_old_content(tmp_path):
    old = b"old content \x01\x02 kept byte for byte\n"
    (tmp_path / "data.txt").write_bytes(old)
    toolbox = fault_toolbox(tmp_path, write_faults={"data.txt": ENOSPC})
    result = write(toolbox, "data.txt", "new content\n", overwrite=True)
    assert result["code"] == "TOO_LARGE" and result["details"]["kind"] == "no_space"
    assert result["details"]["path"] == "data.txt"
    assert (tmp_path / "data.txt").read_bytes() == old
    assert listing(tmp_path) == ["data.txt"]  # the temporary file was removed


def test_enospc_on_a_new_file_leaves_nothing(tmp_path):
    toolbox = fault_toolbox(tmp_path, write_faults={"new.txt": ENOSPC})
    result = write(toolbox, "new.txt", "x")
    assert result["code"] == "TOO_LARGE" and result["details"]["kind"] == "no_space"
    assert listing(tmp_path) == []


def test_eacces_is_a_permission_refusal(tmp_path):
    (tmp_path / "data.txt").write_text("old\n")
    toolbox = fault_toolbox(tmp_path, open_faults={"data.txt": EACCES})
    result = write(toolbox, "data.txt", "new\n", overwrite=True)
    assert result["code"] == "DENIED" and result["details"]["kind"] == "permission"
    assert result["message"] == ("the filesystem does not permit this on data.txt; nothing was "
                                 "changed")
    assert (tmp_path / "data.txt").read_text() == "old\n"
    read = toolbox.call("read_file", {"path": "data.txt"})
    assert read["code"] == "DENIED" and read["details"]["kind"] == "permission"


def test_vanished_root_is_internal_and_names_nothing(tmp_path, make_root):
    root_dir = tmp_path / "workspace"
    (root_dir / "src").mkdir(parents=True)
    (root_dir / "src" / "a.py").write_text("a\n")
    toolbox = Toolbox(make_root(root_dir))
    shutil.rmtree(root_dir)
    for name, args in [("read_file", {"path": "src/a.py"}),
                       ("write_file", {"path": "src/b.py", "content": "b"}),
                       ("write_file", {"path": "new/b.py", "content": "b"}),
                       ("list_directory", {"path": "src"}),
                       ("list_directory", {"path": "."})]:
        result = toolbox.call(name, args)
        text = json.dumps(result)
        assert result["code"] == "INTERNAL", (name, result)
        assert set(result["details"]) == {"message"}
        assert str(tmp_path) not in text and "src" not in text and "workspace" not in text
    assert not root_dir.exists()
