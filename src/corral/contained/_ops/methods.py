"""The surface operations as methods of ``Root`` (a mixin it inherits).

Each method is one line that hands the root to the module doing the work;
the docstrings say what each does and raises.  Names and signatures are
those of ``os``, ``shutil`` and ``pathlib`` (``open_file`` is ``open``), so
a Python user knows them; every one resolves beneath the root and never
follows a symlink out.
"""

from __future__ import annotations

import os
from typing import IO, TYPE_CHECKING, Any, Literal, TypeVar

from .. import _fileobj
from . import link as _ops_link
from . import meta as _ops_meta
from . import rmtree as _ops_rmtree
from .meta import Ns, Times
from .resolve import RootAPI
from .rmtree import OnExc
from .._rootpath.view import RootPath, ViewRoot

if TYPE_CHECKING:  # extraction (tarfile, zipfile) is imported when first asked for
    from .extract import (Cancellable, Extraction, ExtractLimits, FilterFunction,
                          ProgressCallback, Selection)
    from .extract_read import Archive

__all__ = ["RootSurface"]

_R = TypeVar("_R", bound=RootAPI)


class RootSurface:
    """Operations added to ``Root`` beyond the core's (module docstring)."""

    # -- file objects and text --------------------------------------------
    def open_file(self: RootAPI, path: object, mode: str = "r", buffering: int = -1,
                  encoding: str | None = None, errors: str | None = None,
                  newline: str | None = None) -> IO[Any]:
        """``open()`` beneath the root: a real Python file object (see
        :func:`corral.contained._fileobj.open_file`)."""
        return _fileobj.open_file(self, path, mode, buffering, encoding, errors, newline)

    def read_text(self: RootAPI, path: object, encoding: str | None = None,
                  errors: str | None = None, newline: str | None = None) -> str:
        """``pathlib.Path.read_text`` beneath the root."""
        return _fileobj.read_text(self, path, encoding, errors, newline)

    def write_text(self: RootAPI, path: object, data: str, encoding: str | None = None,
                   errors: str | None = None, newline: str | None = None, *,
                   mode: int | None = None, fsync: bool = True, exclusive: bool = False,
                   follow_symlinks: bool = True) -> int:
        """``pathlib.Path.write_text``, atomic like :meth:`write_bytes`."""
        return _fileobj.write_text(self, path, data, encoding, errors, newline, mode=mode,
                                   fsync=fsync, exclusive=exclusive,
                                   follow_symlinks=follow_symlinks)

    # -- metadata ------------------------------------------------------------
    def chmod(self: RootAPI, path: object, mode: int, *, follow_symlinks: bool = True) -> None:
        """``os.chmod`` on the pinned resolved target (``_ops_meta``)."""
        _ops_meta.chmod(self, path, mode, follow_symlinks=follow_symlinks)

    def chown(self: RootAPI, path: object, uid: int, gid: int, *,
              follow_symlinks: bool = True) -> None:
        """``os.chown`` on the pinned resolved target (``_ops_meta``)."""
        _ops_meta.chown(self, path, uid, gid, follow_symlinks=follow_symlinks)

    def utime(self: RootAPI, path: object, times: Times = None, *, ns: Ns = None,
              follow_symlinks: bool = True) -> None:
        """``os.utime`` on the pinned resolved target (``_ops_meta``)."""
        _ops_meta.utime(self, path, times, ns=ns, follow_symlinks=follow_symlinks)

    def truncate(self: RootAPI, path: object, length: int) -> None:
        """``os.truncate`` beneath the root (``_ops_meta``)."""
        _ops_meta.truncate(self, path, length)

    # -- links, copies, trees --------------------------------------------------
    def copyfile(self: RootAPI, src: object, dst: object, *, follow_symlinks: bool = True,
                 fsync: bool = True) -> object:
        """``shutil.copyfile``, fd to fd, atomic at ``dst`` (``_ops_link``)."""
        return _ops_link.copyfile(self, src, dst, follow_symlinks=follow_symlinks, fsync=fsync)

    def rmtree(self: RootAPI, path: object, ignore_errors: bool = False,
               onexc: OnExc | None = None) -> None:
        """``shutil.rmtree``, fd-based, never following a link (``_ops_rmtree``)."""
        _ops_rmtree.rmtree(self, path, ignore_errors, onexc)

    # -- sub-roots and archives ---------------------------------------------------
    def open_root(self: _R, path: object) -> _R:
        """A Root for the directory ``path`` beneath this one (in-root
        symlinks followed): its own fd, so it lives on when this Root is
        closed, and this Root's options (backend, fast path, strict mode,
        hard links).
        Nothing reached through it can leave *that* directory.  Raises as
        :meth:`open` does, ``NotADirectoryError`` for a non-directory."""
        fd = self.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return type(self).from_fd(fd, follow_symlinks=self.follow_symlinks,
                                      backend=self.backend,
                                      fast_path=bool(self.info()["fast_path"]),
                                      allow_hardlinks=self.allow_hardlinks)
        finally:
            self.backend.close(fd)

    def extract(self: RootAPI, archive: Archive, path: object = ".", *,
                filter: Literal["data"] | FilterFunction = "data",
                members: Selection | None = None, limits: ExtractLimits | None = None,
                progress: ProgressCallback | None = None, cancel: Cancellable | None = None,
                stop_on_refusal: bool = False) -> Extraction:
        """Extract a tar or zip archive into the directory ``path`` beneath
        the root (which must exist), with tarfile's "data" filter semantics,
        every member made through a Root of that directory, checked on the
        tree it leaves (``_extract``): no member lands outside it and no
        symlink it made is left leading out.  An existing symlink at a
        member's name is replaced, never written through.  ``filter``: "data"
        or tarfile's ``(member, dest) -> member | None``, which only narrows;
        ``members``: names or infos to extract; ``limits``: bytes, members
        and compression ratio (:class:`ExtractLimits`, safe defaults);
        ``progress`` and ``cancel`` as the tools take them.  Returns where
        each member landed, why each refused one was refused and why it
        stopped early, if it did.  Raises ``TypeError`` for no archive (or a
        text or unseekable file object), ``tarfile.ReadError`` /
        ``zipfile.BadZipFile`` for a damaged one, ``OSError`` for errors of
        the environment."""
        options: dict[str, Any] = {"filter": filter, "members": members, "limits": limits,
                                   "progress": progress, "cancel": cancel,
                                   "stop_on_refusal": stop_on_refusal}
        from . import extract as _extract

        if path == ".":
            return _extract.extract(self, archive, **options)
        dest = RootSurface.open_root(self, path)
        try:
            return _extract.extract(dest, archive, **options)
        finally:
            dest.close()

    # -- the pathlib-style view -------------------------------------------------
    def joinpath(self: ViewRoot, *parts: str | os.PathLike[str] | RootPath) -> RootPath:
        """A :class:`RootPath` of ``parts`` joined (none: the root itself),
        with pathlib's methods, each through the root."""
        return RootPath(self, *parts)

    def __truediv__(self: ViewRoot, other: str | os.PathLike[str] | RootPath) -> RootPath:
        """``root / "src" / "app.py"``: a :class:`RootPath`."""
        return RootPath(self, other)
