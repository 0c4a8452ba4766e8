"""An independent red-team pass: a search of a directory removed while
it is listed.

``glob`` walks from a directory it opened; another program (or a
``move_file``/``delete_file`` of the same turn) removes that directory
before it is listed.  On the native backend the listing of a removed
directory failed with ``ENOENT`` and the call answered ``INTERNAL``
(550 of 3,000 calls here, a traceback in the log); the os backend lists
it as empty.  Now every backend answers as a directory with nothing in
it, ``NOT_FOUND`` or ``STALE`` (it changed while looked at): never
``INTERNAL``.

On every backend config, with a thread removing and remaking the tree
beside the calls (a bounded number of rounds: a hang detector, not a
timing).
"""

from __future__ import annotations

import os
import shutil
import threading

from corral.tools import Toolbox

CALLS = [("glob", {"pattern": "**/*"}), ("glob", {"pattern": "*", "path": "a/b"}),
         ("glob", {"pattern": "**/*.txt", "path": "a"}), ("grep", {"pattern": "x"}),
         ("grep", {"pattern": "x", "path": "a/b"}), ("list_directory", {"path": "a/b"})]


def test_searching_a_directory_removed_meanwhile_is_never_internal(tmp_path, make_root):
    base = str(tmp_path)
    os.makedirs(f"{base}/a/b/c")
    box = Toolbox(make_root(base))
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            shutil.rmtree(f"{base}/a", ignore_errors=True)
            try:
                os.makedirs(f"{base}/a/b/c")
                with open(f"{base}/a/b/c/f.txt", "w") as out:
                    out.write("x\n")
            except OSError:
                pass

    thread = threading.Thread(target=churn)
    thread.start()
    codes: dict[str, int] = {}
    try:
        for _ in range(300):
            for tool, args in CALLS:
                answer = box.call(tool, args)
                code = answer.get("code", "ok")
                codes[code] = codes.get(code, 0) + 1
                assert code in ("ok", "NOT_FOUND", "STALE"), (tool, args, answer)
    finally:
        stop.set()
        thread.join()
    assert codes.get("ok", 0) > 0, codes
