"""cffi build script for ``corral._native`` (out-of-line API mode).

``setup.py`` names this file in ``cffi_modules``; setuptools runs it (with
``exec``, not import) and compiles the module it describes.  The
declarations (``_native.cdef``) are the same on every platform; the C
(``corral_native.h``) holds each platform's code, so the Python side never
branches on what was compiled, only on the ``CORRAL_HAS_*`` constants.

On Linux the extension is optional: a failed compile leaves the pure ``os``
backend, and ``corral.contained.backend_report()`` says the module is
missing.  On Darwin it is required and a failed compile fails the install.

For a quick local build without pip: ``python native/_native_build.py``
(writes into ``build/native``).
"""

import os
import sys

from cffi import FFI

_HERE = os.path.dirname(os.path.abspath(__file__))


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


ffibuilder = FFI()
ffibuilder.cdef("\n".join(_read(name) for name in _parts(".cdef")))
ffibuilder.set_source(
    "corral._native",
    "\n".join(_read(name) for name in _parts(".h")),
    optional=sys.platform != "darwin",
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=os.path.join(_HERE, "..", "build", "native"), verbose=True)
