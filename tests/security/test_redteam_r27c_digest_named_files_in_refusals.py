"""An independent red-team pass (round twenty-seven, third team) over the
refusals rendered for a model (``corral serve``'s text, every adapter's)
about a file named by a sha256 (an OCI image layout's
``blobs/sha256/<64 hex>``, a content-addressed cache).  The renderer cuts
every full sha256 a sentence names to its short form (which
``expectedSha256`` takes back), names of files included: a missing
``blobs/sha256/<64 hex>x`` answered "Check the name; blobs/sha256/<16 hex>
exists. Try: read_file {"path": "blobs/sha256/<16 hex>"}", and an edit of
the file "oldText does not occur in blobs/sha256/<16 hex>": names that are
not on the disk, a suggested call that misses.  A digest is cut only where
it stands as a digest, never inside a name.  On every backend config.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from corral.hosts import render
from corral.tools import Toolbox

LAYER = "blobs/sha256/" + "3f" * 32

CALLS = {
    "a_misspelt_name_beside_it": ("read_file", {"path": LAYER + "x"}),
    "an_edit_that_does_not_match": ("edit_file", {"path": LAYER, "oldText": "y", "newText": "z"}),
    "a_write_onto_it": ("write_file", {"path": LAYER, "content": "q"}),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_a_file_named_by_a_digest_is_said_whole(tmp_path: Path, make_root: Callable[..., Any],
                                                 name: str) -> None:
    tool, args = CALLS[name]
    (tmp_path / "blobs" / "sha256").mkdir(parents=True)
    (tmp_path / LAYER).write_text("x\n")
    text = render(tool, Toolbox(make_root(str(tmp_path))).call(tool, args))
    assert LAYER in text, text
    for line in text.splitlines():
        cut = line.replace(LAYER, "")
        assert "blobs/sha256/" not in cut, text  # every mention of the name is whole
    assert (tmp_path / LAYER).read_text() == "x\n"
