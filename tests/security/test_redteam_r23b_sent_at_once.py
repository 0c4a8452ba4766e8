"""An independent red-team pass (round twenty-three, second team), held and
kept cheap: the pieces of a git repository sent as separate calls at once
(threads at a barrier, and ``asyncio.gather`` over ``acall`` as the agent
frameworks do), so that each call alone might be decided before the others
land: HEAD, objects/, refs/, commondir and a hook never all end up in
place, on every backend config.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from corral.tools import Toolbox

ROUNDS = 30  # per backend config; each round a fresh tree


def _is_repository(folder: Path) -> bool:
    """What git takes for a repository directory: HEAD beside objects/ and
    refs/, or beside commondir."""
    head = (folder / "HEAD").exists()
    return head and (((folder / "objects").is_dir() and (folder / "refs").is_dir())
                     or (folder / "commondir").exists())


_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "r/objects/info/x", "content": ""}),
    ("write_file", {"path": "r/refs/heads/x", "content": ""}),
    ("write_file", {"path": "r/HEAD", "content": "ref: refs/heads/main\n"}),
    ("make_directory", {"path": "r/objects/pack"}),
    ("make_directory", {"path": "r/refs/tags"}),
    ("write_file", {"path": "r/commondir", "content": ".."}),
    ("write_file", {"path": "r/hooks/pre-receive", "content": "#!/bin/sh\n"}),
]


def test_threads_never_make_a_repository_between_them(tmp_path, make_root):
    for round_ in range(ROUNDS):
        base = tmp_path / str(round_)
        (base / "r").mkdir(parents=True)
        box = Toolbox(make_root(str(base)))
        calls = random.sample(_CALLS, len(_CALLS))
        barrier = threading.Barrier(len(calls))
        answers: list[Any] = [None] * len(calls)

        def run(at: int, call: tuple[str, dict[str, Any]]) -> None:
            barrier.wait()
            answers[at] = box.call(*call)
        threads = [threading.Thread(target=run, args=item) for item in enumerate(calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert not _is_repository(base / "r"), (calls, answers, os.listdir(base / "r"))
        for (_, args), answer in zip(calls, answers):  # each answer says what happened
            assert answer["ok"] == (base / args["path"]).exists(), (args, answer)


def _patch(body: str) -> dict[str, str]:
    return {"input": f"*** Begin Patch\n{body}\n*** End Patch"}


_PATCHES = [_patch("*** Add File: r/objects/info/x\n+"), _patch("*** Add File: r/refs/heads/x\n+"),
            _patch("*** Add File: r/HEAD\n+ref: refs/heads/main"),
            _patch("*** Update File: run.sh\n*** Move to: r/hooks/pre-receive\n@@\n #!/bin/sh")]


def test_patches_gathered_never_make_a_repository_with_a_hook(tmp_path, make_root):
    for round_ in range(ROUNDS):
        base = tmp_path / str(round_)
        base.mkdir()
        (base / "run.sh").write_text("#!/bin/sh\necho hi\n")
        os.chmod(base / "run.sh", 0o755)
        box = Toolbox(make_root(str(base)), editing="apply_patch")
        patches = random.sample(_PATCHES, len(_PATCHES))

        async def gathered() -> list[dict[str, Any]]:
            return await asyncio.gather(*[box.acall("apply_patch", p) for p in patches])
        answers = asyncio.run(gathered())
        assert not _is_repository(base / "r"), (patches, answers)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    random.seed(23)
