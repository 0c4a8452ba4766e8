"""Refusal catalogue: edit_file.

One case per refusal, and one per "what differs" a not-found oldText can
report.  Each names the exact sentence and hint; where a call is suggested,
the runner makes it and requires it to succeed.
"""

from __future__ import annotations

import hashlib

from .helpers.catalogue import Case

from corral.tools import Denied, Limits

PY = ("def area(w, h):\n"
      "    return w * h\n"
      "\n"
      "\n"
      "def perimeter(w, h):\n"
      "    return 2 * (w + h)\n")
TABS = "class Shape:\n\tdef area(self):\n\t\tif self.w:\n\t\t\treturn self.w\n\t\treturn 0\n"
SRC = {"src/util.py": PY}
OUTSIDE_HINT = ("Use a path relative to the root (\".\" is the root itself); '..' may not climb "
                "above it and symlinks that lead out are not followed.")
PY_SHA = hashlib.sha256(PY.encode()).hexdigest()
OLD_SHA = hashlib.sha256(b"something else\n").hexdigest()
COPY_HINT = ("Copy oldText exactly from lines {a}-{b} of the file, then make your change in "
             "newText.")
LATIN1 = b"x = 1\nname = 'caf\xe9'\n"


def _refuse_edits(request):
    raise Denied("edits need review today")


def _edit(name, args, code, message, hint, tree=None, **kw):
    return Case("edit_file", name, {"path": "src/util.py", **args} if "path" not in args
                else args, code, message, hint, tree=SRC if tree is None else tree, **kw)


CASES = [
    # -- the path ----------------------------------------------------------------
    _edit("missing_file_did_you_mean", {"path": "src/utl.py", "oldText": "a", "newText": "b"},
          "NOT_FOUND", "src/utl.py does not exist", "Check the name; src/util.py exists.",
          details={"path": "src/utl.py", "field": "path", "didYouMean": ["src/util.py"]},
          suggested_tool="read_file", suggested_args={"path": "src/util.py"}),
    _edit("missing_file_empty_old_text", {"path": "src/helpers.py", "oldText": "",
                                          "newText": "x = 1\n"}, "NOT_FOUND",
          "src/helpers.py does not exist",
          "Create src/helpers.py with write_file; edit_file changes existing files.",
          details={"path": "src/helpers.py", "missing": "src/helpers.py", "field": "path"},
          suggested_tool="list_directory", suggested_args={"path": "src"}),
    _edit("directory", {"path": "src", "oldText": "a", "newText": "b"}, "INVALID_ARGUMENT",
          "src is a directory, not a file",
          "Use glob to find the files under it (list_directory shows one level); edit_file edits "
          "one file.", details={"path": "src", "kind": "directory"},
          suggested_tool="glob", suggested_args={"path": "src", "pattern": "**/*"}),
    _edit("outside_root_dotdot", {"path": "../outside/secret.txt", "oldText": "outside",
                                  "newText": "inside"}, "OUTSIDE_ROOT",
          "../outside/secret.txt is outside the root", OUTSIDE_HINT,
          details={"path": "../outside/secret.txt", "field": "path"}),
    _edit("outside_root_symlink", {"path": "src/secret.txt", "oldText": "outside",
                                   "newText": "inside"}, "OUTSIDE_ROOT",
          "src/secret.txt is outside the root", OUTSIDE_HINT,
          details={"path": "src/secret.txt", "field": "path"},
          tree={**SRC, "src/secret.txt": ("link", "../../outside/secret.txt")}),
    _edit("hardlink", {"path": "b.py", "oldText": "x", "newText": "y"}, "UNSUPPORTED",
          "b.py is a hard-linked file (2 links), which these tools do not read or edit in place",
          "Use a file that is not hard-linked, or ask the host to allow hard links.",
          details={"path": "b.py", "kind": "hardlink", "links": 2},
          tree={"a.py": "x = 1\n", "b.py": ("hardlink", "a.py")}),
    _edit("fifo", {"path": "pipe", "oldText": "a", "newText": "b"}, "UNSUPPORTED",
          "pipe is a fifo, not a regular file",
          "Use regular files only; this one cannot be read or edited.",
          details={"path": "pipe", "kind": "fifo"}, tree={"pipe": ("fifo",)}),
    _edit("deny_rule", {"path": ".env", "oldText": "KEY=1", "newText": "KEY=2"}, "DENIED",
          ".env is in a path the host does not allow",
          "Do not use this path; work with other files.",
          details={"path": ".env", "kind": "deny_rule"}, tree={".env": "KEY=1\n"},
          toolbox_options={"deny": [".env"]}),
    _edit("binary", {"path": "img.png", "oldText": "PNG", "newText": "GIF"}, "UNSUPPORTED",
          "img.png is a binary file (12 bytes), which edit_file does not change",
          "Edit only text files; leave this one as it is.",
          details={"path": "img.png", "kind": "binary", "size": 12},
          tree={"img.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\r"}),
    _edit("encoding", {"path": "notes.py", "oldText": "x = 1", "newText": "x = 2"},
          "UNSUPPORTED", "notes.py is not valid UTF-8 text (the first bad byte is on line 2), "
          "which edit_file does not change",
          "Leave this file as it is, or ask the user to convert it to UTF-8.",
          details={"path": "notes.py", "kind": "encoding", "line": 2, "byteOffset": 17},
          tree={"notes.py": LATIN1}),
    # a mark that announces UTF-16 over bytes that do not decode as it (an
    # odd count); UTF-16 text that decodes is edited (test_edit_intent.py)
    _edit("encoding_utf16", {"path": "wide.txt", "oldText": "hello", "newText": "bye"},
          "UNSUPPORTED", "wide.txt is UTF-16 text, which edit_file does not change (it edits "
          "UTF-8)", "Leave this file as it is, or ask the user to convert it to UTF-8.",
          details={"path": "wide.txt", "kind": "encoding", "encoding": "utf-16"},
          tree={"wide.txt": "hello\n".encode("utf-16") + b"\x00"}),
    _edit("file_too_large", {"oldText": "w * h", "newText": "h * w"}, "TOO_LARGE",
          f"src/util.py is {len(PY)} bytes, over edit_file's limit of 64",
          "Leave this file as it is, or ask the user to change it.",
          details={"path": "src/util.py", "kind": "file_too_large", "size": len(PY), "limit": 64},
          toolbox_options={"limits": Limits(max_edit_file_bytes=64)}),
    _edit("result_too_large", {"oldText": "w", "newText": "width" * 10, "replaceAll": True},
          "TOO_LARGE", "the edit would make src/util.py at least 275 bytes, over the limit of 200",
          "Make a smaller change.",
          details={"path": "src/util.py", "kind": "result_too_large", "size": 275, "limit": 200},
          toolbox_options={"limits": Limits(max_write_bytes=200)}),
    _edit("denied_by_host", {"oldText": "w * h", "newText": "h * w"}, "DENIED",
          "the host refused to edit src/util.py: edits need review today",
          "Do not repeat this call; ask the user or do something else.",
          details={"path": "src/util.py", "operation": "edit", "kind": "host",
                   "reason": "edits need review today"},
          toolbox_options={"authorize": _refuse_edits}),

    # -- the arguments -------------------------------------------------------------
    _edit("no_change", {"oldText": "w * h", "newText": "w * h"}, "INVALID_ARGUMENT",
          "oldText and newText are the same, so the edit would change nothing",
          "Pass the changed text in newText; if the file is already right, no edit is needed.",
          details={"field": "newText", "kind": "no_change"}),
    _edit("no_change_in_edits", {"edits": [{"oldText": "w * h", "newText": "h * w"},
                                           {"oldText": "(w + h)", "newText": "(w + h)"}]},
          "INVALID_ARGUMENT",
          "edits[1]: oldText and newText are the same, so the edit would change nothing",
          "Pass the changed text in newText; if the file is already right, no edit is needed.",
          details={"field": "edits[1].newText", "kind": "no_change"}),
    _edit("edits_cancel_out", {"edits": [{"oldText": "w * h", "newText": "h * w"},
                                         {"oldText": "h * w", "newText": "w * h"}]},
          "INVALID_ARGUMENT", "the edits leave src/util.py unchanged",
          "Check newText: it must differ from the file's text; if the file is already right, no "
          "edit is needed.", details={"path": "src/util.py", "kind": "no_change"}),
    _edit("empty_old_text", {"oldText": "", "newText": "import math\n"}, "INVALID_ARGUMENT",
          "oldText is empty, but src/util.py is not",
          "Put the text to replace in oldText; to insert, include the line before or after the "
          "insertion point in both oldText and newText.",
          details={"path": "src/util.py", "field": "oldText", "kind": "empty_old_text"}),
    _edit("missing_new_text", {"oldText": "w * h"}, "INVALID_ARGUMENT",
          "edit_file: argument 'newText' is missing after oldText; this is how a call looks "
          "when the answer ran out of output before the call was complete, so nothing was done",
          "Write a large file in parts: write_file with the first part, then edit_file calls "
          "that each add the next part after the last lines written.",
          details={"field": "newText", "kind": "cut_off", "path": "src/util.py"}),
    _edit("missing_old_text", {"newText": "x"}, "INVALID_ARGUMENT",
          "edit_file: argument 'oldText' is required (or pass 'edits')",
          "Pass oldText (the exact text to replace) and newText.",
          details={"field": "oldText", "kind": "argument"}),
    _edit("both_forms", {"oldText": "w * h", "newText": "h * w",
                         "edits": [{"oldText": "a", "newText": "b"}]}, "INVALID_ARGUMENT",
          "edit_file: argument 'oldText' cannot be combined with 'edits'",
          "Put every change in edits, or pass one oldText/newText pair without edits.",
          details={"field": "oldText", "kind": "argument"}),
    _edit("bad_digest", {"oldText": "w * h", "newText": "h * w", "expectedSha256": "abc123"},
          "INVALID_ARGUMENT", "edit_file: argument 'expectedSha256' is 6 characters, fewer than "
          "16", "Pass at least 16 characters in 'expectedSha256'.",
          details={"field": "expectedSha256", "kind": "argument", "minLength": 16}),
    _edit("digest_not_hex", {"oldText": "w * h", "newText": "h * w",
                             "expectedSha256": "z" * 16}, "INVALID_ARGUMENT",
          "edit_file: argument 'expectedSha256' must be 16 to 64 hexadecimal digits of a sha256 "
          "(as read_file shows it)", "Pass 'expectedSha256' as 16 to 64 hexadecimal digits of a "
          "sha256 (as read_file shows it).", details={"field": "expectedSha256"}),
    _edit("stale_short_digest", {"oldText": "w * h", "newText": "h * w",
                                 "expectedSha256": OLD_SHA[:16]},
          "STALE", f"src/util.py is not the version you expected: expectedSha256 is "
          f"{OLD_SHA[:12]}..., the file's sha256 is {PY_SHA[:12]}...",
          "Read src/util.py again and redo the edit against what it says now.",
          details={"path": "src/util.py", "kind": "sha256_mismatch",
                   "expectedSha256": OLD_SHA[:16], "currentSha256": PY_SHA},
          suggested_tool="read_file", suggested_args={"path": "src/util.py"}),
    _edit("placeholder_in_new_text", {"oldText": "def area(w, h):\n    return w * h\n",
                                      "newText": "def area(w, h):\n    # ... rest of the "
                                                 "code ...\n"}, "INVALID_ARGUMENT",
          "newText line 2 ('# ... rest of the code ...') stands for code it leaves out; edit_file "
          "writes newText as it is, so that code would be lost",
          "Write out the full text in newText; to keep lines unchanged, leave them out of both "
          "oldText and newText.",
          details={"field": "newText", "kind": "placeholder", "newTextLine": 2}),

    # -- the content ------------------------------------------------------------------
    _edit("stale", {"oldText": "w * h", "newText": "h * w", "expectedSha256": OLD_SHA},
          "STALE", f"src/util.py is not the version you expected: expectedSha256 is "
          f"{OLD_SHA[:12]}..., the file's sha256 is {PY_SHA[:12]}...",
          "Read src/util.py again and redo the edit against what it says now.",
          details={"path": "src/util.py", "kind": "sha256_mismatch", "expectedSha256": OLD_SHA,
                   "currentSha256": PY_SHA},
          suggested_tool="read_file", suggested_args={"path": "src/util.py"}),
    _edit("ambiguous", {"oldText": "return", "newText": "yield"}, "AMBIGUOUS",
          "oldText occurs 2 times in src/util.py (lines 2, 6); it must occur exactly once",
          "Add neighbouring lines to oldText until it matches once, or pass replaceAll: true to "
          "replace all 2.", details={"path": "src/util.py", "kind": "multiple_matches",
                                     "occurrences": 2, "lines": [2, 6]}),
    _edit("ambiguous_in_edits", {"edits": [{"oldText": "return", "newText": "yield"}]},
          "AMBIGUOUS",
          "edits[0]: oldText occurs 2 times in src/util.py (lines 2, 6); it must occur exactly "
          "once", "Add neighbouring lines to oldText until it matches once, or set replaceAll: "
          "true in edits[0] to replace all 2.",
          details={"field": "edits[0].oldText", "edit": 0, "occurrences": 2, "lines": [2, 6]}),
    _edit("ambiguous_tolerant", {"path": "t.py", "oldText": "x = 1\ny = 2", "newText": "z"},
          "AMBIGUOUS", "oldText does not occur exactly in t.py; ignoring trailing whitespace it "
          "matches 2 places (lines 1, 4), and a tolerant match must be unique",
          "Copy oldText exactly from one of those places, whitespace included, with enough "
          "neighbouring lines to match once.",
          details={"kind": "multiple_tolerant_matches", "matchStrategy": "trailing_whitespace",
                   "occurrences": 2, "lines": [1, 4]},
          tree={"t.py": "x = 1 \ny = 2\n\nx = 1  \ny = 2\n"}),
    _edit("already_applied", {"oldText": "return w * h\n", "newText": "return width * height\n"},
          "NOT_FOUND", "oldText does not occur in src/util.py, but newText is already there "
          "(line 2): this edit looks already made",
          "Do not repeat this edit; read lines 2-2 to check it if unsure.",
          details={"kind": "already_applied", "lines": [2, 2]},
          suggested_tool="read_file",
          suggested_args={"path": "src/util.py", "offset": 2, "limit": 1},
          tree={"src/util.py": PY.replace("return w * h", "return width * height")}),
    _edit("already_applied_insertion", {"oldText": "def area(w, h):\n",
                                        "newText": "@cache\ndef area(w, h):\n"}, "NOT_FOUND",
          "oldText occurs in src/util.py only inside newText (line 1): this edit looks already "
          "made, and making it again would duplicate text",
          "Do not repeat this edit; read lines 1-2 to check it if unsure.",
          details={"kind": "already_applied", "lines": [1, 2], "occurrences": 1},
          suggested_tool="read_file",
          suggested_args={"path": "src/util.py", "offset": 1, "limit": 2},
          tree={"src/util.py": "@cache\n" + PY}),
    _edit("not_found_content", {"oldText": "def area(w, h):\n    return w + h\n",
                                "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in src/util.py; the closest text, lines 1-2, differs: line 2 "
          "reads 'return w * h' where oldText line 2 reads 'return w + h'",
          COPY_HINT.format(a=1, b=2),
          details={"kind": "no_match", "closest": {"startLine": 1, "endLine": 2,
                                                   "similarity": 0.96,
                                                   "text": "def area(w, h):\n    return w * h"}},
          suggested_tool="read_file",
          suggested_args={"path": "src/util.py", "offset": 1, "limit": 2}),
    _edit("not_found_tabs_vs_spaces", {"path": "shape.py",
                                       "oldText": "    if self.w:\n    return self.w\n",
                                       "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in shape.py; the closest text, lines 3-4, differs: line 3 is "
          "indented with 2 tabs, oldText line 1 with 4 spaces; line 4 is indented with 3 tabs, "
          "oldText line 2 with 4 spaces",
          "Indent oldText as the file does (with tabs); copy it from lines 3-4 of the file.",
          details={"kind": "no_match",
                   "differences": [
                       {"kind": "tabs_vs_spaces", "line": 3, "oldTextLine": 1,
                        "detail": "line 3 is indented with 2 tabs, oldText line 1 with 4 spaces"},
                       {"kind": "tabs_vs_spaces", "line": 4, "oldTextLine": 2,
                        "detail": "line 4 is indented with 3 tabs, oldText line 2 with 4 "
                                  "spaces"}]},
          suggested_tool="read_file", suggested_args={"path": "shape.py", "offset": 3, "limit": 2},
          tree={"shape.py": TABS}),
    _edit("not_found_indentation_width", {"path": "f.py",
                                          "oldText": "    x = 1\n    y = 2\n    z = 3\n",
                                          "newText": "q"}, "NOT_FOUND",
          "oldText does not occur in f.py; the closest text, lines 2-4, differs: line 2 is "
          "indented with 8 spaces, oldText line 1 with 4 spaces; line 3 is indented with 8 "
          "spaces, oldText line 2 with 4 spaces",
          "Indent oldText exactly as the file does; copy it from lines 2-4 of the file.",
          details={"kind": "no_match",
                   "closest": {"startLine": 2, "endLine": 4, "similarity": 1.0,
                               "text": "        x = 1\n        y = 2\n    z = 3"}},
          suggested_tool="read_file", suggested_args={"path": "f.py", "offset": 2, "limit": 3},
          tree={"f.py": "def f():\n        x = 1\n        y = 2\n    z = 3\n"}),
    _edit("not_found_trailing_whitespace", {"path": "t.py", "oldText": "x = 1\ny = 3\n",
                                            "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in t.py; the closest text, lines 1-2, differs: line 2 reads "
          "'y = 2' where oldText line 2 reads 'y = 3'; line 1 ends with 3 spaces that oldText "
          "line 1 leaves out", COPY_HINT.format(a=1, b=2),
          details={"kind": "no_match", "differences": [
              {"kind": "content", "line": 2, "oldTextLine": 2,
               "detail": "line 2 reads 'y = 2' where oldText line 2 reads 'y = 3'"},
              {"kind": "trailing_whitespace", "line": 1, "oldTextLine": 1,
               "detail": "line 1 ends with 3 spaces that oldText line 1 leaves out"}]},
          suggested_tool="read_file", suggested_args={"path": "t.py", "offset": 1, "limit": 2},
          tree={"t.py": "x = 1   \ny = 2\n"}),
    _edit("not_found_curly_quotes", {"path": "q.py", "oldText": "print('hello')",
                                     "newText": "print('bye')"}, "NOT_FOUND",
          "oldText does not occur in q.py; the closest text, line 1, differs: line 1 has the "
          "quote \u2018 where oldText line 1 has '",
          "Copy oldText from line 1 of the file: it uses other quote characters.",
          details={"kind": "no_match", "closest": {"startLine": 1, "endLine": 1, "similarity": 1.0,
                                                   "text": "print(\u2018hello\u2019)"}},
          suggested_tool="read_file", suggested_args={"path": "q.py", "offset": 1, "limit": 1},
          tree={"q.py": "print(\u2018hello\u2019)\n"}),
    _edit("not_found_line_endings_and_content", {"path": "w.py",
                                                 "oldText": "a = 1\nb = 3\n", "newText": "x"},
          "NOT_FOUND", "oldText does not occur in w.py; the closest text, lines 1-2, differs: "
          "line 2 reads 'b = 2' where oldText line 2 reads 'b = 3'", COPY_HINT.format(a=1, b=2),
          details={"kind": "no_match", "lineEndings": "crlf", "differences": [
              {"kind": "content", "line": 2, "oldTextLine": 2,
               "detail": "line 2 reads 'b = 2' where oldText line 2 reads 'b = 3'"},
              {"kind": "line_endings", "detail": "the file's line endings are CRLF and "
                                                 "oldText's are LF (that alone is tolerated)"}]},
          suggested_tool="read_file", suggested_args={"path": "w.py", "offset": 1, "limit": 2},
          tree={"w.py": b"a = 1\r\nb = 2\r\n"}),
    _edit("not_found_line_number_prefix",
          {"oldText": "5\tdef perimeter(w, h):\n6\t    return 2 * (w + h)\n", "newText": "x"},
          "NOT_FOUND", "oldText does not occur in src/util.py: its lines start with line "
          "numbers, which read_file shows but the file does not contain; without them it matches "
          "line 5", "Send oldText without the line-number prefixes, exactly as the file has it.",
          details={"kind": "no_match", "lines": [5],
                   "differences": [{"kind": "line_number_prefix",
                                    "detail": "its lines start with line numbers, which read_file "
                                              "shows but the file does not contain"}]}),
    _edit("not_found_escaped_newlines",
          {"oldText": "def area(w, h):\\n    return w * h", "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in src/util.py: it has escape sequences such as \\n where the "
          "file has line breaks; with real line breaks it matches line 1",
          "Send real line breaks and tabs in oldText and newText, not \\n or \\t escape "
          "sequences.", details={"kind": "no_match", "lines": [1]}),
    _edit("not_found_elision",
          {"oldText": "def area(w, h):\n    # ... rest of the code ...\n    return 2 * (w + h)\n",
           "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in src/util.py; the closest text, lines 1-6, differs: oldText "
          "line 2 ('# ... rest of the code ...') stands for lines 2-5 of the file, but oldText "
          "must be the file's text itself",
          "Put the file's full text in oldText, without placeholders such as '...'; to leave "
          "lines out, make two smaller edits instead.", details={"kind": "no_match"},
          suggested_tool="read_file",
          suggested_args={"path": "src/util.py", "offset": 1, "limit": 6}),
    _edit("not_found_missing_lines",
          {"oldText": "def area(w, h):\n\ndef perimeter(w, h):\n", "newText": "x"}, "NOT_FOUND",
          "oldText does not occur in src/util.py; the closest text, lines 1-5, differs: the file "
          "has 2 lines at line 2 that oldText leaves out ('return w * h' first)",
          COPY_HINT.format(a=1, b=5), details={"kind": "no_match"},
          suggested_tool="read_file",
          suggested_args={"path": "src/util.py", "offset": 1, "limit": 5}),
    _edit("not_found_nothing_close", {"oldText": "completely unrelated text", "newText": "x"},
          "NOT_FOUND", "oldText does not occur in src/util.py, and nothing in it is close",
          "Read the file and copy the text to change into oldText exactly.",
          details={"kind": "no_match", "field": "oldText"},
          suggested_tool="read_file", suggested_args={"path": "src/util.py"}),
    _edit("not_found_in_other_file", {"oldText": "def volume(w, h, d):", "newText": "x"},
          "NOT_FOUND", "oldText does not occur in src/util.py; the closest text, line 1, "
          "differs: line 1 reads 'def area(w, h):' where oldText line 1 reads 'def volume(w, h, "
          "d):'; it does occur in src/solid.py",
          "Check the path: oldText is in src/solid.py; pass that path if it is the file you "
          "meant.", details={"kind": "no_match", "foundIn": "src/solid.py"},
          suggested_tool="read_file", suggested_args={"path": "src/solid.py"},
          tree={**SRC, "src/solid.py": "def volume(w, h, d):\n    return w * h * d\n"}),

    # -- what real models do --------------------------------------------------------
    _edit("not_found_final_newline", {"path": "f.py", "oldText": "y = 2\n", "newText": "y = 3\n"},
          "NOT_FOUND", "oldText does not occur in f.py: it ends with a line break, but the file "
          "ends after line 2 without one; without it, it matches line 2",
          "End oldText where the file ends, without the extra line break; leave it out of "
          "newText too unless you mean to add one.",
          details={"kind": "no_match", "lines": [2], "differences": [
              {"kind": "final_newline", "line": 2,
               "detail": "it ends with a line break, but the file ends after line 2 without "
                         "one"}]},
          tree={"f.py": "x = 1\ny = 2"}),
    _edit("not_found_final_newline_and_content",
          {"path": "g.py", "oldText": "a = 1\nb = 3\n", "newText": "x\n"}, "NOT_FOUND",
          "oldText does not occur in g.py; the closest text, lines 1-2, differs: line 2 reads "
          "'b = 2' where oldText line 2 reads 'b = 3'; oldText ends with a line break, but the "
          "file ends after line 2 without one", COPY_HINT.format(a=1, b=2),
          details={"kind": "no_match", "differences": [
              {"kind": "content", "line": 2, "oldTextLine": 2,
               "detail": "line 2 reads 'b = 2' where oldText line 2 reads 'b = 3'"},
              {"kind": "final_newline", "line": 2,
               "detail": "oldText ends with a line break, but the file ends after line 2 "
                         "without one"}],
              "closest": {"startLine": 1, "endLine": 2, "similarity": 0.91,
                          "text": "a = 1\nb = 2"}},
          suggested_tool="read_file", suggested_args={"path": "g.py", "offset": 1, "limit": 2},
          tree={"g.py": "a = 1\nb = 2"}),
    _edit("not_found_final_newline_only_difference",
          {"path": "h.py", "oldText": "def f():\n    return 1\n\n", "newText": "x\n"},
          "NOT_FOUND", "oldText does not occur in h.py: it ends with 2 line breaks, but the file "
          "ends with 1; without it, it matches line 1",
          "End oldText where the file ends, without the extra line break; leave it out of "
          "newText too unless you mean to add one.",
          details={"kind": "no_match", "lines": [1]},
          tree={"h.py": "def f():\n    return 1\n"}),
]
