"""Only what pyproject.toml cannot say: the cffi module (cffi_modules has no
declarative form yet).  Everything else is in pyproject.toml.

corral._native is built wherever a C compiler is present.  On Linux the build
is optional (a failed compile leaves the pure ``os`` backend, and
``corral.contained.backend_report()`` says why) and ``CORRAL_NATIVE=0``
skips it.  On Darwin it is required: a failed build fails the install.
"""

import os
import sys
import sysconfig

from setuptools import setup

_flag = os.environ.get("CORRAL_NATIVE", "").strip().lower()
_skip = _flag in ("0", "no", "false", "off")
if _skip and sys.platform == "darwin":
    raise SystemExit("corral needs its native module on macOS; unset CORRAL_NATIVE=0")

_native = not _skip
if _skip:
    # an earlier editable build leaves corral/_native*.so in src/, which would
    # still be imported (or packaged): remove it so the skip means "no module"
    import glob

    for stale in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "src", "corral", "_native*.so")):
        os.remove(stale)
# abi3 wheels (one per platform, any CPython >= 3.11), except on free-threaded
# builds, which have no limited API
_abi3 = _native and not sysconfig.get_config_var("Py_GIL_DISABLED")

setup(
    cffi_modules=["native/_native_build.py:ffibuilder"] if _native else [],
    options={"bdist_wheel": {"py_limited_api": "cp311"}} if _abi3 else {},
)
