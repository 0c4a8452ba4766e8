"""Links another program makes while a Toolbox is open, in a directory
below the root that was there at open (a nested project's ``.vscode``,
a package's ``.envrc``, a secret ``.env`` beside the code), then a
hostile model's call on where they lead or through them.

A protected or denied name counts at any depth (``**/.vscode/tasks.json``,
``**/.envrc``, ``**/.env``): ``sub/.vscode -> ../editor`` makes
``editor/settings.json`` the settings VS Code reads when it opens
``sub``.  Each call is answered as it would be had the link been there
when the Toolbox opened (``DENIED``), and nothing is written or shown;
with the kernel's watch and without one, on every backend config.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from corral.tools import Toolbox
from corral.tools._runtime.view import freshness

from .helpers.link_calls import OURS, SETTINGS, call_op, acts_on_existing, denied, unchanged

SECRET = "API_KEY=TOPSECRET\n"

# (the link, its text, the directory it leads to, the protected file written there)
LINKS = [
    ("sub/.vscode", "../editor", "editor", "settings.json"),
    ("sub/deeper/.vscode", "../../editor", "editor", "tasks.json"),
    ("pkg/.claude", "../x", "x", "settings.json"),
    ("pkg/.envrc", "../config/envrc", "config", "envrc"),
]
OPS = ["write", "overwrite", "edit", "move_onto", "move_away", "delete", "make_directory"]


def _tree(base: Path, directory: str, name: str, *, existing: bool) -> None:
    """The directories the link will lie in (there at open, holding a file
    each so they are not new), where it leads, and a file to move."""
    for folder in ("sub/deeper", "pkg", directory):
        (base / folder).mkdir(parents=True, exist_ok=True)
        (base / folder / "code.py").write_text("x = 1\n")
    (base / "staged.txt").write_text(OURS)
    if existing:
        (base / directory / name).write_text(SETTINGS)


def _opened(base: Path, make_root) -> Toolbox:
    box = Toolbox(make_root(str(base)))
    # a call before the link: the view's picture is the tree at open
    assert box.call("list_directory", {"path": "."})["ok"] is True
    return box


@pytest.mark.parametrize("spelled", ["where-it-leads", "through-the-link"])
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize(("link", "text", "directory", "name"), LINKS,
                         ids=[case[0] for case in LINKS])
def test_a_nested_protected_link_made_after_open_protects_what_it_leads_to(
        tmp_path, make_root, watching, link, text, directory, name, op, spelled):
    _tree(tmp_path, directory, name, existing=acts_on_existing(op))
    box = _opened(tmp_path, make_root)
    os.symlink(text, tmp_path / link)  # another program makes it now
    if link.endswith(".envrc"):  # a link to the protected file itself
        target = f"{directory}/{name}" if spelled == "where-it-leads" else link
    else:
        target = f"{directory}/{name}" if spelled == "where-it-leads" else f"{link}/{name}"
    answer = call_op(box, op, target)
    assert denied(answer), answer
    unchanged(tmp_path, f"{directory}/{name}", op)


def _secret_tree(base: Path) -> None:
    (base / "config").mkdir()
    (base / "config" / "env").write_text(SECRET)
    (base / "sub").mkdir()
    (base / "sub" / "code.py").write_text("x = 1\n")


def _read(box: Toolbox, call: str, spelled: str) -> dict:
    if call == "read_file":
        return box.call("read_file", {"path": spelled})
    if call == "grep":
        return box.call("grep", {"pattern": "TOP", "path": spelled.rpartition("/")[0]
                                 or "."})
    if call == "glob":
        return box.call("glob", {"pattern": "**/*env*"})
    if call == "list_directory":
        return box.call("list_directory", {"path": spelled.rpartition("/")[0] or "."})
    assert call == "edit_file"
    return box.call("edit_file", {"path": spelled, "oldText": "TOPSECRET", "newText": "x"})


@pytest.mark.parametrize("spelled", ["config/env", "sub/.env"])
@pytest.mark.parametrize("call", ["read_file", "grep", "glob", "list_directory", "edit_file"])
def test_a_nested_secret_link_made_after_open_hides_what_it_leads_to(
        tmp_path, make_root, watching, call, spelled):
    """Answered as by a Toolbox opened with the link there."""
    _secret_tree(tmp_path)
    box = _opened(tmp_path, make_root)
    os.symlink("../config/env", tmp_path / "sub" / ".env")
    answer = _read(box, call, spelled)
    assert answer == _read(Toolbox(make_root(str(tmp_path))), call, spelled)
    assert "TOPSECRET" not in repr(answer), answer
    if call in ("read_file", "edit_file"):
        assert answer["ok"] is False, answer
    assert (tmp_path / "config" / "env").read_text() == SECRET


def test_a_nested_link_made_after_a_call_wrote_where_it_leads_is_learnt(
        tmp_path, make_root, watching):
    """The directory was written into (and decided) before the link came,
    and the link's own directory was passed by a call too."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    for path in ("editor/notes.md", "sub/notes.md"):
        answer = box.call("write_file", {"path": path, "content": "a\n"})
        assert answer["ok"] is True, answer
    os.symlink("../editor", tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_nested_link_replaced_by_a_directory_is_forgotten(tmp_path, make_root, watching):
    """Gone again (a directory in its place): what it led to is written as before."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    os.symlink("../editor", tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    os.unlink(tmp_path / "sub" / ".vscode")
    os.mkdir(tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert answer["ok"] is True, answer
    # and the directory in its place is protected as itself
    answer = box.call("write_file", {"path": "sub/.vscode/settings.json", "content": OURS})
    assert denied(answer), answer


def test_a_nested_directory_replaced_by_a_link_is_learnt(tmp_path, make_root, watching):
    _tree(tmp_path, "editor", "settings.json", existing=False)
    (tmp_path / "sub" / "shared").mkdir()
    box = _opened(tmp_path, make_root)
    os.rmdir(tmp_path / "sub" / "shared")
    os.symlink("../editor", tmp_path / "sub" / "shared")  # harmless name: not protected
    assert box.call("write_file", {"path": "editor/notes.md", "content": "a\n"})["ok"] is True
    (tmp_path / "sub" / "deeper" / "code.py").unlink()
    os.rmdir(tmp_path / "sub" / "deeper")
    os.symlink("../editor", tmp_path / "sub" / "deeper")
    os.rename(tmp_path / "sub" / "deeper", tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_directory_renamed_into_a_nested_place_holding_a_link_is_learnt(
        tmp_path, make_root, watching):
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    prepared = tmp_path.parent / f"{tmp_path.name}-prepared"
    prepared.mkdir()
    os.symlink("../../editor/settings.json", prepared / "settings.json")
    os.rename(prepared, tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
    # a harmless directory holding a protected link, renamed in by another program
    prepared.mkdir()
    (prepared / "deep").mkdir()
    os.symlink("../../../x", prepared / "deep" / ".claude")
    os.rename(prepared, tmp_path / "pkg" / "vendor")
    (tmp_path / "x").mkdir()
    answer = box.call("write_file", {"path": "x/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "x" / "settings.json")


def test_a_directory_moved_within_the_tree_is_followed_where_it_lands(
        tmp_path, make_root, watching):
    """Moved by another program (its watch now names another place), and
    another made where it was: links made later in either are learnt."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    (tmp_path / "x").mkdir()
    box = _opened(tmp_path, make_root)
    os.rename(tmp_path / "sub" / "deeper", tmp_path / "pkg" / "moved")
    assert box.call("list_directory", {"path": "pkg"})["ok"] is True
    os.symlink("../../editor", tmp_path / "pkg" / "moved" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    (tmp_path / "sub" / "deeper").mkdir()
    assert box.call("list_directory", {"path": "sub"})["ok"] is True
    os.symlink("../../x", tmp_path / "sub" / "deeper" / ".claude")
    answer = box.call("write_file", {"path": "x/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
    assert not os.path.lexists(tmp_path / "x" / "settings.json")


def test_a_link_put_where_the_model_just_wrote_is_learnt(tmp_path, make_root, watching):
    """The view's own write there is not looked at again; another
    program's link put in its place right after is."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    answer = box.call("write_file", {"path": "sub/.vscode", "content": "a file\n"})
    assert answer["ok"] is True, answer
    os.symlink("../editor", tmp_path / "sub" / "link-being-moved")
    os.rename(tmp_path / "sub" / "link-being-moved", tmp_path / "sub" / ".vscode")
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


@pytest.mark.parametrize("moved", [False, True], ids=["in-a-directory-so-named",
                                                      "moved-onto-the-name"])
def test_a_link_named_as_the_views_temporary_file_is_learnt(tmp_path, make_root, watching,
                                                            moved):
    """Another program's link made under a name like the one the view's
    own replace gives its temporary file (beside the file the model keeps
    replacing, its events read with the replace's): a ``.vscode`` link
    moved onto its name from there, or made in a directory so named, is
    learnt all the same (a name is never skipped for its looks)."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    for _ in range(3):  # the later ones by the plain replace
        answer = box.call("write_file", {"path": "sub/notes.txt", "content": "notes\n",
                                         "overwrite": True})
        assert answer["ok"] is True, answer
    disguised = tmp_path / "sub" / ".notes.txt.0123456789ab.corral-tmp"
    if moved:
        os.symlink("../editor", disguised)
        answer = box.call("write_file", {"path": "sub/notes.txt", "content": "notes\n",
                                         "overwrite": True})
        assert answer["ok"] is True, answer
        os.rename(disguised, tmp_path / "sub" / ".vscode")
    else:
        disguised.mkdir()
        os.symlink("../../editor", disguised / ".vscode")
    answer = box.call("write_file", {"path": "sub/notes.txt", "content": "notes\n",
                                     "overwrite": True})
    assert answer["ok"] is True, answer
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_link_made_removed_and_made_again_between_calls_is_learnt(
        tmp_path, make_root, watching):
    """Events of a name made and gone again at once are passed over
    together: a link made, removed and made again (or moved away and
    made again) before the next call is learnt all the same."""
    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    link = tmp_path / "sub" / ".vscode"
    os.symlink("../editor", link)
    os.unlink(link)
    os.symlink("../editor", tmp_path / "sub" / ".claude")
    os.rename(tmp_path / "sub" / ".claude", tmp_path / "sub" / "elsewhere")
    os.symlink("../editor", link)
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")


def test_a_link_made_while_the_models_write_there_fails_is_learnt(
        tmp_path, make_root, watching, monkeypatch):
    """Another program makes the link at the very name the model's write
    creates, while it writes (its event read meanwhile by another call):
    the write fails, and the event it was counted for is looked at."""
    from corral.contained import _target

    _tree(tmp_path, "editor", "settings.json", existing=False)
    box = _opened(tmp_path, make_root)
    real = _target.Target.write_bytes

    def raced(self, *args, **kwargs):
        if self.path == "sub/.vscode":
            os.symlink("../editor", tmp_path / "sub" / ".vscode")
            freshness._KERNEL.drain(box.root.backend)  # another call's read, between (if watched)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_target.Target, "write_bytes", raced)
    answer = box.call("write_file", {"path": "sub/.vscode", "content": "a file\n"})
    assert answer["ok"] is False and answer["code"] != "INTERNAL", answer
    monkeypatch.setattr(_target.Target, "write_bytes", real)
    answer = box.call("write_file", {"path": "editor/settings.json", "content": OURS})
    assert denied(answer), answer
    assert not os.path.lexists(tmp_path / "editor" / "settings.json")
