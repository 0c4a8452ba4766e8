"""Which backend a Root runs on: the one module that chooses.

:func:`default_backend` picks one (``CORRAL_BACKEND=os|native`` forces it;
else the native backend where ``corral._native`` was built, else the os
backend); :func:`backend_by_name` gives a shared instance of either;
:func:`backend_report` says which is in use, which fast paths, and why.

The backends themselves know nothing of selection: ``_backend`` (the
interface and the os backend) and ``_native_backend`` (which builds on it)
are imported from here, never the other way round.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from typing import Any

from ._backend import FAKE_FS_REFUSAL, IS_DARWIN, Backend, OsBackend, _under_pyfakefs

__all__ = ["available_backends", "backend_by_name", "backend_report", "default_backend"]

_cache: dict[str, Backend] = {}
_cache_lock = threading.Lock()
#: Why ``corral._native`` cannot be used here, once selection has looked
#: (``None`` while it is usable or has not been looked for).
native_unavailable_reason: str | None = None


def _native_missing_reason() -> str:
    """Why ``corral._native`` is not installed, as far as can be told now."""
    reason = "corral._native was not built"
    flag = os.environ.get("CORRAL_NATIVE", "").strip().lower()
    if flag in ("0", "no", "false", "off"):
        return reason + " (CORRAL_NATIVE=0 is set: it skips the build at install time)"
    import shlex
    import shutil
    import sysconfig
    cc = (sysconfig.get_config_var("CC") or "cc").strip()
    compiler = shlex.split(cc)[0] if cc else "cc"
    if shutil.which(compiler) is None and shutil.which("cc") is None:
        return reason + f" (no C compiler: {compiler!r} is not on PATH; install one and reinstall)"
    return reason + (" (a C compiler is present now: the install ran with CORRAL_NATIVE=0, "
                     "without a compiler, or its build failed; reinstall and read pip's log)")


def _load_native() -> Backend | None:
    """The native backend, or ``None`` with :data:`native_unavailable_reason` set.

    A native module that exists but fails to import is an error, not a quiet
    fallback (that is how a broken build hides): only "``corral._native`` is
    not installed" counts as unavailable.  On Darwin even that is an error.
    """
    global native_unavailable_reason
    try:
        from ._native_backend import NativeBackend
    except ModuleNotFoundError as exc:
        if exc.name != "corral._native":
            raise
        native_unavailable_reason = _native_missing_reason()
        if IS_DARWIN:
            raise ImportError("corral needs its native module on macOS: "
                              + native_unavailable_reason) from exc
        return None
    native_unavailable_reason = None
    return NativeBackend()


def backend_by_name(name: str) -> Backend:
    """A shared backend instance: ``"os"`` or ``"native"``.

    Raises ``OSError`` (``ENOSYS``) for ``"native"`` when the module was not
    built, ``ImportError`` when it was built but cannot load, ``ValueError``
    for an unknown name.
    """
    with _cache_lock:
        if name in _cache:
            return _cache[name]
        backend: Backend | None
        if name == "os":
            backend = OsBackend()
        elif name == "native":
            backend = _load_native()
        else:
            raise ValueError(f"unknown backend {name!r}; expected 'os' or 'native'")
        if backend is None:
            raise OSError(errno.ENOSYS, f"native backend unavailable: {native_unavailable_reason}")
        _cache[name] = backend
        return backend


def available_backends() -> list[str]:
    """Names of the backends that work here, the default first."""
    names = []
    for name in ("native", "os"):
        try:
            backend_by_name(name)
        except OSError:
            continue
        names.append(name)
    return names


def default_backend() -> Backend:
    """``CORRAL_BACKEND`` if set, else native when built, else os.

    Under pyfakefs there is no default (``OSError``, ``EINVAL``): pass
    ``corral.testing.backends.FakeFsBackend()`` (module doc).
    """
    if _under_pyfakefs():
        raise OSError(errno.EINVAL, FAKE_FS_REFUSAL)
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    if forced:
        return backend_by_name(forced)
    try:
        return backend_by_name("native")
    except OSError:
        return backend_by_name("os")


def backend_report() -> dict[str, Any]:
    """What this process uses and why, for ``corral doctor`` and bug reports.

    Keys: ``platform``; ``backend`` (the default's name, or ``None`` with
    ``error`` when it cannot be had); ``forced`` (``CORRAL_BACKEND`` or
    ``None``); ``available`` (backend names); ``native`` (``built`` and, when
    not usable, ``reason``); ``fast_path`` (the default backend's
    :meth:`Backend.info`: ``openat2`` and ``openat2_reason``, plus the native
    module's extras).  Never raises.
    """
    report: dict[str, Any] = {"platform": sys.platform,
                    "forced": os.environ.get("CORRAL_BACKEND", "").strip().lower() or None,
                    "pyfakefs": _under_pyfakefs()}
    native: dict[str, Any] = {"built": False, "reason": None}
    try:
        backend_by_name("native")
    except OSError as exc:  # not built; or refused here (pyfakefs)
        native["reason"] = native_unavailable_reason or str(exc)
    except Exception as exc:  # a broken build: say so, do not hide it
        native["reason"] = f"corral._native is installed but cannot load: {exc!r}"
        native["built"] = True
    else:
        native["built"] = True
    report["native"] = native
    available = ["native"] if native["built"] and native["reason"] is None else []
    try:
        backend_by_name("os")
    except Exception:
        pass
    else:
        available.append("os")
    report["available"] = available
    try:
        backend = default_backend()
    except Exception as exc:
        report.update(backend=None, error=f"{type(exc).__name__}: {exc}", fast_path=None)
        return report
    report["backend"] = backend.name
    report["fast_path"] = backend.info()
    return report
