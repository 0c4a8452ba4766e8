"""An independent red-team pass over the spellings a FAT, exFAT or
Windows-served disk reads as another name: a trailing dot or space
(``.git.``, ``.vscode.``, ``.envrc.``; a trailing space, ``.git ``, is
refused as a name already) is dropped by Linux's
vfat and exfat drivers and by Windows, so on such a root
``write_file .git./hooks/pre-commit`` writes ``.git/hooks/pre-commit``;
``GIT~1`` is the short (8.3) name vfat gives ``.git``, and git itself
treats both spellings as ``.git`` (``core.protectNTFS``).  The rules were
decided on the spelling: each was written, made and moved onto.

Now a rule's names are folded as such a disk folds them (the trailing dots
and spaces of a name dropped, ``git~1`` read as ``.git``), whatever the
disk: on a Linux disk these are names of their own no program opens for
the protected one, and refusing them costs nothing a project uses.  Other
short names (``VSCODE~1``) cannot be told from a spelling: docs/policy.md
says so.  Run on this machine's disk (ext4 or tmpfs, no vfat here): what
is asserted is the decision.  Every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox

PROTECTED = [".git./hooks/pre-commit", ".git../hooks/pre-push", "GIT~1/hooks/pre-commit",
             "git~1/config", ".vscode./tasks.json", ".envrc.", ".claude./settings.json",
             "sub/.husky./pre-commit", ".devcontainer../devcontainer.json"]
# a name ending in a space is refused as a name already (INVALID_ARGUMENT)
SPACED = [".git /config", ".vscode /settings.json", ".envrc ", ".devcontainer. /x.json"]


@pytest.mark.parametrize("path", PROTECTED, ids=lambda p: repr(p))
def test_a_spelling_such_a_disk_drops_to_a_protected_name_is_protected(
        tmp_path, make_root, path):
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "staged.txt").write_text("x\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        write = toolbox.call("write_file", {"path": path, "content": "x\n"})
        move = toolbox.call("move_file", {"source": "staged.txt", "destination": path})
        made = toolbox.call("make_directory", {"path": path + "/more"})
    for answer in (write, move, made):
        assert answer["ok"] is False and answer["details"]["kind"] == "protected", answer
    assert not (tmp_path / path).exists() and (tmp_path / "staged.txt").exists()


@pytest.mark.parametrize("path", SPACED, ids=lambda p: repr(p))
def test_a_spelling_ending_in_a_space_is_refused(tmp_path, make_root, path):
    (tmp_path / ".git").mkdir()
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is False, answer
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git"]


@pytest.mark.parametrize("path", [".env.", "id_ed25519.", "keys/server.pem."],
                         ids=lambda p: repr(p))
def test_a_spelling_dropped_to_a_secret_is_not_read(tmp_path, make_root, path):
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text("TOKEN=q7-secret\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        read = toolbox.call("read_file", {"path": path})
        grep = toolbox.call("grep", {"pattern": "TOKEN"})
    assert read["ok"] is False and read["details"]["kind"] == "secret", read
    assert "q7-secret" not in str(read) and "q7-secret" not in str(grep), grep


@pytest.mark.parametrize("path", ["notes.", "a..b/c.txt", "...", "dots.../x.txt",
                                  "file~1.txt", "gitx~1/config", "v1.2./notes.md"],
                         ids=lambda p: repr(p))
def test_other_such_names_stay_writable(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer


def test_the_host_can_lift_it(tmp_path, make_root):
    with Toolbox(make_root(str(tmp_path)), policy=Policy.none()) as toolbox:
        assert toolbox.call("write_file", {"path": ".envrc.", "content": "x\n"})["ok"] is True
