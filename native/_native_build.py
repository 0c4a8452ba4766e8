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


ffibuilder = FFI()
ffibuilder.cdef(_read("_native.cdef"))
ffibuilder.set_source(
    "corral._native",
    _read("corral_native.h"),
    optional=sys.platform != "darwin",
)

if __name__ == "__main__":
    ffibuilder.compile(tmpdir=os.path.join(_HERE, "..", "build", "native"), verbose=True)
