"""edit_file's diff of a block cut from around it looks for a few moved
lines before it makes a set of every removed line (issue 12's swap rows):
the same answer either way."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from corral.tools._edit import diff


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 300), st.integers(1, 400), st.data())
def test_a_block_diff_answers_as_it_does_without_the_probe(count, period, data):
    lines = [f"line {k % period}\n" for k in range(count)]
    new_lines = list(lines)
    for _ in range(data.draw(st.integers(0, 3))):
        change = data.draw(st.sampled_from(["swap", "replace", "drop", "rewrite"]))
        if not new_lines:
            break
        k = data.draw(st.integers(0, len(new_lines) - 1))
        if change == "swap" and k + 1 < len(new_lines):
            new_lines[k], new_lines[k + 1] = new_lines[k + 1], new_lines[k]
        elif change == "rewrite":  # a long run of lines all new
            size = data.draw(st.integers(1, 150))
            new_lines[k:k + size] = [f"fresh {k} {i}\n" for i in range(data.draw(st.integers(0, 150)))]
        elif change == "replace":
            new_lines[k] = f"new {data.draw(st.integers(0, 300))}\n"
        else:
            del new_lines[k]
    old, new = "".join(lines).encode(), "".join(new_lines).encode()
    probed = diff.block_diff_of_bytes("f", old, new, 0, 0, len(old), len(new))
    keep = diff._probed
    try:
        diff._probed = lambda removed, inserted: False  # type: ignore[assignment]
        plain = diff.block_diff_of_bytes("f", old, new, 0, 0, len(old), len(new))
    finally:
        diff._probed = keep  # type: ignore[assignment]
    assert probed == plain
