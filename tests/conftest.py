"""Shared fixtures: every contained test runs against every backend present.

``make_root`` is parametrized over (backend, fast path): ``os-openat2``,
``os-walk``, ``native-openat2``, ``native-walk`` as available here.
``CORRAL_BACKEND=os|native`` keeps one backend; ``CORRAL_OPENAT2=0`` leaves
only the walk.
"""

from __future__ import annotations

import os

import pytest

from corral.contained import Root, available_backends, backend_by_name


def backend_configs() -> list[tuple[str, bool]]:
    forced = os.environ.get("CORRAL_BACKEND", "").strip().lower()
    names = [forced] if forced else available_backends()
    configs = []
    for name in names:
        if backend_by_name(name).has_openat2:
            configs.append((name, True))
        configs.append((name, False))
    return configs


BACKEND_CONFIGS = backend_configs()
BACKEND_IDS = [f"{name}-{'openat2' if fast else 'walk'}" for name, fast in BACKEND_CONFIGS]


@pytest.fixture(params=BACKEND_CONFIGS, ids=BACKEND_IDS)
def make_root(request):
    """A factory ``make_root(path, **kwargs) -> Root`` for one backend config;
    every root it made is closed afterwards."""
    name, fast = request.param
    made: list[Root] = []

    def make(path, **kwargs) -> Root:
        kwargs.setdefault("fast_path", fast)
        root = Root(path, backend=backend_by_name(name), **kwargs)
        made.append(root)
        return root

    make.backend_name = name
    make.fast_path = fast
    yield make
    for root in made:
        root.close()
