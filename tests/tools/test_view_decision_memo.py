"""A view remembers what it decided of a plain place by its names alone.

The common write and edit decide on one existing place reached without a
link (:meth:`View.rule_at`): the policy's rule and whether the path lies
where Python runs code at its start are facts of the path's names, kept
per path and op for the view's policy.  Every answer equals the general
decision on ``Location(path)``, asked first or asked again; what is looked
at each time (a ``.pth`` file importing the module, a repository made
since the view opened) is still looked at; a policy the view holds later
starts from nothing; the memory is bounded.
"""

from __future__ import annotations

import itertools
import subprocess

from corral.tools import Policy, Toolbox
from corral.tools._policy.locate import Location
from corral.tools._policy.rules import Op
from corral.tools._runtime.view import decide as _decide

SITE = ".venv/lib/python3.11/site-packages"
PATHS = ["a.txt", "src/main.py", ".git/config", ".env", "docs/id_rsa", f"{SITE}/mod.py",
         f"{SITE}/other/x.py", ".venv/bin/activate", "build/out.o", "x" * 600]


def _protected(answer):
    return not answer["ok"] and answer["details"]["kind"] == "protected"


def _tree(tmp_path):
    for rel in ("src", "docs", "build", ".venv/bin", f"{SITE}/other"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
    (tmp_path / ".venv/pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / SITE / "start.pth").write_text("import mod\n")


def test_every_plain_decision_is_the_general_one_asked_once_or_twice(tmp_path):
    _tree(tmp_path)
    for policy in (Policy.default(), Policy.build(deny=["build/"], protect=["docs/**"])):
        with Toolbox(str(tmp_path), policy=policy) as box:
            view = box._view
            for path, op in itertools.product(PATHS, list(Op)):
                general = view.rule(Location(path), op, lambda: False)
                assert view.rule_at(path, op, lambda: False) == general, (policy, path, op)
                assert view.rule_at(path, op, lambda: False) == general  # remembered now


def test_a_module_a_pth_file_comes_to_import_is_protected_after_it_was_written(tmp_path):
    _tree(tmp_path)
    with Toolbox(str(tmp_path)) as box:
        rel = f"{SITE}/later.py"
        assert box.call("write_file", {"path": rel, "content": "x = 1\n"})["ok"]
        assert box.call("write_file", {"path": rel, "content": "x = 2\n",
                                       "overwrite": True})["ok"]
        # the .pth's lines are read at each decision, never remembered
        (tmp_path / SITE / "start.pth").write_text("import mod\nimport later\n")
        answer = box.call("write_file", {"path": rel, "content": "x = 3\n", "overwrite": True})
        assert _protected(answer), answer
    assert (tmp_path / rel).read_text() == "x = 2\n"


def test_a_repository_made_after_a_write_is_protected_at_the_next(tmp_path):
    (tmp_path / "proj").mkdir()
    with Toolbox(str(tmp_path)) as box:
        assert box.call("write_file", {"path": "proj/config", "content": "[core]\n"})["ok"]
        subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "proj")], check=True)
        answer = box.call("write_file", {"path": "proj/config",
                                         "content": "[core]\n\tbare = true\n",
                                         "overwrite": True})
        assert _protected(answer), answer


def test_a_policy_held_later_starts_with_no_memory(tmp_path):
    (tmp_path / "inner").mkdir()
    with Toolbox(str(tmp_path)) as box:
        assert box.call("write_file", {"path": "inner/a.txt", "content": "1\n"})["ok"]
        assert box.call("write_file", {"path": "inner/a.txt", "content": "2\n",
                                       "overwrite": True})["ok"]
        box.hold("inner", Policy.build(protect=["a.txt"]))
        answer = box.call("write_file", {"path": "inner/a.txt", "content": "3\n",
                                         "overwrite": True})
        assert _protected(answer), answer
    assert (tmp_path / "inner/a.txt").read_text() == "2\n"


def test_the_memory_is_bounded_and_skips_long_paths(tmp_path):
    with Toolbox(str(tmp_path)) as box:
        view = box._view
        for n in range(_decide._START_QUIET_MAX * 2 + 7):
            assert view.rule_at(f"dir{n}/file.py", Op.CREATE, lambda: False) is None
            assert len(view._plain_memo[1]) <= _decide._START_QUIET_MAX
            assert len(_decide._START_QUIET) <= _decide._START_QUIET_MAX
        long = "d/" * 300 + "file.py"
        assert view.rule_at(long, Op.CREATE, lambda: False) is None
        assert (long, Op.CREATE) not in view._plain_memo[1] and long not in _decide._START_QUIET
