"""THREATS.md rows the tables cannot state by themselves, for the surface
ops: a tree changed at one exact point of a resolution (row 9, one thread:
an intermediate directory moved out while ``..`` pops, an intermediate or
the final component swapped for an outward link), magic links (13) and
input that is no path (14).  The core's own test bodies
(``test_root_threats``) run with the surface ops of ``test_surface_table``,
on every backend config.
"""

from __future__ import annotations

import pytest

from .helpers import trees
from . import test_root_threats as core
from .helpers.operations import SRC_NAME
from .test_surface_table import SURFACE_OPS, install_hooks

READING = [op for op in SURFACE_OPS if op.follows and not op.mutates]


@pytest.fixture(autouse=True)
def _surface_hooks(monkeypatch):
    install_hooks(monkeypatch, core)
    # the trees of these tests also hold the source link_dst and copyfile_dst
    # link or copy from (the tables' prepare step makes it; these build trees
    # of their own)
    monkeypatch.setattr(core, "build", lambda base, fs: trees.build(base, [*fs, SRC_NAME]))


def _with_surface_ops(name: str, ops: list) -> None:
    """``test_<name>`` here: the core's test body, parametrized over ``ops``."""
    body = getattr(core, name)

    @pytest.mark.parametrize("op", ops, ids=[op.name for op in ops])
    def test(op, make_root, scratch):
        body(op, make_root, scratch)

    test.__name__ = test.__qualname__ = name
    test.__doc__ = body.__doc__
    globals()[name] = test


for _name in ("test_dir_moved_out_while_dotdot_pops_the_stack",
              "test_intermediate_dir_swapped_for_outward_link",
              "test_final_component_swapped_for_outward_link",
              "test_magic_links_through_a_bind_mounted_proc", "test_not_a_path_at_all"):
    _with_surface_ops(_name, SURFACE_OPS)
_with_surface_ops("test_magic_links_in_a_proc_root_are_refused", READING)
