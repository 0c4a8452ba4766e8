"""An independent red-team pass (round twenty-six, second team): two of the
user's own tool configs the policy's rule for them covers ("protected where
writing it makes a command the user runs often, and expects to run nothing
of the project's, run a program the model chose"; `.python-version` and
`.tool-versions` are protected because a path there picks the interpreter)
but the defaults did not name:

- rustup's toolchain file, ``rust-toolchain.toml`` (and the older
  ``rust-toolchain``, which takes the same TOML): ``[toolchain] path =
  "..."`` makes every ``cargo``, ``rustc`` and ``rustup`` proxy in that
  directory and below run the ``bin/`` of the directory it names (rustup
  finds the file by walking up from where a command runs), ``cargo
  install ripgrep`` and ``cargo --version`` included, and rust-analyzer
  runs ``cargo metadata`` as the editor opens the folder;
- uv's ``uv.toml``, read from the directory a command runs in and every
  one above it: ``index-url``, ``find-links`` (``./wheels``) and
  ``[[index]]`` decide what ``uv pip install requests`` installs, as
  ``pip.conf`` does for pip (protected), and ``python-install-mirror``
  where ``uv python install`` fetches an interpreter.  Only the user's
  ``.config/uv/uv.toml`` was protected (row 45).

On main each was written (``ok``) at the top and in a crate's or package's
folder.  Each must be refused as ``protected`` (written, edited, made),
still readable; ``uv.lock`` and a near name stay writable.  Every backend
config.
"""

from __future__ import annotations

import pytest

from corral.tools import Toolbox

PINNED = '[toolchain]\nchannel = "1.82.0"\n'
EVIL = {"rust-toolchain.toml": '[toolchain]\npath = "./vendor/toolchain"\n',
        "rust-toolchain": '[toolchain]\npath = "./vendor/toolchain"\n',
        "uv.toml": 'find-links = ["./wheels"]\nno-index = true\n'}


@pytest.mark.parametrize("path", ["rust-toolchain.toml", "crates/cli/rust-toolchain.toml",
                                  "rust-toolchain", "uv.toml", "packages/api/uv.toml"])
def test_a_file_that_picks_the_program_run_is_protected(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(PINNED)
    evil = EVIL[path.rpartition("/")[2]]
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        edit = toolbox.call("edit_file", {"path": path, "oldText": 'channel = "1.82.0"',
                                          "newText": 'path = "./vendor/toolchain"'})
        write = toolbox.call("write_file", {"path": path, "content": evil, "overwrite": True})
    assert read["ok"] is True, read
    for answer in (edit, write):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert (tmp_path / path).read_text() == PINNED


@pytest.mark.parametrize("path", ["rust-toolchain.toml", "rust-toolchain", "uv.toml",
                                  "sub/uv.toml"])
def test_a_new_one_is_not_made(tmp_path, make_root, path):
    content = EVIL[path.rpartition("/")[2]]
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": content})
    assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / path).exists()


def test_near_names_stay_writable(tmp_path, make_root):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = [toolbox.call("write_file", {"path": name, "content": "x\n"})
                   for name in ("uv.lock", "docs/uv.toml.md", "rust-toolchain.md",
                                "rustfmt.toml", "toolchain/uv.txt")]
    for answer in answers:
        assert answer["ok"] is True, answer
