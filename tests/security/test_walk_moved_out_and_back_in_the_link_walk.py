"""THREATS row 35b's dance below a directory the view's link walk holds
(:func:`corral.tools._runtime.view.linkwalk.walk_links`, a Toolbox's walk
at its start and freshness's walk of a directory that appeared): the walk
entered ``a/b``; just before it opens ``c`` by its name there, ``a`` is
renamed out of the root and the outside directory ``s`` put in place of
``c``.  ``s`` holds a link of its own (``gl -> ../../../x``): the walk must not
learn it as a link of the root's (``a/b/c/gl``, leading to the root's
``x``): ``s`` never was beneath.  The move is
put in that one window by a :class:`FaultBackend` hook (the walk's Tree
opens each directory through the backend), on every config.
"""

from __future__ import annotations

import os

from corral.contained import Root, backend_by_name
from corral.testing.backends import Fault, FaultBackend
from corral.tools._runtime.view.linkwalk import walk_links
from corral.tools._runtime.view.links import LinkMap

from .helpers.walk_dance import dance as _dance
from .helpers.walk_dance import tree as _tree


def test_a_directory_swapped_in_below_the_link_walk_is_not_learnt(make_root, tmp_path):
    root_dir, out = _tree(str(tmp_path))
    # the outside directory's own link, read as a/b/c/gl: it would lead to the root's x
    os.symlink("../../../x", os.path.join(out, "s", "gl"))
    os.mkdir(os.path.join(root_dir, "x"))
    backend = FaultBackend(backend_by_name(make_root.backend_name))
    root = Root(root_dir, backend=backend, fast_path=make_root.fast_path)
    hook = backend.add(Fault("open_at", None, name="c", hook=_dance(root_dir, out)))
    links = LinkMap()
    try:
        walk_links(root, links, [(".", 0)])
        assert hook.fired == 1, backend.fired  # moved just before c was opened
    finally:
        root.close()
    learnt = set(links.locations) | {location for location, _ in links.outside()}
    assert "a/b/c/gl" not in learnt, learnt
    assert sorted(os.listdir(os.path.join(out, "a", "b", "c"))) == ["g", "gd", "gl"]
