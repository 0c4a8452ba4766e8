# The cffi-compiled module (native/_native_build.py): an FFI instance and the
# library of C functions declared in native/*.cdef.  cffi objects carry no
# static types, so both are Any; corral.contained._native_backend wraps every
# call in typed methods.
from typing import Any

ffi: Any
lib: Any
