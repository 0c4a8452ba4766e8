"""The read side of the policed view: a denied or secret name that is a
symlink protects what it leads to from reads and searches, as the name
itself would be (DESIGN rule 3: the policy is decided on the object AND on
every denied or protected name that leads to it).

Two shapes, tried on every backend config through every read-side tool:

* ``deny=["private/**"]`` with ``private -> data``: nothing under ``data``
  is read, listed, globbed or grepped;
* ``.env -> config/settings.txt`` (a secret name that is a link): the file
  it leads to is neither read nor searched.

A refused path is answered the same whether it exists or not (no oracle),
and an unrelated file is read and searched as before.
"""

from __future__ import annotations

import os
from pathlib import Path

from corral.tools import Toolbox

PASSWORD = "hunter2-password"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _denied_link_tree(tmp_path: Path) -> None:
    _write(tmp_path / "data" / "creds.txt", f"db = {PASSWORD}\n")
    _write(tmp_path / "data" / "sub" / "deep.txt", f"deep {PASSWORD}\n")
    _write(tmp_path / "public" / "readme.txt", "nothing to see\n")
    os.symlink("data", tmp_path / "private")


def _secret_link_tree(tmp_path: Path) -> None:
    _write(tmp_path / "config" / "settings.txt", f"TOKEN={PASSWORD}\n")
    _write(tmp_path / "config" / "other.txt", "plain\n")
    os.symlink("config/settings.txt", tmp_path / ".env")


def _refused(envelope: dict) -> bool:
    return envelope["ok"] is False and envelope["code"] == "DENIED"


def _answer_without_path(envelope: dict, path: str) -> dict:
    """The envelope with the path as spelled replaced, to compare two
    refusals of different names."""
    text = repr(envelope).replace(path, "<path>")
    return {"text": text}


def _found(envelope: dict) -> str:
    """What an answer shows beyond echoing the call's own arguments or
    naming the refused path."""
    echoed = {"pattern", "path", "message", "details", "hint", "note"}
    return repr({key: value for key, value in envelope.items() if key not in echoed})


# -- denied directory name that is a link -----------------------------------------------


def test_read_file_through_a_denied_links_target_is_refused(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    assert _refused(box.call("read_file", {"path": "private/creds.txt"}))
    there = box.call("read_file", {"path": "data/creds.txt"})
    missing = box.call("read_file", {"path": "data/nothing.txt"})
    assert _refused(there), there
    assert PASSWORD not in repr(there)
    assert _refused(missing), missing
    assert _answer_without_path(there, "data/creds.txt") == \
        _answer_without_path(missing, "data/nothing.txt")
    assert box.call("read_file", {"path": "public/readme.txt"})["ok"]


def test_read_files_through_a_denied_links_target_is_refused(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    out = box.call("read_files", {"paths": ["public/readme.txt", "data/creds.txt",
                                            "data/sub/deep.txt"]})
    assert PASSWORD not in repr(out), out
    assert "nothing to see" in repr(out)


def test_file_info_through_a_denied_links_target_is_refused(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    there = box.call("file_info", {"path": "data/creds.txt"})
    missing = box.call("file_info", {"path": "data/nothing.txt"})
    assert _refused(there), there
    assert _refused(missing), missing
    assert _answer_without_path(there, "data/creds.txt") == \
        _answer_without_path(missing, "data/nothing.txt")
    assert box.call("file_info", {"path": "public/readme.txt"})["ok"]


def test_list_directory_hides_a_denied_links_target(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    inside = box.call("list_directory", {"path": "data"})
    assert "creds.txt" not in repr(inside), inside
    assert "deep.txt" not in repr(box.call("list_directory", {"path": "data/sub"}))
    public = box.call("list_directory", {"path": "public"})
    assert public["ok"] and "readme.txt" in repr(public)


def test_glob_hides_a_denied_links_target(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    for args in ({"pattern": "**/*.txt"}, {"pattern": "*.txt", "path": "data"},
                 {"pattern": "data/creds.txt"}, {"pattern": "**/deep.txt"}):
        out = box.call("glob", args)
        assert "creds.txt" not in _found(out) and "deep.txt" not in _found(out), (args, out)
    assert "readme.txt" in repr(box.call("glob", {"pattern": "**/*.txt"}))


def test_grep_hides_a_denied_links_target(tmp_path, make_root):
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    for args in ({"pattern": PASSWORD}, {"pattern": PASSWORD, "path": "data"},
                 {"pattern": PASSWORD, "path": "data/sub"},
                 {"pattern": PASSWORD, "path": "data/creds.txt"}):
        out = box.call("grep", args)
        assert PASSWORD not in _found(out), (args, out)
        assert "creds.txt" not in _found(out) and "deep.txt" not in _found(out), (args, out)
    found = box.call("grep", {"pattern": "nothing to see"})
    assert "readme.txt" in repr(found), found


# -- secret file name that is a link ---------------------------------------------------


def test_read_file_of_what_a_secret_link_leads_to_is_refused(tmp_path, make_root):
    _secret_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    assert _refused(box.call("read_file", {"path": ".env"}))
    there = box.call("read_file", {"path": "config/settings.txt"})
    assert _refused(there), there
    assert PASSWORD not in repr(there)
    out = box.call("read_files", {"paths": ["config/settings.txt", "config/other.txt"]})
    assert PASSWORD not in repr(out), out
    assert "plain" in repr(out)
    assert box.call("read_file", {"path": "config/other.txt"})["ok"]


def test_search_hides_what_a_secret_link_leads_to(tmp_path, make_root):
    _secret_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)))
    for args in ({"pattern": PASSWORD}, {"pattern": PASSWORD, "path": "config"},
                 {"pattern": "TOKEN"}):
        out = box.call("grep", args)
        assert "settings.txt" not in _found(out), (args, out)
        assert PASSWORD not in _found(out), (args, out)
    assert "other.txt" in repr(box.call("grep", {"pattern": "plain"}))
    globbed = box.call("glob", {"pattern": "config/*.txt"})
    assert "settings.txt" not in repr(globbed) and "other.txt" in repr(globbed), globbed


def test_a_link_met_after_open_protects_its_target_from_reads(tmp_path, make_root):
    """A denied link made after the Toolbox opened, once a call has passed
    through it, is known: its target is refused from then on."""
    _write(tmp_path / "data" / "creds.txt", f"db = {PASSWORD}\n")
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    os.symlink("data", tmp_path / "private")
    assert _refused(box.call("read_file", {"path": "private/creds.txt"}))
    assert _refused(box.call("read_file", {"path": "data/creds.txt"}))
    out = box.call("grep", {"pattern": PASSWORD})
    assert "creds.txt" not in repr(out), out


def test_listing_or_searching_under_a_denied_links_target_is_no_oracle(tmp_path, make_root):
    """Under a denied link's target, a directory that exists and one that
    does not are answered alike by list_directory and grep."""
    _denied_link_tree(tmp_path)
    box = Toolbox(make_root(str(tmp_path)), deny=["private/**"])
    for tool, args in (("list_directory", {}), ("grep", {"pattern": "deep"}),
                       ("glob", {"pattern": "*"})):
        there = box.call(tool, {**args, "path": "data/sub"})
        missing = box.call(tool, {**args, "path": "data/none"})
        assert there["ok"] is missing["ok"], (tool, there, missing)
        assert _answer_without_path(there, "data/sub") == \
            _answer_without_path(missing, "data/none"), (tool, there, missing)


def test_a_denied_name_through_a_link_to_the_root_hides_what_it_leads_to(tmp_path, make_root):
    """A link to the root itself gives every entry a second name: a deny
    rule on that name hides the entry in listings and searches, at any
    depth, and the entries no rule names stay shown."""
    _write(tmp_path / "keys" / "deep" / "key.txt", f"key {PASSWORD}\n")
    _write(tmp_path / "keys" / "top.txt", f"top {PASSWORD}\n")
    _write(tmp_path / "open" / "note.txt", f"note {PASSWORD}\n")
    _write(tmp_path / "at_root.txt", f"root {PASSWORD}\n")
    os.symlink(".", tmp_path / "mirror")
    box = Toolbox(make_root(str(tmp_path)), deny=["mirror/keys/**", "mirror/at_root.txt"])
    out = box.call("glob", {"pattern": "**/*.txt"})
    assert out["paths"] == ["open/note.txt"], out
    found = box.call("grep", {"pattern": PASSWORD})
    assert [m["path"] for m in found["matches"]] == ["open/note.txt"], found
    for path in ("keys", "keys/deep"):
        listed = box.call("list_directory", {"path": path})
        assert "key.txt" not in repr(listed) and "top.txt" not in repr(listed), listed
    assert "at_root.txt" not in repr(box.call("list_directory", {"path": "."}))
