"""tests/security/README.md indexes the suite: every test file here has a
row saying what it tries, so a reader finds the test for a threat without
opening fifty files, and a new file cannot land unlisted.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).parent


def _listed() -> set[str]:
    return set(re.findall(r"`(test_\w+\.py)`", (HERE / "README.md").read_text()))


def test_every_security_test_file_has_a_row_in_the_readme():
    on_disk = {p.name for p in HERE.glob("test_*.py")}
    assert sorted(on_disk - _listed()) == []


def test_every_file_the_readme_names_exists():
    on_disk = {p.name for p in HERE.glob("test_*.py")}
    assert sorted(_listed() - on_disk) == []
