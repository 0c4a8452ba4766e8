"""cffi build script for ``corral._native`` (out-of-line API mode).

``setup.py`` names this file in ``cffi_modules``; setuptools runs it (with
``exec``, not import) and compiles the module it describes.  The
declarations (``_native.cdef``) are the same on every platform; the C
(``corral_native.h``) holds each platform's code, so the Python side never
branches on what was compiled, only on the ``CORRAL_HAS_*`` constants.

On Linux the extension is optional: a failed compile leaves the pure ``os``
backend, and ``corral.contained.backend_report()`` says the module is
missing.  On Darwin it is required and a failed compile fails the install.

:func:`build_variant` builds the same C under another module name for the
tests: with the test hooks (``native/testing/*.cdef``, compiled in only
with ``CORRAL_TEST_HOOKS``) and optionally with sanitizers
(``scripts/sanitize.py``).  The module a user installs has neither.

For a quick local build without pip: ``python native/_native_build.py``
(writes into ``build/native``).
"""

import os
import sys

from cffi import FFI

_HERE = os.path.dirname(os.path.abspath(__file__))
# Feature macros on the command line, before any header (cffi's own prelude
# includes Python.h before the C below): no prototype depends on include order.
_MACROS = [("_GNU_SOURCE", "1")]


def _read(name: str) -> str:
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


def _parts(suffix: str) -> list[str]:
    # One declarations file and one C file per area (the resolver's calls in
    # _native.cdef / corral_native.h first, then e.g. the search scanner), so
    # each area's C stays in its own files; all are one module.
    first = {".cdef": "_native.cdef", ".h": "corral_native.h"}[suffix]
    rest = sorted(n for n in os.listdir(_HERE) if n.endswith(suffix) and n != first)
    return [first, *rest]


def _test_cdefs() -> list[str]:
    folder = os.path.join(_HERE, "testing")
    return [os.path.join("testing", n) for n in sorted(os.listdir(folder)) if n.endswith(".cdef")]


def _builder(module: str, *, hooks: bool, extra_compile_args: list[str] | None = None,
             extra_link_args: list[str] | None = None) -> FFI:
    builder = FFI()
    cdefs = _parts(".cdef") + (_test_cdefs() if hooks else [])
    builder.cdef("\n".join(_read(name) for name in cdefs))
    macros = _MACROS + ([("CORRAL_TEST_HOOKS", "1")] if hooks else [])
    builder.set_source(
        module,
        "\n".join(_read(name) for name in _parts(".h")),
        define_macros=macros,
        extra_compile_args=extra_compile_args or [],
        extra_link_args=extra_link_args or [],
        optional=sys.platform != "darwin",
    )
    return builder


def build_variant(tmpdir: str, module: str = "_corral_native_test", *, hooks: bool = True,
                  extra_compile_args: list[str] | None = None,
                  extra_link_args: list[str] | None = None) -> str:
    """Compile the module's C as ``module`` in ``tmpdir`` (with the test
    hooks unless ``hooks=False``); the path of the built extension."""
    builder = _builder(module, hooks=hooks, extra_compile_args=extra_compile_args,
                       extra_link_args=extra_link_args)
    return str(builder.compile(tmpdir=tmpdir, verbose=False))


def cached_variant(module: str = "_corral_native_test", *, hooks: bool = True,
                   extra_compile_args: list[str] | None = None,
                   extra_link_args: list[str] | None = None, cache: str | None = None) -> str:
    """:func:`build_variant`, built once per source text and flags: the
    directory holding it (put it on ``sys.path`` and import ``module``).
    Builds go to a private directory first and are renamed into place, so
    processes building at once (pytest-xdist workers) do not collide."""
    import hashlib
    import shutil
    import sysconfig
    import tempfile

    digest = hashlib.sha256()
    for name in [*_parts(".cdef"), *_parts(".h"), *_test_cdefs(), "_native_build.py"]:
        digest.update(name.encode() + b"\0" + _read(name).encode() + b"\0")
    digest.update(repr((module, hooks, extra_compile_args, extra_link_args, sys.version,
                        sysconfig.get_config_var("EXT_SUFFIX"))).encode())
    base = cache or os.path.join(tempfile.gettempdir(), "corral-native-variants")
    os.makedirs(base, exist_ok=True)
    final = os.path.join(base, digest.hexdigest()[:20])
    if os.path.isdir(final):
        return final
    work = tempfile.mkdtemp(prefix="build-", dir=base)
    try:
        build_variant(work, module, hooks=hooks, extra_compile_args=extra_compile_args,
                      extra_link_args=extra_link_args)
        try:
            os.rename(work, final)
        except OSError:  # another process got there first: use its build
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return final


ffibuilder = _builder("corral._native", hooks=False)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=os.path.join(_HERE, "..", "build", "native"), verbose=True)
