"""Refusal catalogue: write_file's checks of the content it is given
(tools/_edit/content.py): a placeholder elision that would lose most of a file,
and content numbered the way read_file shows lines."""

from __future__ import annotations

from .helpers.catalogue import Case

FILE = "".join(f"line_{i} = {i}\n" for i in range(30))
ELIDED = "line_0 = 0\n# ... rest of the code unchanged ...\n"
NUMBERED_HINT = ("Send content without the line-number prefixes read_file adds, exactly as the "
                 "file should read.")

CASES = [
    Case("write_file", "placeholder_elision_of_existing_file",
         {"path": "big.py", "content": ELIDED, "overwrite": True}, "INVALID_ARGUMENT",
         "content line 2 ('# ... rest of the code unchanged ...') stands for code it leaves out: "
         "29 of the 30 non-blank lines of big.py would be lost; nothing was written",
         "Use edit_file to change only part of big.py, or write the whole file without "
         "placeholders.",
         details={"path": "big.py", "field": "content", "kind": "placeholder", "contentLine": 2,
                  "placeholder": "# ... rest of the code unchanged ...", "lostLines": 29,
                  "fileLines": 30},
         tree={"big.py": FILE}),
    Case("write_file", "read_file_line_numbers_in_content",
         {"path": "new.py", "content": "1\tdef f():\n2\t    return 1\n"}, "INVALID_ARGUMENT",
         "every line of content starts with a line number and a tab (1 to 2), as read_file shows "
         "lines; new.py would contain those numbers; nothing was written", NUMBERED_HINT,
         details={"path": "new.py", "field": "content", "kind": "line_number_prefix",
                  "firstNumber": 1, "lines": 2}),
    Case("write_file", "read_file_line_numbers_in_overwrite",
         {"path": "a.py", "content": "7\tx = 1\n8\ty = 2\n9\tz = 3", "overwrite": True},
         "INVALID_ARGUMENT",
         "every line of content starts with a line number and a tab (7 to 9), as read_file shows "
         "lines; a.py would contain those numbers; nothing was written", NUMBERED_HINT,
         details={"kind": "line_number_prefix", "firstNumber": 7, "lines": 3},
         tree={"a.py": "x = 1\n"}),
]
