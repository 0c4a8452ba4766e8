"""read_file on images: told by content, returned as base64 with mimeType and size."""

from __future__ import annotations

import base64
import hashlib

import pytest

from .helpers.images import gif, jpeg, png, webp_extended, webp_lossless, webp_lossy

from corral.tools import Limits, Toolbox
from corral.tools._read.media import FIRST_BYTES, dimensions, sniff

IMAGES = [
    ("png", png(3, 5), "image/png", (3, 5)),
    ("gif", gif(7, 2), "image/gif", (7, 2)),
    ("jpeg", jpeg(640, 480), "image/jpeg", (640, 480)),
    ("jpeg_many_app_segments", jpeg(9, 4, app_segments=20), "image/jpeg", (9, 4)),
    ("webp_lossless", webp_lossless(300, 200), "image/webp", (300, 200)),
    ("webp_lossy", webp_lossy(33, 44), "image/webp", (33, 44)),
    ("webp_extended", webp_extended(4000, 3000), "image/webp", (4000, 3000)),
]


@pytest.mark.parametrize(("name", "data", "mime", "size"), IMAGES, ids=[i[0] for i in IMAGES])
def test_an_image_is_returned_whole_with_its_type_and_size(tmp_path, make_root, name, data,
                                                           mime, size):
    (tmp_path / "pic").write_bytes(data)  # no extension: the content decides
    result = Toolbox(make_root(tmp_path)).call("read_file", {"path": "pic"})
    assert result == {"ok": True, "path": "pic", "mimeType": mime,
                      "data": base64.b64encode(data).decode("ascii"), "size": len(data),
                      "sha256": hashlib.sha256(data).hexdigest(),
                      "width": size[0], "height": size[1]}


def test_the_name_does_not_decide(tmp_path, make_root):
    (tmp_path / "notes.txt").write_bytes(png(1, 1))
    (tmp_path / "logo.png").write_text("not an image\n")
    toolbox = Toolbox(make_root(tmp_path))
    assert toolbox.call("read_file", {"path": "notes.txt"})["mimeType"] == "image/png"
    text = toolbox.call("read_file", {"path": "logo.png"})
    assert text["ok"] is True and text["content"] == "1\tnot an image"


def test_an_image_at_the_limit_is_returned_and_one_byte_more_is_refused(tmp_path, make_root):
    data = png(2, 2)
    (tmp_path / "a.png").write_bytes(data)
    exact = Toolbox(make_root(tmp_path), limits=Limits(read_image_bytes=len(data)))
    assert exact.call("read_file", {"path": "a.png"})["size"] == len(data)
    under = Toolbox(make_root(tmp_path), limits=Limits(read_image_bytes=len(data) - 1))
    refused = under.call("read_file", {"path": "a.png"})
    assert (refused["code"], refused["details"]["kind"], refused["details"]["size"]) == (
        "TOO_LARGE", "file_too_large", len(data))


def test_images_through_an_inside_link_and_the_host_is_asked(tmp_path, make_root):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.gif").write_bytes(gif(1, 1))
    (tmp_path / "current").symlink_to("img/a.gif")
    asked = []
    toolbox = Toolbox(make_root(tmp_path), authorize=lambda r: asked.append(r) or True)
    result = toolbox.call("read_file", {"path": "current"})
    assert result["mimeType"] == "image/gif"
    assert [(r.operation, r.path) for r in asked] == [("read", "current")]


def test_a_hard_linked_image_is_refused_like_any_file(tmp_path, make_root):
    (tmp_path / "a.png").write_bytes(png(1, 1))
    (tmp_path / "b.png").hardlink_to(tmp_path / "a.png")
    refused = Toolbox(make_root(tmp_path)).call("read_file", {"path": "b.png"})
    assert (refused["code"], refused["details"]["kind"]) == ("UNSUPPORTED", "hardlink")


def test_sniff_needs_the_whole_signature():
    assert sniff(b"\x89PNG\r\n\x1a\n") == "image/png"
    assert sniff(b"\x89PNG\r\n\x1a") is None
    assert sniff(b"RIFF\x00\x00\x00\x00WAVE") is None  # RIFF, but audio
    assert sniff(b"GIF88a") is None
    assert sniff(b"\xff\xd8\xfe") is None


def test_only_a_file_starting_with_an_image_first_byte_is_sniffed(tmp_path, make_root):
    # read_file asks sniff only when the first byte is one of FIRST_BYTES:
    # every signature sniff knows starts so, and no other byte makes one
    heads = [b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF\0\0\0\0WEBP"]
    heads = [head + b"\0" * (32 - len(head)) for head in heads]
    assert all(sniff(head) is not None and head[:1] in FIRST_BYTES for head in heads)
    for value in range(256):
        first = bytes([value])
        if first not in FIRST_BYTES:
            assert all(sniff(first + head[1:]) is None for head in heads)
    (tmp_path / "notes.txt").write_bytes(b"GIF images\n")
    (tmp_path / "a.gif").write_bytes(b"GIF89a\x01\x00\x01\x00" + b"\0" * 22)
    box = Toolbox(make_root(tmp_path))
    assert box.call("read_file", {"path": "notes.txt"})["content"] == "1\tGIF images"
    assert box.call("read_file", {"path": "a.gif"})["mimeType"] == "image/gif"


def test_sizes_that_the_header_does_not_give_are_left_out(tmp_path, make_root):
    truncated_png = png(5, 5)[:20]  # signature and part of IHDR
    (tmp_path / "cut.png").write_bytes(truncated_png)
    result = Toolbox(make_root(tmp_path)).call("read_file", {"path": "cut.png"})
    assert result["ok"] is True and "width" not in result and "height" not in result
    assert dimensions("image/jpeg", b"\xff\xd8\xff\xe0\x00\x01") is None  # a length below 2
    assert dimensions("image/jpeg", b"\xff\xd8" + b"\xff\xe0\x00\x02" * 1000) is None  # capped
    assert dimensions("image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ") is None


def test_a_tiny_binary_file_is_not_an_image(tmp_path, make_root):
    (tmp_path / "x").write_bytes(b"\x89PNG\r\n\x1a\n\x00")  # too short to be one
    refused = Toolbox(make_root(tmp_path)).call("read_file", {"path": "x"})
    assert (refused["code"], refused["details"]["kind"]) == ("UNSUPPORTED", "binary")
