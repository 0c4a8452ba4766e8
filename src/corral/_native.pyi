# The cffi-compiled module (native/_native_build.py): an FFI instance and the
# library of C functions declared in native/*.cdef.  cffi objects carry no
# static types, so both are Any; each caller wraps the calls it makes in
# typed functions: corral.contained._native_backend (native/_native.cdef),
# corral.tools._search_scan (native/scan.cdef) and corral.tools.read_file's
# numbered window, corral_text_window (native/read.cdef).
from typing import Any

ffi: Any
lib: Any
