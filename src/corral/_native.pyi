# The cffi-compiled module (native/_native_build.py): an FFI instance and the
# library of C functions declared in native/*.cdef (_native.cdef: the
# resolver's calls; list.cdef: corral_list_sized, list_directory's listing;
# scan.cdef: the search scanner).  cffi objects carry no static types, so
# both are Any; corral.contained wraps every call in typed functions
# (_native_backend.NativeBackend, _listing.SizedListing, _tree).
from typing import Any

ffi: Any
lib: Any
