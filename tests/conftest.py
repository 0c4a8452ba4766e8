"""Shared fixtures: every contained test runs against every backend present.

``make_root`` is parametrized over (backend, fast path): ``os-openat2``,
``os-walk``, ``native-openat2``, ``native-walk`` as available here.
``CORRAL_BACKEND=os|native`` keeps one backend; ``CORRAL_OPENAT2=0`` leaves
only the walk.
"""

from __future__ import annotations

import pytest

from corral.contained import Root, backend_by_name

from .helpers import BACKEND_CONFIGS, BACKEND_IDS


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "no_backend: touches no file and no backend (a policy's own logic): "
                   "scripts/test.sh runs it in the main lane only, since the lanes that "
                   "change the backend would run the same code again")
    config.addinivalue_line(
        "markers", "own_backend: calls the native module, or a backend built with its fast "
                   "path named, itself: CORRAL_BACKEND and CORRAL_OPENAT2 change nothing "
                   "it runs, so scripts/test.sh runs it in the main lane only")
    config.addinivalue_line(
        "markers", "every_config: runs every backend config itself, from the list "
                   "CORRAL_BACKEND narrows (tests/security/helpers/harness.corral_configs): "
                   "the os-only lane would run the main lane's os configs again, so "
                   "scripts/test.sh leaves it out there (the openat2-off lane runs it: "
                   "its backends have no openat2 at all)")
    config.addinivalue_line(
        "markers", "long: runs for many seconds alone (a battery, a race, a property over "
                   "hundreds of examples, an install): sent to a worker first, with the "
                   "every_config tests, so that no worker is left running one at the end "
                   "while the other has nothing to do")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # the longest tests (each runs every backend config in one go: the state
    # machine, the strategy properties) first: pytest-xdist hands tests out
    # in this order, and one started near the end held one worker alone for
    # minutes while the other had nothing left (the lanes' last 4 minutes);
    # then the other long ones (the sort is stable: the rest keep their order).
    # xdist's load mode hands each worker a first chunk of consecutive tests
    # (an eighth of the run), so these all run on one worker, one after
    # another: the race batteries' attackers each spin a core, and two races
    # at once on two cores took 3 to 4 times as long each (CI's tool races:
    # 3 to 8 s a test spread out, 20 to 25 s when both workers ran them)
    items.sort(key=lambda item: (item.get_closest_marker("every_config") is None,
                                 item.get_closest_marker("long") is None))
