"""Recoverability against model mistakes whose plain answer would let the
model conclude something false or lose a file.

* glob given the name of an existing directory (``src``, ``**/pkg``)
  must not answer "No files match" and nothing else: the model would read
  "there is no src".  A zero-result search is never bare: it must say what would match,
  with a verified call.
* glob given a comma list (``*.ts,*.tsx``), the mistake grep's ``include``
  already recovers from.
* write_file overwriting a file with a placeholder elision phrased without
  an ellipsis (``# rest of the file is unchanged``): written, 99% of the
  file would be gone.
"""

from __future__ import annotations

import pytest

from corral.tools import Toolbox


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "lib.ts").write_text("export const a = 1;\n")
    (tmp_path / "b.tsx").write_text("export const b = 2;\n")
    return tmp_path


def _suggestion_finds(toolbox: Toolbox, answer: dict) -> list[str]:
    """What the answer's suggested call finds (it must be a glob that does)."""
    assert answer.get("suggestedTool") == "glob", answer
    followed = toolbox.call("glob", answer["suggestedArgs"])
    assert followed["ok"] is True, followed
    return followed["paths"]


@pytest.mark.parametrize("pattern", ["src", "**/pkg", "src/pkg"])
def test_glob_naming_a_directory_says_so(tree, make_root, pattern):
    with Toolbox(make_root(tree)) as toolbox:
        answer = toolbox.call("glob", {"pattern": pattern})
        assert answer["ok"] is True and answer["paths"] == []
        assert "directory" in answer.get("note", ""), answer
        assert "src/pkg/a.py" in _suggestion_finds(toolbox, answer) \
            or "src/pkg/" in _suggestion_finds(toolbox, answer)


@pytest.mark.parametrize("pattern", ["*.ts,*.tsx", "*.ts, *.tsx"])
def test_glob_comma_list_gets_the_brace_form(tree, make_root, pattern):
    with Toolbox(make_root(tree)) as toolbox:
        answer = toolbox.call("glob", {"pattern": pattern})
        assert answer["ok"] is True and answer["paths"] == []
        assert sorted(_suggestion_finds(toolbox, answer)) == ["b.tsx", "lib.ts"]


ORIGINAL = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(300))


@pytest.mark.parametrize("elision", [
    "# rest of the file is unchanged",
    "# Rest Of The Code Remains The Same",
    "# (other functions omitted for brevity)",
    "# [remaining functions unchanged]",
    "# ... 297 more functions ...",
])
def test_overwrite_with_an_elision_without_ellipsis_is_refused(tmp_path, make_root, elision):
    """600 of the file's 600 non-empty lines would go; the one new line says
    the rest was left out.  Refused (kind placeholder), nothing written."""
    (tmp_path / "m.py").write_text(ORIGINAL)
    content = f"def f0(x):\n    return x + 100\n\n{elision}\n"
    with Toolbox(make_root(tmp_path)) as toolbox:
        answer = toolbox.call("write_file", {"path": "m.py", "content": content,
                                             "overwrite": True})
    assert answer["ok"] is False and answer["details"].get("kind") == "placeholder", answer
    assert (tmp_path / "m.py").read_text() == ORIGINAL
