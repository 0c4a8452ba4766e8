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

import rootcase_fs
import test_root_threats as core
from rootcase_ops import SRC_NAME
from test_surface_table import SURFACE_OPS, install_hooks

IDS = [op.name for op in SURFACE_OPS]
READING = [op for op in SURFACE_OPS if op.follows and not op.mutates]


@pytest.fixture(autouse=True)
def _surface_hooks(monkeypatch):
    install_hooks(monkeypatch, core)
    # the trees of these tests also hold the source link_dst and copyfile_dst
    # link or copy from (the tables' prepare step makes it; these build trees
    # of their own)
    monkeypatch.setattr(core, "build", lambda base, fs: rootcase_fs.build(base, [*fs, SRC_NAME]))


@pytest.mark.parametrize("op", SURFACE_OPS, ids=IDS)
def test_dir_moved_out_while_dotdot_pops_the_stack(op, make_root, scratch):
    core.test_dir_moved_out_while_dotdot_pops_the_stack(op, make_root, scratch)


@pytest.mark.parametrize("op", SURFACE_OPS, ids=IDS)
def test_intermediate_dir_swapped_for_outward_link(op, make_root, scratch):
    core.test_intermediate_dir_swapped_for_outward_link(op, make_root, scratch)


@pytest.mark.parametrize("op", SURFACE_OPS, ids=IDS)
def test_final_component_swapped_for_outward_link(op, make_root, scratch):
    core.test_final_component_swapped_for_outward_link(op, make_root, scratch)


@pytest.mark.parametrize("op", READING, ids=[op.name for op in READING])
def test_magic_links_in_a_proc_root_are_refused(op, make_root, scratch):
    core.test_magic_links_in_a_proc_root_are_refused(op, make_root, scratch)


@pytest.mark.parametrize("op", SURFACE_OPS, ids=IDS)
def test_magic_links_through_a_bind_mounted_proc(op, make_root, scratch):
    core.test_magic_links_through_a_bind_mounted_proc(op, make_root, scratch)


@pytest.mark.parametrize("op", SURFACE_OPS, ids=IDS)
def test_not_a_path_at_all(op, make_root, scratch):
    core.test_not_a_path_at_all(op, make_root, scratch)
