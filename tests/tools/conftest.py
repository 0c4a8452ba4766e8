"""Fixtures the tools tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import corral.tools._read.cache as read_cache
from corral.tools import Toolbox


# Modules whose tests touch no file and no backend (pure functions: the edit
# engine's pieces, the schemas, the policy's YAML reader, the source's own
# layering): scripts/test.sh runs them in the main lane only, since the lanes
# that change the backend would run the same code again.  Named here, beside
# the marker's other users, so that a module's own lines need not change.
PURE_MODULES = frozenset({
    "test_classify_pure", "test_edit_align_anchors", "test_edit_diff_slices",
    "test_edit_hostile_shortcuts", "test_edit_near_miss_search", "test_edit_spans",
    "test_patch_engine", "test_result_types", "test_schema_fast_path", "test_view_boundary",
    "test_yaml_reader",
})
# and such tests in modules whose other tests make files
PURE_TESTS = {
    "test_edit_fast_path": frozenset({
        "test_the_quick_diff_is_the_general_diff",
        "test_the_one_line_diff_of_bytes_is_the_one_line_diff_of_the_texts",
        "test_the_diff_of_a_block_cut_from_around_it_is_the_general_diff",
        "test_the_block_diff_of_bytes_is_the_general_diff",
        "test_the_block_diff_of_bytes_answers_a_change_of_lines",
        "test_the_count_of_lines_after_an_edit_is_the_texts",
        "test_line_lookups_in_any_order_are_the_split_texts",
        "test_the_files_indentation_counted_in_c_is_the_line_by_line_answer",
        "test_occurrences_are_every_non_overlapping_match",
        "test_the_spacing_key_is_the_rules",
    }),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.parent != here:
            continue
        module = item.path.stem
        if module in PURE_MODULES or item.originalname in PURE_TESTS.get(module, ()):
            item.add_marker(pytest.mark.no_backend)


@pytest.fixture
def make_toolbox(make_root: Callable[..., Any]) -> Callable[..., Toolbox]:
    """``make_toolbox(path, **options)``: a Toolbox over ``make_root(path)``,
    so the test runs on every backend config."""
    def make(path: Path, **options: Any) -> Toolbox:
        return Toolbox(make_root(path), **options)
    return make


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads begin 'later' than the file's stamps by more than a granule, so
    the read cache may trust a file's stamps (no racy-clean window)."""
    monkeypatch.setattr(read_cache, "started",
                        lambda: read_cache.time.time_ns() + 10 * read_cache.RACY_NS)
