"""An independent red-team pass over the front ends and the vendor edit
tools, tried as a hostile model (or an unlucky disk) would: patches that
fail part way, moves and deletes of files whose mode keeps them private or
runnable.

Every test asserts the secure behaviour on every backend config.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools import Toolbox, Workspace


@contextmanager
def _faulty_box(make_root, path: Path, *faults: Fault,
                editing: str = "apply_patch") -> Iterator[Toolbox]:
    """A Toolbox (editing with apply_patch unless told) on ``path`` with
    ``faults`` injected, on this test's backend config."""
    backend = FaultBackend(backend_by_name(make_root.backend_name), *faults)
    root = Root(str(path), backend=backend, fast_path=make_root.fast_path)
    try:
        yield Toolbox(root, editing=editing)
    finally:
        root.close()


def _tree(base: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and directory under ``base``: its bytes (files) and mode."""
    out = {}
    for path in sorted(base.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        out[str(path.relative_to(base))] = (data, stat.S_IMODE(info.st_mode))
    return out


def _private_and_runnable(base: Path) -> None:
    (base / "notes").mkdir()
    (base / "notes" / "private.txt").write_text("my private notes\n")
    os.chmod(base / "notes" / "private.txt", 0o600)
    (base / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(base / "run.sh", 0o750)
    (base / "b.txt").write_text("one\ntwo\n")


_DELETE_MOVE_UPDATE = """*** Begin Patch
*** Delete File: notes/private.txt
*** Update File: run.sh
*** Move to: bin/run2.sh
@@
 #!/bin/sh
-echo hi
+echo bye
*** Update File: b.txt
@@
 one
-two
+TWO
*** End Patch"""


@pytest.mark.parametrize("method,err,name", [
    ("rename_at", errno.ENOSPC, "b.txt"),   # the last file's write fails
    ("open_at", errno.ENOSPC, "run2.sh"),  # the moved file's new text finds no room
    ("unlink_at", errno.EIO, "private.txt"),  # the delete itself fails
], ids=["write", "move-source", "delete"])
def test_a_patch_that_fails_part_way_leaves_every_file_as_it_was(tmp_path, make_root, method,
                                                                  err, name):
    """A patch deleting a 0600 file and moving a 0750 script, whose later
    step fails: every file must be back as it was, its mode included (a
    private file put back world-readable is a leak to every local user; a
    script put back without its execute bit is a change the user did not
    make), and nothing the patch made may be left behind."""
    _private_and_runnable(tmp_path)
    before = _tree(tmp_path)
    fault = Fault(method, err, name=name, temp=method == "open_at")
    with _faulty_box(make_root, tmp_path, fault) as box:
        answer = box.call("apply_patch", {"input": _DELETE_MOVE_UPDATE})
    assert answer["ok"] is False, answer
    assert fault.fired, "the fault never fired: the test did not test the failure"
    assert _tree(tmp_path) == before, answer


def test_a_patch_that_moves_a_file_keeps_its_mode(tmp_path, make_root):
    """``*** Move to:`` renames the file as move_file does: a private file
    stays private, a script stays runnable."""
    _private_and_runnable(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = box.call("apply_patch", {"input": """*** Begin Patch
*** Update File: run.sh
*** Move to: bin/run2.sh
@@
 #!/bin/sh
-echo hi
+echo bye
*** Update File: notes/private.txt
*** Move to: notes/kept.txt
@@
-my private notes
+my private notes, moved
*** End Patch"""})
    assert answer["ok"] is True, answer
    assert (tmp_path / "bin" / "run2.sh").read_text() == "#!/bin/sh\necho bye\n"
    assert stat.S_IMODE((tmp_path / "bin" / "run2.sh").stat().st_mode) == 0o750
    assert stat.S_IMODE((tmp_path / "notes" / "kept.txt").stat().st_mode) == 0o600
    assert not (tmp_path / "run.sh").exists() and not (tmp_path / "notes" / "private.txt").exists()


# -- several roots: every path an answer names carries its root ------------------------------


_SENTENCES = frozenset({"message", "hint", "note", "content", "diff", "text", "pattern", "name"})


def _unrooted(answer: object, roots: tuple[str, ...], where: str = "") -> list[tuple[str, str]]:
    """Strings in ``answer`` (sentences and entry names aside) that name a
    path of the test tree (every name in it begins ``zz``) without a root."""
    found: list[tuple[str, str]] = []
    if isinstance(answer, dict):
        for key, value in answer.items():
            if key not in _SENTENCES:
                found += _unrooted(value, roots, f"{where}.{key}")
    elif isinstance(answer, list):
        for index, value in enumerate(answer):
            found += _unrooted(value, roots, f"{where}[{index}]")
    elif isinstance(answer, str) and "zz" in answer and answer.split("/", 1)[0] not in roots:
        found.append((where, answer))
    return found


def test_every_path_in_an_answer_names_its_root(tmp_path, make_root):
    """With two roots, a path in an answer that does not begin with its
    root's name names no root (or the wrong one): a model copying it into
    its next call is refused, or acts elsewhere.  apply_patch's ``movedTo``
    and a refusal's ``component`` (the part of the path that failed) were
    left bare."""
    web, api = tmp_path / "web", tmp_path / "api"
    (web / "zzdir" / "zzsub").mkdir(parents=True)
    api.mkdir()
    (web / "zzdir" / "zzfile.txt").write_text("hello zz\n")
    (web / "zzdir" / "zzsub" / "zzold.txt").write_text("old\n")
    os.symlink("zzdir", web / "zzdirlink")
    os.symlink("zzloop", web / "zzloop")
    plain = Workspace({"web": Toolbox(make_root(str(web))), "api": Toolbox(make_root(str(api)))})
    patching = Workspace({"web": Toolbox(make_root(str(web)), editing="apply_patch"),
                          "api": Toolbox(make_root(str(api)), editing="apply_patch")})
    calls = [
        (plain, "read_file", {"path": "web/zzdir/zzfile.txt/zzx"}),
        (plain, "write_file", {"path": "web/zzdirlink/zzfile.txt/zzx", "content": "x"}),
        (plain, "make_directory", {"path": "web/zzdir/zzfile.txt/zzx"}),
        (plain, "read_file", {"path": "web/zzloop/zzx"}),
        (plain, "edit_file", {"path": "web/zzdirlink/zzfile.txt", "oldText": "hello",
                              "newText": "hi"}),
        (plain, "move_file", {"source": "web/zzdirlink/zzsub/zzold.txt",
                              "destination": "web/zzdirlink/zznew/zzold.txt"}),
        (patching, "apply_patch", {"input": "*** Begin Patch\n"
                                   "*** Update File: web/zzdirlink/zznew/zzold.txt\n"
                                   "*** Move to: web/zzdirlink/zzp/zzmoved.txt\n"
                                   "@@\n-old\n+new\n*** End Patch"}),
    ]
    bare = []
    for workspace, tool, args in calls:
        answer = workspace.call(tool, args)
        bare += [(tool, where, value) for where, value in _unrooted(answer, ("web", "api"))]
    assert not bare, bare
    assert (web / "zzdir" / "zzp" / "zzmoved.txt").read_text() == "new\n"


# -- a patch at odds with itself ---------------------------------------------------------------


@pytest.mark.parametrize("second", ["src/d2/y.txt", "srclink/d2/y.txt"])
def test_a_patch_adding_a_file_where_it_also_needs_a_directory_is_refused_as_such(
        tmp_path, make_root, second):
    """One section adds the file ``src/d2``, another a file inside a
    directory ``src/d2`` (by the same spelling or through a link): the
    patch contradicts itself.  It must be refused as the patch's own
    mistake, before anything is written, never as a file that changed
    under the call (``STALE`` sends a model to read again and retry the
    same patch)."""
    (tmp_path / "src").mkdir()
    os.symlink("src", tmp_path / "srclink")
    before = _tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), editing="apply_patch")
    answer = box.call("apply_patch", {"input": "*** Begin Patch\n*** Add File: src/d2\n+a\n"
                                      f"*** Add File: {second}\n+b\n*** End Patch"})
    assert answer["ok"] is False, answer
    assert answer["code"] == "INVALID_ARGUMENT", answer
    assert answer["details"]["path"] == "src/d2", answer
    assert _tree(tmp_path) == before


# -- a failed call leaves no directory it made -------------------------------------------------


@pytest.mark.parametrize("tool,args,method,err,name,temp", [
    ("write_file", {"path": "a/b/c.txt", "content": "x"}, "open_at", errno.ENOSPC, "c.txt",
     True),
    ("write_file", {"path": "a/b/c.txt", "content": "x"}, "open_at", errno.EDQUOT, "c.txt",
     True),
    ("move_file", {"source": "f.txt", "destination": "a/b/c.txt"}, "rename_at", errno.EXDEV,
     "c.txt", False),
    ("make_directory", {"path": "a/b/c"}, "mkdir_at", errno.ENOSPC, "c", False),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: a/b/c.txt\n+x\n*** End Patch"},
     "open_at", errno.ENOSPC, "c.txt", True),
], ids=["write", "write-quota", "move", "mkdir", "patch"])
def test_a_call_that_fails_leaves_no_directory_it_made(tmp_path, make_root, tool, args, method,
                                                        err, name, temp):
    """A write whose last step fails (a full disk, a quota, another
    filesystem) answers that nothing was written: the directories it made
    for the file must be gone too, or the answer disagrees with the disk."""
    (tmp_path / "f.txt").write_text("f\n")
    before = _tree(tmp_path)
    fault = Fault(method, err, name=name, temp=temp)
    editing = "apply_patch" if tool == "apply_patch" else "corral"
    with _faulty_box(make_root, tmp_path, fault, editing=editing) as box:
        answer = box.call(tool, args)
    assert fault.fired, "the fault never fired: the test did not test the failure"
    assert answer["ok"] is False, answer
    assert _tree(tmp_path) == before, answer


# -- a client's roots never lift a rule of the server's roots ---------------------------------


def _opener(root, parent: Toolbox, base: str) -> Toolbox:
    """As ``corral serve`` opens a client's root below one of its own."""
    return Toolbox(root, policy=parent.policy.beneath(base))


@pytest.mark.parametrize("order", [("web", "base"), ("base", "web")])
def test_a_clients_roots_keep_every_rule_of_the_server_roots_around_them(tmp_path, make_root,
                                                                         order):
    """``corral serve web . --deny 'web/secrets/**'``: the rule is the outer
    root's, and web (inside it) holds it.  A client whose roots are web's
    secrets folder, or web and a folder beside it, narrows the workspace
    to roots the outer one is not among: the outer root's rule must still
    hold there (it read the denied file, and the server's own workspace
    lost the rule too)."""
    web = tmp_path / "web"
    (web / "secrets").mkdir(parents=True)
    (web / "secrets" / "key.txt").write_text("HIDDEN\n")
    (tmp_path / "other").mkdir()
    dirs = {"web": web, "base": tmp_path}
    server = Workspace({name: Toolbox(make_root(str(dirs[name])), deny=["web/secrets/**"])
                        for name in order}, opener=_opener)
    clients = [[web / "secrets"], [web / "secrets", tmp_path / "other"],
               [web, tmp_path / "other"], [web]]
    leaked = []
    for client in clients:
        with server.narrowed([str(path) for path in client]) as narrowed:
            for root in narrowed.roots:
                prefix = "" if len(narrowed.roots) == 1 else f"{root}/"
                for rest in ("key.txt", "secrets/key.txt"):
                    answer = narrowed.call("read_file", {"path": prefix + rest})
                    found = narrowed.call("grep", {"pattern": "HID+EN",
                                                   "path": prefix.rstrip("/") or "."})
                    if answer["ok"] or "HIDDEN" in repr(answer) or "HIDDEN" in repr(found):
                        leaked.append((client, prefix + rest, answer, found))
        for path in ("web/secrets/key.txt", "base/web/secrets/key.txt"):
            answer = server.call("read_file", {"path": path})
            if answer["ok"] or "HIDDEN" in repr(answer):
                leaked.append(("server after", client, path, answer))
    assert not leaked, leaked[:2]
