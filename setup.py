"""Only what pyproject.toml cannot say: the cffi module (``cffi_modules``
has no declarative form yet) and what a build does when it cannot compile it.

``corral._native`` is built wherever a C compiler is present.  On Linux it is
optional: when the compile fails (or ``CORRAL_NATIVE=0`` skips it) the build
still succeeds, but

* it says so in one line on stderr (``corral: native module NOT built: ...``),
* the wheel is ``py3-none-any`` (pure Python, honestly tagged; never an abi3
  wheel without its native module), and
* the package carries ``corral/_native_missing.txt`` with the reason, which
  ``corral doctor`` shows.

On Darwin the module is required: a failed compile fails the build.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
MISSING_MARKER = "_native_missing.txt"  # in the corral package; read by corral doctor
NATIVE_MODULE = "corral._native"

_skip = os.environ.get("CORRAL_NATIVE", "").strip().lower() in ("0", "no", "false", "off")
if _skip and sys.platform == "darwin":
    raise SystemExit("corral needs its native module on macOS; unset CORRAL_NATIVE=0")


def _say_missing(reason: str) -> None:
    line = (f"corral: native module NOT built: {reason}; installing the pure-Python 'os' "
            f"backend only (corral doctor says so too)")
    print(line, file=sys.stderr, flush=True)
    # pip shows a successful build's output only with -v: when stderr is
    # captured like that, say it on the terminal the install was started from
    if not sys.stderr.isatty():
        try:
            with open("/dev/tty", "w", encoding="utf-8") as tty:
                tty.write(line + "\n")
        except OSError:  # no controlling terminal (CI): stderr and the wheel tag say it
            pass


def _write_marker(package_dir: Path, reason: str | None) -> None:
    """Record why the module is missing (or remove a stale record)."""
    marker = package_dir / MISSING_MARKER
    if reason is None:
        marker.unlink(missing_ok=True)
    else:
        package_dir.mkdir(parents=True, exist_ok=True)
        marker.write_text(reason + "\n", encoding="utf-8")


class BuildExt(build_ext):
    """Builds the native module; on Linux a failed compile is recorded and
    announced instead of failing the build (cffi wraps this class)."""

    native_error: str | None = None

    def build_extension(self, ext: object) -> None:
        try:
            super().build_extension(ext)  # type: ignore[arg-type]
        except Exception as exc:  # compiler missing or C errors: CCompilerError and kin
            if sys.platform == "darwin":
                raise
            if BuildExt.native_error is None:
                detail = " ".join(str(exc).split())
                detail = detail if len(detail) <= 240 else detail[:237] + "..."
                BuildExt.native_error = f"the C compile failed ({type(exc).__name__}: {detail})"
                _say_missing(BuildExt.native_error)
            self._record(BuildExt.native_error)
        else:
            self._record(None)

    def _record(self, reason: str | None) -> None:
        package = (Path(self.build_lib) if not self.inplace else HERE / "src") / "corral"
        if reason is not None:  # a module left by an earlier build is not this build's
            for stale in package.glob("_native*.so"):
                stale.unlink()
        _write_marker(package, reason)


class BdistWheel(bdist_wheel):
    """A wheel without the native module is tagged ``py3-none-any`` and
    carries the reason; one with it carries no stale reason."""

    def run(self) -> None:
        if not self.skip_build:
            self.run_command("build")
        package = Path(self.get_finalized_command("build").build_lib) / "corral"
        if list(package.glob("_native*.so")):
            _write_marker(package, None)
        else:
            # pure: the files go to purelib and the tag is py3-none-any
            self.distribution.ext_modules = []
            self.root_is_pure = True
            self.py_limited_api = False
            _write_marker(package, BuildExt.native_error or (
                "CORRAL_NATIVE=0 was set at build time" if _skip else "it was not compiled"))
        super().run()


def _options() -> dict[str, object]:
    if _skip:
        # an earlier editable build leaves corral/_native*.so in src/, which
        # would still be imported (or packaged): the skip means "no module"
        for stale in (HERE / "src" / "corral").glob("_native*.so"):
            stale.unlink()
        _say_missing("CORRAL_NATIVE=0 is set")
        _write_marker(HERE / "src" / "corral", "CORRAL_NATIVE=0 was set at build time")
        return {"cmdclass": {"bdist_wheel": BdistWheel}}
    options: dict[str, object] = {
        "cffi_modules": ["native/_native_build.py:ffibuilder"],
        "cmdclass": {"build_ext": BuildExt, "bdist_wheel": BdistWheel},
    }
    # abi3 wheels (one per platform, any CPython >= 3.11), except on
    # free-threaded builds, which have no limited API
    if not sysconfig.get_config_var("Py_GIL_DISABLED"):
        options["options"] = {"bdist_wheel": {"py_limited_api": "cp311"}}
    return options


setup(**_options())  # type: ignore[arg-type]
