"""A Toolbox opening its root lists each directory of the tree once: the
look at open (git's places, the links) and the following of every
directory (freshness: its watch, or its stamp) share one listing, and the
following goes on below where the look stopped (deeper than it goes),
learning the links there, so a tree within the bound needs no walk on a
thread of its own.  Counted through the backend (deterministic), on every
backend config."""

from __future__ import annotations

from corral.contained import Root, backend_by_name
from corral.testing.backends import CountingBackend
from corral.tools import Toolbox
from corral.tools._policy.gitdirs import MAX_DEPTH

WIDE = 4  # directories at each of the first levels
DEEP = MAX_DEPTH + 4  # a chain of directories below what the look at open lists


def _tree(base) -> tuple[int, list[str]]:
    """A tree of directories, some deeper than the look at open goes, with
    a link in several; how many directories it has, and its links."""
    count, links = 1, []
    for a in range(WIDE):
        for b in range(WIDE):
            (base / f"a{a}" / f"b{b}").mkdir(parents=True)
            (base / f"a{a}" / f"b{b}" / "f.txt").write_text("x\n")
            count += 1 + (b == 0)
    chain = base / "a0" / "b0"
    for level in range(DEEP):
        chain = chain / f"d{level}"
        chain.mkdir()
        count += 1
        if level % 3 == 0:
            (chain / "up").symlink_to("..")
            links.append(str(chain.relative_to(base) / "up"))
    (base / "a1" / "b1" / "ln").symlink_to("f.txt")
    links.append("a1/b1/ln")
    return count, links


def test_open_lists_each_directory_once(tmp_path, make_root):
    count, links = _tree(tmp_path)
    backend = CountingBackend(backend_by_name(make_root.backend_name))
    root = Root(str(tmp_path), backend=backend, fast_path=make_root.fast_path)
    with backend.counting() as tally:
        box = Toolbox(root)
    with root, box:
        view = box._view
        assert tally["scandir"] == count, (count, str(tally))
        # every link known at open, the deep ones too, with no walk after it
        assert view.links_settled
        for link in links:
            assert view.links.knows(link), link
        followed = view.freshness._watched
        assert len(followed) == count, sorted(followed)
