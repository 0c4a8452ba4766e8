"""The bounded YAML reader the policy reads hook managers' and tools'
configs with: what it reads (as YAML reads it, scalars kept as strings),
what it refuses (``Unread``: the policy then protects every path), and
that any text ends in one of the two, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.tools._policy.yamlish import MAX_DEPTH, Unread, load

READ = {
    "mapping and sequence": ("a: 1\nb:\n  - x\n  - y\n", {"a": "1", "b": ["x", "y"]}),
    "sequence at the key's column": ("a:\n- x\n- y\nb: z\n", {"a": ["x", "y"], "b": "z"}),
    "mapping in a sequence": ("- id: x\n  entry: y\n- id: z\n",
                              [{"id": "x", "entry": "y"}, {"id": "z"}]),
    "comments": ("# top\na: b # end\nc: 'd # kept'\n", {"a": "b", "c": "d # kept"}),
    "quotes": ("a: 'it''s'\nb: \"x\\x2ey\\n\"\nc: 'C:\\dir'\n",
               {"a": "it's", "b": "x.y\n", "c": "C:\\dir"}),
    "quoted over lines": ('a: "one\n  two"\nb: x\n', {"a": "one two", "b": "x"}),
    "plain over lines": ("a: one\n  two\nb: x\n", {"a": "one two", "b": "x"}),
    "literal": ("a: |\n  x\n  y\nb: z\n", {"a": "x\ny\n", "b": "z"}),
    "folded strip": ("a: >-\n  x\n  y\n\n  z\n", {"a": "x y\nz"}),
    "keep": ("a: |+\n  x\n\nb: c\n", {"a": "x\n\n", "b": "c"}),
    "flow": ("a: {b: [1, 'two', {c: d}], e: f}\n",
             {"a": {"b": ["1", "two", {"c": "d"}], "e": "f"}}),
    "flow over lines": ("a: [x,\n  y]\n", {"a": ["x", "y"]}),
    "anchor, alias, merge": ("d: &d {run: x, glob: y}\nh:\n  <<: *d\n  glob: z\nk: *d\n",
                             {"d": {"run": "x", "glob": "y"}, "h": {"run": "x", "glob": "z"},
                              "k": {"run": "x", "glob": "y"}}),
    "document marker": ("---\na: b\n...\n", {"a": "b"}),
    "empty": ("# nothing\n", None),
    "url value": ("repo: https://github.com/x/y\n", {"repo": "https://github.com/x/y"}),
}


@pytest.mark.parametrize("case", list(READ))
def test_what_the_reader_reads(case):
    text, value = READ[case]
    assert load(text) == value


REFUSED = {
    "a tag": "a: !!python/object x\n",
    "a complex key": "? a\n: b\n",
    "two documents": "a: b\n---\nc: d\n",
    "a directive": "%YAML 1.2\n---\na: b\n",
    "a tab in indentation": "a:\n\t- b\n",
    "an alias to no anchor": "a: *nothing\n",
    "an unclosed quote": "a: 'x\nb: c\n",
    "an unclosed flow": "a: [x, y\n",
    "nesting past the depth": "a: " + "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2) + "\n",
    "aliases past the bound": "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)}\n" + "".join(f"  - *{chr(97 + i)}\n" for _ in range(10))
        for i in range(6)),
    "a line out of place": "a: b\n    c: d\n  e: f\n",
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_what_the_reader_refuses(case):
    with pytest.raises(Unread):
        load(REFUSED[case])


PIECES = st.sampled_from(["a", "b", ":", ": ", "-", "- ", " ", "  ", "\n", "\n  ", "#", "'",
                          '"', "\\", "[", "]", "{", "}", ",", "|", ">-", "&a ", "*a", "<<: ",
                          "!", "?", "%", "\t", "---", "x\\x2e", "\ufeff"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_any_text_is_read_or_refused(text):
    try:
        value = load(text)
    except Unread:
        return
    assert value is None or isinstance(value, (str, list, dict))
