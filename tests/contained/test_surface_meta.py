"""chmod, chown and utime by their second way (``_ops_meta._on_name``: the
final name acted on in its held parent with ``AT_SYMLINK_NOFOLLOW``), the
one used where there is no ``O_PATH`` or no ``/proc`` (macOS).  Forced here
on Linux, it must give every answer the pinned way gives in the tables (the
same cases, the same os oracle), on every backend config.  The race tests
for it are in tests/security/test_surface_races.py (``via_name``).
"""

from __future__ import annotations

import pytest

from .helpers import table
from corral.contained._ops import meta as _ops_meta
from .test_surface_table import CONSISTENCY, RESOLUTION, SURFACE_OPS, _extend, install_hooks

META_OPS = [op for op in SURFACE_OPS if op.name.split("_")[0] in ("chmod", "chown", "utime")]
CASES = _extend(RESOLUTION) + _extend(CONSISTENCY)


@pytest.fixture(autouse=True)
def _by_name(monkeypatch):
    install_hooks(monkeypatch)
    monkeypatch.setattr(_ops_meta, "_proc_available", lambda: False)


def test_the_second_way_is_taken(make_root, scratch, monkeypatch):
    (scratch / "f").write_bytes(b"x")
    calls = []
    real = _ops_meta._on_name

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(_ops_meta, "_on_name", spy)
    root = make_root(scratch)
    root.chmod("f", 0o600)
    root.utime("f", ns=(1, 2))
    assert calls == ["f", "f"]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_same_answers_by_name(case, make_root, scratch):
    table.run_ops(case, META_OPS, make_root, scratch)
