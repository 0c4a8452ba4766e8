"""The walks learn where a link leads the short way where it is sure (its
text taken from its canonical directory, ``..`` first, and the place it
names opened beneath the root through no link at all) and the resolver's
long way otherwise.  Both must learn the same of every link: where it
leads, through which directories and links (a move of one of them changes
where it leads), whether it leads out of the root, or that it is no link
to learn.  A link the short way would get wrong (a link to a link, through
a link, ``..`` after a name, out of the root and back, absolute, dangling,
to itself) is each one of the shapes, on every backend config, with the
link's directory fd and without."""

from __future__ import annotations

import os

import pytest

from corral.tools._runtime.view.links import LinkMap, LinkReader, learn_link

SHAPES = {
    "a/b/to_file": "f",
    "a/b/to_directory": "c",
    "a/b/dotted": "./f",
    "a/b/up_and_down": "../../x/y/g",
    "a/b/up_through_a_link": "../../lx/y/g",
    "a/b/up_through_links": "../../ly/g",
    "a/b/dangling": "missing",
    "a/b/dangling_deeper": "../../x/none/more",
    "a/b/out_of_the_root": "../../../out",
    "a/b/out_and_back_in": "../../../{root}/x/y/g",
    "a/b/absolute_outside": "/etc/passwd",
    "a/b/absolute_inside": "{real}/a/b/f",
    "a/b/name_then_up": "c/../f",
    "a/b/itself": "itself",
    "a/b/up_once": "..",
    "a/b/up_to_the_root": "../..",
    "a/with_slashes": "b//c/",
    "a/b/to_a_link": "to_file",
    "a/b/to_a_loop": "loop_one",
    "a/b/loop_one": "loop_two",
    "a/b/loop_two": "loop_one",
    "top": "a",
    "a/b/c/far_up": "../../../x",
    "a/b/c/ünïcode": "../f",
    "a/b/to_denied": "../../.git/config",
}


def _tree(base) -> None:
    (base / "a" / "b" / "c").mkdir(parents=True)
    (base / "x" / "y").mkdir(parents=True)
    (base / ".git").mkdir()
    (base / ".git" / "config").write_text("[core]\n")
    (base / "a" / "b" / "f").write_text("f\n")
    (base / "x" / "y" / "g").write_text("g\n")
    (base / "lx").symlink_to("x")
    (base / "ly").symlink_to("lx/y")
    real = os.path.realpath(base)
    for location, text in SHAPES.items():
        os.symlink(text.format(root=os.path.basename(real), real=real), base / location)


def _known(links: LinkMap, location: str) -> tuple[object, ...]:
    outside = dict(links.outside())
    return (links._leads.get(location), links._via.get(location), outside.get(location),
            links.knows(location), links.is_target(location))


@pytest.mark.parametrize("with_fd", [True, False], ids=["from-its-directory", "by-its-path"])
def test_the_short_way_learns_what_the_long_way_does(tmp_path, make_root, with_fd):
    base = tmp_path / "ws"
    base.mkdir()
    _tree(base)
    root = make_root(str(base))
    long_way, short_way = LinkMap(), LinkMap()
    reader = LinkReader(root)
    for location in SHAPES:
        learn_link(root, long_way, location)
        parent, _, name = location.rpartition("/")
        if with_fd:
            fd = os.open(base / (parent or "."), os.O_RDONLY | os.O_DIRECTORY)
            try:
                reader.learn(short_way, location, fd, name)
            finally:
                os.close(fd)
        else:
            reader.learn(short_way, location)
    for location in SHAPES:
        assert _known(short_way, location) == _known(long_way, location), location
    assert long_way.below(".") == short_way.below(".")
    # the short way is taken where the root opens by openat2 (else every link is learnt long)
    if reader._short:
        assert short_way._leads["a/b/up_and_down"] == "x/y/g"
        assert short_way._via["a/b/up_and_down"] == ("a/b", "a")
