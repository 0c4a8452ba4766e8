"""The kernel watch's reading of a read holding one replace (a temporary
name made, moved away and arriving at the final name) in one step is
what its loop over the events makes of it, for every read: the same
events handed to the same views, in the same order."""

from __future__ import annotations

import functools
import random
import struct
import weakref

import pytest

from corral.tools._runtime.view import freshness

CREATE, DELETE, MOVED_FROM, MOVED_TO = 0x100, 0x200, 0x40, 0x80
ISDIR = 0x40000000


class _Views:
    """Views of watches 1 and 2 recording what each is handed."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, list[tuple[str | None, int]]]] = []

    def view(self, label: str) -> _Recorder:
        return _Recorder(self, label)


class _Recorder:
    def __init__(self, views: _Views, label: str) -> None:
        self._views = views
        self.label = label

    def changed_many(self, directory: str, wd: int,
                     events: list[tuple[str | None, int]]) -> None:
        self._views.seen.append((self.label, directory, wd, list(events)))

    def changed(self, directory: str, name: str | None, *, lost: bool,
                arrived: bool = True) -> None:
        self._views.seen.append((self.label, directory, -1, [(name, int(lost))]))


def _event(wd: int, mask: int, cookie: int, name: bytes, pad: int = 16) -> bytes:
    length = 0 if not name else (len(name) // pad + 1) * pad
    return struct.pack("iIII", wd, mask, cookie, length) + name.ljust(length, b"\0")


def _handed(data: bytes, *, one_step: bool, monkeypatch: pytest.MonkeyPatch) -> list:
    views = _Views()
    first, second, beside = views.view("a"), views.view("b"), views.view("c")
    watch = freshness._KernelWatch()
    watch.watchers = {1: {weakref.ref(first): "sub", weakref.ref(beside): "sub"},  # type: ignore[dict-item]
                      2: {weakref.ref(second): "other"}}  # type: ignore[dict-item]
    with monkeypatch.context() as patch:
        if not one_step:
            patch.setattr(freshness, "_renamed_onto", lambda data: None)
        watch._dispatch(data)
    return views.seen


def _replace(wd: int, temporary: bytes, name: bytes, cookie: int) -> list[bytes]:
    return [_event(wd, CREATE, 0, temporary), _event(wd, MOVED_FROM, cookie, temporary),
            _event(wd, MOVED_TO, cookie, name)]


@functools.cache  # made once: thousands of cases index it
def _reads() -> tuple[bytes, ...]:
    reads = [b"".join(_replace(1, b".file.py.0ab0fc948cfa.corral-tmp", b"file.py", 7)),
             b"".join(_replace(2, b"t", b"a-long-name-of-forty-characters-or-so.md", 9)),
             b"".join(_replace(3, b".x.tmp", b".vscode", 1))]  # no view watches 3
    shapes = [
        # another name moved away than the one made
        [_event(1, CREATE, 0, b"a"), _event(1, MOVED_FROM, 5, b"b"),
         _event(1, MOVED_TO, 5, b"c")],
        # the arrival of another move (cookie), or in another watch
        [_event(1, CREATE, 0, b"a"), _event(1, MOVED_FROM, 5, b"a"),
         _event(1, MOVED_TO, 6, b"c")],
        [_event(1, CREATE, 0, b"a"), _event(1, MOVED_FROM, 5, b"a"),
         _event(2, MOVED_TO, 5, b"c")],
        # a name that came (not made) or was made a directory, then moved on
        [_event(1, MOVED_TO, 4, b"a"), _event(1, MOVED_FROM, 5, b"a"),
         _event(1, MOVED_TO, 5, b"c")],
        [_event(1, CREATE | ISDIR, 0, b"a"), _event(1, MOVED_FROM, 5, b"a"),
         _event(1, MOVED_TO, 5, b"c")],
        # a directory made and renamed; a delete in place of the move
        [_event(1, CREATE | ISDIR, 0, b"a"), _event(1, MOVED_FROM | ISDIR, 5, b"a"),
         _event(1, MOVED_TO | ISDIR, 5, b"c")],
        [_event(1, CREATE, 0, b"a"), _event(1, DELETE, 0, b"a"), _event(1, MOVED_TO, 5, b"c")],
        # a name made and moved onto one longer than its own
        [_event(1, CREATE, 0, b"a" * 15), _event(1, MOVED_FROM, 5, b"a" * 15),
         _event(1, MOVED_TO, 5, b"c" * 40)],
        # one replace and more (the view's own, another program's)
        [*_replace(1, b".t1", b"f", 5), *_replace(1, b".t2", b"f", 6)],
        [*_replace(1, b".t1", b"f", 5), _event(1, CREATE, 0, b"g")],
        # names as long as a padding unit, and padding longer than needed
        [_event(1, CREATE, 0, b"x" * 16), _event(1, MOVED_FROM, 3, b"x" * 16),
         _event(1, MOVED_TO, 3, b"y" * 16)],
        [_event(1, CREATE, 0, b"x", pad=32), _event(1, MOVED_FROM, 3, b"x", pad=32),
         _event(1, MOVED_TO, 3, b"y", pad=32)],
    ]
    reads += [b"".join(shape) for shape in shapes]
    chooser = random.Random(34)
    masks = [CREATE, DELETE, MOVED_FROM, MOVED_TO, CREATE | ISDIR, 0x8000, 0x400]
    for _ in range(300):
        events = [_event(chooser.choice((1, 2)), chooser.choice(masks), chooser.choice((0, 4)),
                         chooser.choice((b"a", b"b", b".tmp", b"x" * 20)))
                  for _ in range(chooser.choice((1, 2, 3, 3, 3, 4)))]
        reads.append(b"".join(events))
    # cut reads (a length past the end) and empty names
    reads += [reads[0][:-8], reads[0][:40], _event(1, CREATE, 0, b"") * 3]
    return tuple(reads)


@pytest.mark.parametrize("index", range(len(_reads())))
def test_a_read_is_handed_on_as_the_loop_over_its_events_would(index, monkeypatch):
    data = _reads()[index]
    assert _handed(data, one_step=True, monkeypatch=monkeypatch) == \
        _handed(data, one_step=False, monkeypatch=monkeypatch)


def test_a_replace_is_read_in_one_step():
    """(and the cases above then compare the two ways)"""
    data = b"".join(_replace(1, b".file.py.0ab0fc948cfa.corral-tmp", b"file.py", 7))
    assert freshness._renamed_onto(data) == (1, b"file.py")
    assert freshness._renamed_onto(data[:-1]) is None


def _twin(root, wd: int, name: str | None) -> freshness.Freshness:
    """A view's watch awaiting its own replace onto ``name`` in ``sub``."""
    fresh = freshness.Freshness(root)
    if name is not None:
        fresh.expected[(wd, name)] = [1, "sub", 0]
    return fresh


def _state(fresh: freshness.Freshness, watch: freshness._KernelWatch) -> tuple:
    return (dict(fresh.expected), fresh.pending, fresh.dirty, fresh._changes,
            id(fresh) in watch.expecting)


@pytest.mark.parametrize("index", range(len(_reads())))
@pytest.mark.parametrize("awaited", ["its arrival", "another name", None])
def test_a_read_of_the_views_own_replace_is_taken_in_as_the_loop_would(tmp_path, monkeypatch,
                                                                      index, awaited):
    """The drain's one step for a view's own replace (a read holding
    exactly that replace, in a directory that view alone watches, the
    arrival awaited) leaves the view as :meth:`_dispatch` leaves it; any
    other read is left to :meth:`_dispatch`, nothing taken in."""
    from corral.contained import Root

    data = _reads()[index]
    found = freshness._renamed_onto(data)
    name = None if found is None or awaited is None else \
        found[1].decode() if awaited == "its arrival" else found[1].decode() + "x"
    with Root(tmp_path) as root:
        sides = []
        for one_step in (True, False):
            fresh = _twin(root, 1, name)
            watch = freshness._KernelWatch()
            monkeypatch.setattr(freshness, "_KERNEL", watch)  # (the process's one watch)
            watch.watchers = {1: {fresh.ref: "sub"}}
            if name is not None:
                watch.expecting[id(fresh)] = fresh.ref
            before = _state(fresh, watch)
            if not (one_step and watch._own_replace(data, root.backend)):
                if one_step:
                    assert _state(fresh, watch) == before  # nothing taken in
                watch._dispatch(data)
            sides.append(_state(fresh, watch))
        assert sides[0] == sides[1]


def test_the_views_own_replace_is_taken_in_one_step(tmp_path, monkeypatch):
    """(and the cases above then compare the two ways)"""
    from corral.contained import Root

    data = b"".join(_replace(1, b".file.py.0ab0fc948cfa.corral-tmp", b"file.py", 7))
    with Root(tmp_path) as root:
        fresh = _twin(root, 1, "file.py")
        watch = freshness._KernelWatch()
        monkeypatch.setattr(freshness, "_KERNEL", watch)
        watch.watchers = {1: {fresh.ref: "sub"}}
        watch.expecting[id(fresh)] = fresh.ref
        assert watch._own_replace(data, root.backend)
        assert fresh.expected == {} and not watch.expecting and not fresh.dirty
        other = _twin(root, 1, "file.py")  # beside another view of that directory: the loop's
        watch.watchers = {1: {fresh.ref: "sub", other.ref: "sub"}}
        assert not watch._own_replace(data, root.backend)


@functools.cache
def _long_watch_reads() -> tuple[bytes, ...]:
    """Reads of a watch numbered past 255 (a NUL in its number's bytes),
    a replace and reads near one."""
    wd = 0x100
    replace = _replace(wd, b".c.0ab0fc948cfa.corral-tmp", b"c", 3)
    return (b"".join(replace),
            b"".join([replace[0], _event(wd, MOVED_FROM, 3, b".c.0ab0fc948cfb.corral-tmp"),
                      replace[2]]),
            b"".join(replace[:2]) + _event(wd, MOVED_TO, 3, b"c", pad=32))


@pytest.mark.parametrize("index", range(len(_reads()) + len(_long_watch_reads())))
@pytest.mark.parametrize("name", ["c", "f", "a", "file.py", "y" * 16])
def test_a_read_while_a_name_is_awaited_is_taken_in_as_the_loop_would(tmp_path, monkeypatch,
                                                                     index, name):
    """Whatever a read holds while a view awaits its own arrival at a name
    (a replace onto another name, its cookies unlike, names of a padding
    unit's length, a watch numbered past 255), the view is left as the
    loop over the read's events leaves it."""
    from corral.contained import Root

    data = (_reads() + _long_watch_reads())[index]
    with Root(tmp_path) as root:
        sides = []
        for one_step in (True, False):
            watch = freshness._KernelWatch()
            monkeypatch.setattr(freshness, "_KERNEL", watch)
            fresh = freshness.Freshness(root)
            wd = 0x100 if index >= len(_reads()) else 1
            fresh.expected[(wd, name)] = [1, "sub", 0]
            watch.watchers = {wd: {fresh.ref: "sub"}}
            watch.expecting[id(fresh)] = fresh.ref
            before = _state(fresh, watch)
            if not (one_step and watch._own_replace(data, root.backend)):
                if one_step:
                    assert _state(fresh, watch) == before  # nothing taken in
                monkeypatch.setattr(freshness, "_renamed_onto", lambda data: None)
                watch._dispatch(data)
                monkeypatch.undo()
            sides.append(_state(fresh, watch))
        assert sides[0] == sides[1]


def test_a_replace_onto_a_watch_past_255_is_taken_in_one_step(tmp_path, monkeypatch):
    from corral.contained import Root

    with Root(tmp_path) as root:
        fresh = _twin(root, 0x100, "c")
        watch = freshness._KernelWatch()
        monkeypatch.setattr(freshness, "_KERNEL", watch)
        watch.watchers = {0x100: {fresh.ref: "sub"}}
        watch.expecting[id(fresh)] = fresh.ref
        assert watch._own_replace(_long_watch_reads()[0], root.backend)
        assert fresh.expected == {} and not watch.expecting


def _odd_reads() -> list[bytes]:
    """Reads no kernel makes, the C must not read past: a name's length
    past the read's end or near 2**32, a read cut anywhere."""
    replace = b"".join(_replace(1, b".c.tmp", b"c", 3))
    odd = [struct.pack("iIII", 1, CREATE, 0, 0xFFFFFFFF) + b"x" * 40,
           struct.pack("iIII", 1, CREATE, 0, 0x7FFFFFF0) + replace[16:],
           struct.pack("iIII", 1, CREATE, 0, 16) + b"\0" * 16 + replace[32:], b""]
    return odd + [replace[:cut] for cut in range(len(replace))]


@pytest.mark.parametrize("name", ["c", "f", "a", "file.py", "y" * 16])
def test_the_native_reading_of_one_replace_is_pythons(name):
    """The native backend's one step (C) answers every read, odd ones too,
    as the ``os`` backend's Python does, and takes the replaces."""
    from corral.contained import OsBackend, backend_by_name

    native = backend_by_name("native")
    arrival = freshness._arrival(name)
    reads = [*_reads(), *_long_watch_reads(), *_odd_reads()]
    for wd in (1, 2, 0x100):
        taken = [OsBackend().watch_one_replace(data, wd, arrival) for data in reads]
        assert [native.watch_one_replace(data, wd, arrival) for data in reads] == taken
        # the reads holding a replace onto "c" (cookies alike or not), "file.py", "yy..."
        assert any(taken) == ((wd, name) in {(1, "file.py"), (1, "c"), (1, "y" * 16),
                                          (0x100, "c")})
