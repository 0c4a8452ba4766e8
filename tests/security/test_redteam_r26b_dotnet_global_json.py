"""An independent red-team pass (round twenty-six, second team): .NET's
``global.json``, row 68's kind.  The ``dotnet`` host looks for it from the
directory a command runs in upward, and since .NET 10 its ``sdk.paths``
("paths": [".dotnet", "$host$"], relative to the file; the .NET repos and
every repository testing a preview SDK keep one) are where the SDK every
``dotnet`` command runs is taken from, first match wins: ``dotnet build``,
``dotnet tool install -g``, ``dotnet new``, and the C# extension loading
the folder as the editor opens it.

On main the model wrote ``global.json`` (``ok``: its ``paths`` naming a
folder it fills next), and where a ``global.json`` already names
``.dotnet``, it wrote ``.dotnet/sdk/10.0.100/dotnet.dll`` there directly.
Each must be refused as ``protected`` (written, edited, made), still
readable; what ``paths`` names is protected whole (``$host$`` and a path
outside the root aside); a ``global.json`` without ``paths`` protects no
folder, and a near name stays writable.  Every backend config.
"""

from __future__ import annotations

import json

import pytest

from corral.tools import Toolbox

PINNED = json.dumps({"sdk": {"version": "10.0.100", "rollForward": "latestFeature"}})
LOCAL = json.dumps({"sdk": {"version": "10.0.100", "paths": [".dotnet", "$host$",
                                                             "tools/sdk"]}})


@pytest.mark.parametrize("path", ["global.json", "src/App/global.json"])
def test_global_json_is_protected(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(PINNED)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        edit = toolbox.call("edit_file", {"path": path, "oldText": '"rollForward"',
                                          "newText": '"paths": [".dotnet"], "rollForward"'})
        write = toolbox.call("write_file", {"path": path, "content": LOCAL, "overwrite": True})
        made = toolbox.call("write_file", {"path": "other/global.json", "content": LOCAL})
    assert read["ok"] is True, read
    for answer in (edit, write, made):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / path).read_text() == PINNED
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("place", [".dotnet/sdk/10.0.100/dotnet.dll", ".dotnet/dotnet",
                                   "tools/sdk/sdk/10.0.100/MSBuild.dll"])
def test_what_its_paths_name_is_protected(tmp_path, make_root, place):
    (tmp_path / "global.json").write_text(LOCAL)
    (tmp_path / ".dotnet").mkdir()
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        write = toolbox.call("write_file", {"path": place, "content": "MZ\n"})
        made = toolbox.call("make_directory", {"path": place.rpartition("/")[0] + "/x"})
    for answer in (write, made):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / place).exists()


def test_without_paths_no_folder_is_protected(tmp_path, make_root):
    (tmp_path / "global.json").write_text(PINNED)
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": "x\n"})
                   for name in (".dotnet/notes.txt", "tools/sdk/readme.md", "global.jsonc.md",
                                "docs/global-settings.json")]
    for answer in answers:
        assert answer["ok"] is True, answer
