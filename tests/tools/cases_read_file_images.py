"""Refusal catalogue: read_file on images and other binary files."""

from __future__ import annotations

from .helpers.catalogue import Case

from corral.tools import Limits

PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x20\x08\x06\x00\x00"
       b"\x00" + b"\x00" * 171)  # 200 bytes: a PNG header, then padding

CASES = [
    Case("read_file", "image_over_the_limit", {"path": "shot.png"}, "TOO_LARGE",
         "shot.png is 200 bytes, over read_file's limit of 100",
         "Do not read this image whole; ask the user for a smaller copy (file_info gives its "
         "size).", details={"path": "shot.png", "size": 200, "limit": 100,
                            "mimeType": "image/png", "kind": "file_too_large"},
         tree={"shot.png": PNG}, toolbox_options={"limits": Limits(read_image_bytes=100)}),
    Case("read_file", "binary_not_an_image", {"path": "blob.bin"}, "UNSUPPORTED",
         "blob.bin is a binary file (16 bytes), which read_file does not show",
         "Do not read binary files with read_file; look for the text file you need with glob "
         "or grep.", details={"path": "blob.bin", "size": 16, "kind": "binary"},
         tree={"blob.bin": b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8}),
    Case("read_file", "image_name_binary_content", {"path": "fake.png"}, "UNSUPPORTED",
         "fake.png is a binary file (12 bytes), which read_file does not show",
         "Do not read binary files with read_file; look for the text file you need with glob "
         "or grep.", details={"path": "fake.png", "kind": "binary"},
         tree={"fake.png": b"\x00\x01\x02\x03" * 3}),
]
