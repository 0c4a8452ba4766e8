"""Cross-compile corral's native C for the platforms this machine cannot run
(macOS x86_64 and arm64; also Linux aarch64 and musl), with zig's clang from
the ``ziglang`` wheel, warnings as errors.  Run by ``.ci/run``.

Two builds per target, and what each proves:

1. **The module**: the C file cffi generates for ``corral._native`` (every
   ``native/*.cdef`` + ``native/*.h``, exactly as ``native/_native_build.py``
   gives it to cffi) compiled to an object file for the target.  It proves
   that the target's branch of the C (``#if defined(__APPLE__)``...) and
   cffi's glue compile against the target's system headers, zig's bundled
   macOS SDK headers included, with ``-Wall -Werror``.  cffi's glue also
   needs ``Python.h``: the one available is this (Linux) CPython's, used in
   limited-API mode (cffi defines ``Py_LIMITED_API``), whose declarations do
   not depend on the platform; its ``pyconfig.h`` is Linux's, which affects
   only Python's own headers, not corral's C.
2. **The harness**: ``native/*.h`` alone (no Python) plus a ``main`` that
   takes the address of every function and reads every constant the cdef
   files declare, *linked* into a macOS executable.  Linking against zig's
   stubs of macOS's libSystem proves every C library function corral calls
   exists there under that name (``renameatx_np``, ``mkdirat``...).  For
   the Linux targets the harness is compiled, not linked.

Not proven here: that the module loads and behaves right on a real macOS
kernel.  The macOS lanes of ``.github/workflows`` run that on GitHub.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import struct
import subprocess
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NATIVE = REPO / "native"

# zig target -> (Mach-O or ELF, the CPU the header must name).  The harness
# is linked for macOS only (zig links against libSystem stubs in seconds);
# for Linux it would build a libc from source first (about 80 s per target
# on a cold cache), while the real x86_64 glibc build links in .ci/run step 2.
LINKED = ("x86_64-macos", "aarch64-macos")
TARGETS = {
    "x86_64-macos": ("macho", 0x01000007),
    "aarch64-macos": ("macho", 0x0100000C),
    "aarch64-linux-gnu": ("elf", 183),
    "x86_64-linux-musl": ("elf", 62),
    "aarch64-linux-musl": ("elf", 183),
}
WARNINGS = ["-Wall", "-Werror"]


def _zig_cc(target: str, *args: str) -> None:
    command = [sys.executable, "-m", "ziglang", "cc", "-target", target, *WARNINGS, *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"cross-compile for {target} failed:\n{' '.join(command)}\n"
                         f"{done.stdout}{done.stderr}")


def _binary_kind(path: Path) -> tuple[str, int]:
    head = path.read_bytes()[:20]
    if head[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian
        return "macho", struct.unpack_from("<I", head, 4)[0]
    if head[:4] == b"\x7fELF":
        return "elf", struct.unpack_from("<H", head, 18)[0]
    return "unknown", 0


def _check(path: Path, target: str) -> None:
    kind = _binary_kind(path)
    if kind != TARGETS[target]:
        raise SystemExit(f"{path.name}: expected {TARGETS[target]} for {target}, got {kind}")


def _declared_functions(cdef: str) -> list[str]:
    """Names of the functions the cdef declares (not its constants)."""
    text = re.sub(r"/\*.*?\*/", "", cdef, flags=re.S)
    # preprocessor lines end with no ";": dropped, or they would join the
    # declaration after them (a cdef ending in #defines, the next one's first)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    names = []
    for chunk in text.split(";"):
        declaration = " ".join(chunk.split())
        if declaration.startswith(("#", "static const", "typedef")) or "(" not in declaration:
            continue
        match = re.match(r"[\w\s\*]*?\b(\w+)\s*\(", declaration)
        if match:
            names.append(match.group(1))
    return names


def _declared_constants(cdef: str) -> list[str]:
    """Names of the integer constants the cdef declares (``#define X ...``
    and ``static const int X;``)."""
    text = re.sub(r"/\*.*?\*/", "", cdef, flags=re.S)
    return (re.findall(r"^\s*#define\s+(\w+)\s+\.\.\.", text, flags=re.M)
            + re.findall(r"static\s+const\s+\w+\s+(\w+)\s*;", text))


def _sources() -> tuple[str, str]:
    """The cdef text and the C text, as the build script joins them."""
    build = runpy.run_path(str(NATIVE / "_native_build.py"))
    parts = build["_parts"]
    read = build["_read"]
    return ("\n".join(read(n) for n in parts(".cdef")), "\n".join(read(n) for n in parts(".h")))


def _harness(c_source: str, functions: list[str], constants: list[str]) -> str:
    """The C plus a ``main`` using every declared function and constant, so
    the link needs each library symbol they call."""
    refs = ",\n    ".join(f"(void *)&{name}" for name in functions)
    values = " + ".join(f"(long long){name}" for name in constants) or "0"
    return (f"{c_source}\n\n"
            f"static void *const corral_functions[] = {{\n    {refs}\n}};\n\n"
            "int main(void) {\n"
            "    unsigned long n = sizeof corral_functions / sizeof corral_functions[0];\n"
            f"    long long constants = {values};\n"
            "    return corral_functions[n - 1] == 0 && constants == 42;\n}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="*", default=list(TARGETS), choices=list(TARGETS))
    args = parser.parse_args(argv)
    cdef, c_source = _sources()
    functions, constants = _declared_functions(cdef), _declared_constants(cdef)
    if not functions:
        raise SystemExit("no function declarations found in native/*.cdef")
    include = sysconfig.get_paths()["include"]
    with tempfile.TemporaryDirectory(prefix="corral-xc-") as tmp:
        work = Path(tmp)
        module_c = work / "corral._native.c"
        build = runpy.run_path(str(NATIVE / "_native_build.py"))
        build["ffibuilder"].emit_c_code(str(module_c))
        harness_c = work / "harness.c"
        harness_c.write_text(_harness(c_source, functions, constants), encoding="utf-8")

        def compile_for(target: str) -> str:
            module_o, harness_exe = work / f"module-{target}.o", work / f"harness-{target}"
            _zig_cc(target, "-fPIC", "-O2", f"-I{include}", "-c", str(module_c),
                    "-o", str(module_o))
            link = target in LINKED
            _zig_cc(target, "-O2", *(() if link else ("-c",)), str(harness_c),
                    "-o", str(harness_exe))
            _check(module_o, target)
            _check(harness_exe, target)
            return (f"cross-compile {target}: module compiled ({module_o.stat().st_size} "
                    f"bytes), harness {'linked' if link else 'compiled'} ({len(functions)} "
                    f"functions, {len(constants)} constants)")

        # each compile is one process on one core: the targets share the cores
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for line in pool.map(compile_for, args.targets):
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
