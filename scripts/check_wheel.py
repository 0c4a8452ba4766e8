"""Check built wheels: the tag and the contents a user relies on.

    python scripts/check_wheel.py --native DIR_OR_WHEEL...   # a platform wheel
    python scripts/check_wheel.py --pure DIR_OR_WHEEL...     # a build without the module

``--native``: an abi3 wheel (``cp311-abi3-<platform>``; on Linux a
``manylinux``/``musllinux`` platform, as ``auditwheel repair`` makes it) that
carries ``corral/_native*.so``, ``corral/py.typed``, the ``_native.pyi``
stub, the LICENSE and metadata saying MIT, ``Typing :: Typed`` and the
version in ``corral/__init__.py``.  ``--pure``: a ``py3-none-any`` wheel
without a native module, with ``corral/_native_missing.txt`` saying why.
Prints one line per wheel; exits 1 on the first problem.
"""

from __future__ import annotations

import argparse
import email
import email.message
import re
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _version() -> str:
    text = (REPO / "src" / "corral" / "__init__.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"', text, flags=re.M)
    if not match:
        raise SystemExit("no __version__ in src/corral/__init__.py")
    return match.group(1)


def _tag(wheel: Path) -> tuple[str, str, str, str]:
    """(version, python, abi, platform) from a wheel's file name."""
    parts = wheel.name[:-len(".whl")].split("-")
    if len(parts) < 5:
        return ("", "", "", "")
    version, python, abi, platform = parts[-4], parts[-3], parts[-2], parts[-1]
    return version, python, abi, platform


def _content_problems(files: set[str], metadata: email.message.Message | None) -> list[str]:
    """What every corral wheel must carry."""
    problems = [f"{needed} is missing" for needed in
                ("corral/py.typed", "corral/_native.pyi", "corral/__init__.py")
                if needed not in files]
    if not any(f.endswith(".dist-info/licenses/LICENSE") for f in files):
        problems.append("the LICENSE file is missing")
    if metadata is None:
        return [*problems, "no METADATA"]
    if metadata.get("License-Expression") != "MIT":
        problems.append(f"License-Expression is {metadata.get('License-Expression')!r}")
    if "Typing :: Typed" not in (metadata.get_all("Classifier") or []):
        problems.append("no 'Typing :: Typed' classifier")
    return problems


def _native_problems(python: str, abi: str, platform: str, has_module: bool) -> list[str]:
    problems = []
    if (python, abi) != ("cp311", "abi3"):
        problems.append(f"tag {python}-{abi} is not cp311-abi3")
    if platform.startswith("linux_"):
        problems.append(f"platform {platform} is not a manylinux/musllinux tag "
                        "(auditwheel repair not run?)")
    if not has_module:
        problems.append("corral/_native*.so is missing")
    return problems


def _pure_problems(tag: tuple[str, str, str], files: set[str], has_module: bool) -> list[str]:
    problems = []
    if tag != ("py3", "none", "any"):
        problems.append(f"tag {'-'.join(tag)} is not py3-none-any")
    if has_module:
        problems.append("a pure wheel carries a native module")
    if "corral/_native_missing.txt" not in files:
        problems.append("corral/_native_missing.txt (why the module is missing) is absent")
    return problems


def _problems(wheel: Path, native: bool) -> list[str]:
    version, python, abi, platform = _tag(wheel)
    problems = [] if version == _version() else [
        f"version {version!r} is not corral.__version__ {_version()!r}"]
    with zipfile.ZipFile(wheel) as archive:
        files = set(archive.namelist())
        info = next((f for f in files if f.endswith(".dist-info/METADATA")), None)
        metadata = email.message_from_bytes(archive.read(info)) if info else None
    has_module = any(re.fullmatch(r"corral/_native[^/]*\.so", f) for f in files)
    problems += _content_problems(files, metadata)
    if native:
        return problems + _native_problems(python, abi, platform, has_module)
    return problems + _pure_problems((python, abi, platform), files, has_module)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check corral wheels' tags and contents.")
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--native", action="store_true", help="a platform wheel with the module")
    kind.add_argument("--pure", action="store_true", help="a py3-none-any wheel without it")
    parser.add_argument("paths", nargs="+", type=Path, help="wheels or directories of wheels")
    args = parser.parse_args(argv)
    wheels = [w for p in args.paths for w in (sorted(p.glob("*.whl")) if p.is_dir() else [p])]
    if not wheels:
        print("check_wheel: no wheel found", file=sys.stderr)
        return 1
    for wheel in wheels:
        problems = _problems(wheel, args.native)
        if problems:
            print(f"check_wheel: {wheel.name}: " + "; ".join(problems), file=sys.stderr)
            return 1
        print(f"check_wheel: {wheel.name}: ok ({'native module, ' if args.native else ''}"
              f"py.typed, LICENSE, version {_version()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
