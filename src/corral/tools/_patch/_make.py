"""Writing a patch from two versions of a file, as a careful writer would:
each hunk's old block grown until it occurs once after the previous hunk, so
the engine places it where it was meant (used where corral itself turns an
edit into hunks, and by tests)."""

from __future__ import annotations

from difflib import SequenceMatcher

__all__ = ["hunk_lines", "update_hunks"]

_Change = tuple[int, int, int, int]


def _occurs_once(a: list[str], block: list[str], start: int) -> bool:
    width = len(block)
    count = 0
    for k in range(start, len(a) - width + 1):
        if a[k] == block[0] and a[k:k + width] == block:
            count += 1
            if count > 1:
                return False
    return count == 1


def update_hunks(a: list[str], b: list[str]) -> list[tuple[list[str], list[str]]]:
    """(old block, new block) pairs turning lines ``a`` into lines ``b``."""
    changes: list[_Change] = [(a1, a2, b1, b2) for tag, a1, a2, b1, b2 in
                              SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
                              if tag != "equal"]
    hunks: list[tuple[list[str], list[str]]] = []
    cursor = 0
    i = 0
    while i < len(changes):
        a1, a2, b1, b2 = changes[i]
        while True:
            while i + 1 < len(changes) and changes[i + 1][0] <= a2:
                a2, b2 = max(a2, changes[i + 1][1]), max(b2, changes[i + 1][3])
                i += 1
            if a2 > a1 and _occurs_once(a, a[a1:a2], cursor):
                break
            if a2 < len(a):
                a2, b2 = a2 + 1, b2 + 1
            elif a1 > cursor:
                a1, b1 = a1 - 1, b1 - 1
            else:
                break  # the whole rest of the file: it can only match here
        hunks.append((a[a1:a2], b[b1:b2]))
        cursor = a2
        i += 1
    return hunks


def hunk_lines(old: list[str], new: list[str]) -> list[str]:
    """One hunk's body: ``' '``, ``'-'`` and ``'+'`` lines."""
    out: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [" " + line for line in old[i1:i2]]
        else:
            out += ["-" + line for line in old[i1:i2]] + ["+" + line for line in new[j1:j2]]
    return out
