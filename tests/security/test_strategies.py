"""Each public strategy of corral.testing.strategies drives a differential
property against the kernel oracle on every backend config (helpers/properties.py).

These pass on corral; test_meta.py shows the same properties fail on broken
resolvers.  A few direct checks show what the strategies generate.
"""

from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corral.testing import TreeEntry, build_tree, changes, snapshot
from corral.testing.strategies import (NAME_255, NAME_255_MB, NAME_256, NAME_256_MB, components,
                                       names, paths, symlink_targets, trees, weighted)
from .helpers.harness import corral_configs
from .helpers.properties import PROPERTIES
from .helpers.settings import PROFILE


@pytest.mark.every_config
@pytest.mark.parametrize("strategy", sorted(PROPERTIES))
def test_strategy_property_holds_for_corral(strategy):
    PROPERTIES[strategy](corral_configs(), settings(PROFILE))


def test_lengths_are_bytes_not_characters():
    assert len(NAME_255.encode()) == len(NAME_255_MB.encode()) == 255
    assert len(NAME_256.encode()) == len(NAME_256_MB.encode()) == 256
    assert len(NAME_255_MB) < 255  # counted in characters it would look short


def _collect(strategy, n=400):
    seen = []

    @settings(max_examples=n, database=None, derandomize=True)
    @given(strategy)
    def sample(value):
        seen.append(value)
    sample()
    return seen


def test_components_cover_every_bucket():
    seen = set(_collect(components(), 600))
    assert {"..", ".", ""} <= seen
    assert "A" in seen and unicodedata.normalize("NFD", "\u00e9") in seen  # variants
    assert any("\x00" in c for c in seen)
    assert any(len(c.encode("utf-8", "surrogateescape")) > 255 for c in seen)


def test_paths_cover_decorations():
    seen = _collect(paths(absolute_prefixes=("@BASE@/ws-evil/",)), 600)
    assert any(p.startswith("@BASE@/ws-evil/") for p in seen)
    assert any(p.startswith("//") for p in seen)
    assert any(p.endswith("/.") for p in seen) and any(p.endswith("/") for p in seen)
    assert any(len(p.encode("utf-8", "surrogateescape")) >= 4096 for p in seen)
    assert "" in seen


def test_names_are_creatable():
    for name in _collect(names(), 300):
        assert name not in ("", ".", "..") and "/" not in name and "\x00" not in name
        assert len(name.encode()) <= 255


def test_symlink_targets_cover_every_bucket():
    seen = _collect(symlink_targets(absolute=("@BASE@/out",), climb_tails=("ws-evil",)), 600)
    assert all(t and "\x00" not in t for t in seen)
    assert any(t.startswith("@BASE@/out") for t in seen)  # absolute
    assert any(t.startswith("../") and t.endswith("ws-evil") for t in seen)  # climbing
    assert any(t.endswith("/") or t.endswith("/.") for t in seen)  # trailing
    assert "." in seen or ".." in seen  # looping


def test_weighted_respects_weights():
    seen = _collect(weighted((9, st.just("common")), (1, st.just("rare"))), 300)
    assert seen.count("common") > seen.count("rare") > 0


def test_build_tree_never_creates_through_a_symlink(tmp_path):
    top, outside = tmp_path / "top", tmp_path / "outside"
    top.mkdir()
    outside.mkdir()
    before = snapshot(outside)
    made = build_tree(top, [TreeEntry("symlink", "l", "@BASE@/outside"),
                            TreeEntry("dir", "l/x"), TreeEntry("file", "l/f", "x"),
                            TreeEntry("dir", "d"), TreeEntry("fifo", "d/p"),
                            TreeEntry("file", "d/p/x", "x"), TreeEntry("dir", "d")],
                      tokens={"@BASE@": str(tmp_path)})
    assert [e.path for e in made] == ["l", "d", "d/p"]
    assert os.readlink(top / "l") == str(outside)
    assert changes(before, snapshot(outside)) == []


def test_trees_build(tmp_path):
    for i, tree in enumerate(_collect(trees(), 50)):
        top = tmp_path / str(i)
        top.mkdir()
        made = build_tree(top, tree)
        assert {e.path for e in made} <= {e.path for e in tree}
        assert set(snapshot(top)) == {e.path for e in made}
