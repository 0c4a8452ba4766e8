# The cffi-compiled module (native/_native_build.py): an FFI instance and the
# library of C functions declared in native/*.cdef (_native.cdef: the
# resolver's calls; list.cdef: corral_list_sized, list_directory's listing;
# read.cdef: corral_text_window, read_file's numbered window; scan.cdef: the
# search scanner).  cffi objects carry no static types, so both are Any; each
# caller wraps the calls it makes in typed functions: corral.contained
# (_native_backend.NativeBackend, _listing.SizedListing, _tree),
# corral.tools._search_scan and corral.tools.read_file.
from typing import Any

ffi: Any
lib: Any
