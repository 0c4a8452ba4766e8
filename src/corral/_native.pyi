# The cffi-compiled module (native/_native_build.py): an FFI instance and the
# library of C functions declared in native/*.cdef (_native.cdef: the
# resolver's calls; list.cdef: corral_list_sized, list_directory's listing;
# read.cdef: corral_text_window, read_file's numbered window; scan.cdef: the
# search scanner).  cffi objects carry no static types, so both are Any; the
# one module that imports it, corral.contained._native_backend, wraps every
# call in a typed method of the native backend (tests/test_architecture.py).
from typing import Any

ffi: Any
lib: Any
