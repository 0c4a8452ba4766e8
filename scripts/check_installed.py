"""Check an installed corral (run with the venv's python, outside the source
tree): the package imports from site-packages, the backend is what is
expected, and ``corral doctor`` says so.

    python scripts/check_installed.py --expect-native
    python scripts/check_installed.py --expect-os      # a py3-none-any install
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check an installed corral.")
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--expect-native", action="store_true")
    kind.add_argument("--expect-os", action="store_true")
    args = parser.parse_args(argv)
    expected = "native" if args.expect_native else "os"

    import corral
    from corral.contained import Root, backend_report

    where = Path(corral.__file__).resolve()
    if "site-packages" not in where.parts:
        print(f"check_installed: corral comes from {where}, not an installed copy",
              file=sys.stderr)
        return 1
    report = backend_report()
    if report["backend"] != expected:
        print(f"check_installed: backend is {report['backend']}, expected {expected}: {report}",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp, Root(tmp) as root:
        root.write_bytes("probe.txt", b"ok")
        assert root.read_bytes("probe.txt") == b"ok"
        assert root.backend.name == expected
    script = shutil.which("corral", path=os.path.dirname(sys.executable))
    if script is None:
        print("check_installed: no corral console script beside this python", file=sys.stderr)
        return 1
    doctor = subprocess.run([script, "doctor", tempfile.gettempdir()], capture_output=True,
                            text=True, check=False)
    print(doctor.stdout, end="")
    wanted = f"backend: {expected} (the default"
    module_line = ("native module: built and loaded" if expected == "native"
                   else "native module: not in use")
    if doctor.returncode != 0 or wanted not in doctor.stdout or module_line not in doctor.stdout:
        print(f"check_installed: corral doctor did not report the {expected} backend "
              f"(exit {doctor.returncode}): {doctor.stderr}", file=sys.stderr)
        return 1
    print(f"check_installed: corral {corral.__version__} from {where.parent}: "
          f"{expected} backend, corral doctor agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
