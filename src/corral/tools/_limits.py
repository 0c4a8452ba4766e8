"""Limits a host may tune; the defaults suit a coding agent."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    max_path_bytes: int = 4096  # UTF-8 bytes of one path argument
    read_lines: int = 2000  # default line window of read_file
    read_line_chars: int = 2000  # longer lines are cut (and said to be)
    read_bytes: int = 256 * 1024  # text returned by one read_file call
    max_write_bytes: int = 8 * 1024 * 1024  # write_file content, edit_file result
    max_edit_file_bytes: int = 8 * 1024 * 1024  # files edit_file will load
    list_entries: int = 1000
    search_results: int = 200  # glob paths, grep matches
    search_files: int = 100_000  # files one glob or grep walks
    search_line_chars: int = 500  # grep output lines are cut to this
    grep_context: int = 10  # most context lines grep gives
    max_argument_chars: int = 16 * 1024 * 1024  # any one string argument
    call_seconds: float = 30.0  # one call's deadline (Toolbox.call(timeout=...) overrides it)
    # newtools (issue 16)
    read_files_paths: int = 50  # paths one read_files call takes
    read_files_bytes: int = 1024 * 1024  # content (and image data) one read_files call returns
    read_image_bytes: int = 4 * 1024 * 1024  # an image read_file returns (base64 adds a third)
    list_depth: int = 10  # the deepest list_directory depth
