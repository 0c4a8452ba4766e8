"""The sanitizer lane: corral's native C under AddressSanitizer and
UndefinedBehaviorSanitizer, driven by the native tests and a bounded fuzz of
every exported function (tests/contained/test_native_contract.py).

    python scripts/sanitize.py                 # the lane (about a minute)
    python scripts/sanitize.py -x -k window    # extra arguments go to pytest

What it does:

1. Builds the module's C twice with ``-fsanitize=address,undefined
   -fno-sanitize-recover=all`` (``native/_native_build.py``'s
   ``cached_variant``, cached per source text): as ``corral._native``
   exactly as installed (no test hooks), and as ``_corral_native_test``
   with them (the tests that plant a symlink between two steps use it).
2. Runs pytest on the native tests in a new interpreter with the ASan
   runtime preloaded (``LD_PRELOAD``; CPython itself is not instrumented),
   ``PYTHONMALLOC=malloc`` (so the buffers Python hands to C are
   individually guarded, not carved from pymalloc's arenas), leak detection
   off (CPython keeps memory to the end on purpose), and a plugin that
   makes ``import corral._native`` load the sanitized build.
3. Fails on any sanitizer report (each aborts the run at once; the output
   is also searched for one), on a failed test, or when the sanitized module
   was not the one the tests used.

``CORRAL_NATIVE_FUZZ_ITERATIONS`` (default here 2000) sets the fuzz's calls
per function; the calls each function received are printed at the end.
``CORRAL_TEST_WORKERS`` sets pytest-xdist's workers, as in scripts/test.sh
(default: one per core; 0 runs in one process).
Needs a C compiler with the sanitizer runtimes (gcc with libasan and
libubsan, or clang): where they are missing it fails and says what to install.
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
         "-fno-omit-frame-pointer", "-g", "-O1"]
LINK = ["-fsanitize=address,undefined"]
TESTS = ["tests/contained/test_native_contract.py", "tests/contained/test_native.py",
         "tests/contained/test_sized_listing.py", "tests/tools/test_search_native.py",
         "tests/tools/test_read_window_native.py", "tests/contained/test_native_open_text.py",
         "tests/contained/test_native_open_stat.py",
         "tests/contained/test_fd_beneath.py", "tests/contained/test_replace_held.py",
         "tests/contained/test_replace_in_one_call.py",
         "tests/contained/test_watch_read_replace.py", "tests/contained/test_walk_in_one_call.py",
         "tests/contained/test_fd_beneath_at.py", "tests/contained/test_native_find_contract.py",
         "tests/tools/test_names_test.py", "tests/tools/test_edit_find_long.py"]
REPORTS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer",
           "SUMMARY: UndefinedBehaviorSanitizer")

PLUGIN = '''"""Loads the sanitized build as corral._native before corral is imported."""
import importlib.util
import os
import sys

_PATH = os.environ["CORRAL_SANITIZED_NATIVE"]
_spec = importlib.util.spec_from_file_location("corral._native", _PATH)
_module = importlib.util.module_from_spec(_spec)
sys.modules["corral._native"] = _module
_spec.loader.exec_module(_module)


def pytest_report_header(config):
    return f"corral._native: {_PATH} (AddressSanitizer + UndefinedBehaviorSanitizer)"


def pytest_sessionfinish(session, exitstatus):
    used = getattr(sys.modules.get("corral._native"), "__file__", None)
    if used != _PATH:
        print(f"corral._native in use is {used}, not the sanitized build", file=sys.stderr)
        session.exitstatus = 3
'''


def _compiler() -> str:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return cc if shutil.which(cc) else "cc"


def _runtime(cc: str) -> str:
    """The ASan runtime to preload, after checking the compiler can build
    and run a sanitized program at all."""
    with tempfile.TemporaryDirectory() as tmp:
        source, program = Path(tmp, "probe.c"), Path(tmp, "probe")
        source.write_text("int main(void) { return 0; }\n", encoding="utf-8")
        done = subprocess.run([cc, *FLAGS, str(source), "-o", str(program)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0 or subprocess.run([str(program)], check=False).returncode:
            raise SystemExit(f"sanitize: {cc} cannot build a program with {' '.join(FLAGS[:1])}"
                             f" (install the runtimes: apt-get install libasan8 libubsan1, or "
                             f"use clang):\n{done.stderr}")
    for name in ("libasan.so", "libclang_rt.asan-x86_64.so"):
        found = subprocess.run([cc, f"-print-file-name={name}"], capture_output=True,
                               text=True, check=False).stdout.strip()
        if found and os.path.isabs(found) and os.path.exists(found):
            return os.path.realpath(found)
    raise SystemExit(f"sanitize: {cc} does not say where its ASan runtime is")


def _builds() -> tuple[str, str]:
    """(the sanitized corral._native's file, the folder of the sanitized test build)."""
    build = runpy.run_path(str(REPO / "native" / "_native_build.py"))
    variant = build["cached_variant"]
    module_dir = variant("corral._native", hooks=False, extra_compile_args=FLAGS,
                         extra_link_args=LINK)
    found = sorted(Path(module_dir, "corral").glob("_native*.so"))
    if not found:
        raise SystemExit(f"sanitize: no corral/_native*.so in {module_dir}")
    test_dir = variant("_corral_native_test", hooks=True, extra_compile_args=FLAGS,
                       extra_link_args=LINK)
    return str(found[0]), test_dir


def main(argv: list[str]) -> int:
    started = time.monotonic()
    cc = _compiler()
    runtime = _runtime(cc)
    module, test_dir = _builds()
    built = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="corral-sanitize-") as tmp:
        Path(tmp, "corral_sanitized_native.py").write_text(PLUGIN, encoding="utf-8")
        counts_file = Path(tmp, "calls.json")
        env = dict(os.environ)
        env.update({
            "LD_PRELOAD": runtime,
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:halt_on_error=1:"
                            "strict_string_checks=1:detect_stack_use_after_return=1",
            "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
            "PYTHONMALLOC": "malloc",
            "PYTHONPATH": os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")])),
            "CORRAL_SANITIZED_NATIVE": module,
            "CORRAL_NATIVE_TEST_MODULE_DIR": test_dir,
            "CORRAL_NATIVE_CALL_COUNTS": str(counts_file),
            "CORRAL_BACKEND": "native",
        })
        env.setdefault("CORRAL_NATIVE_FUZZ_ITERATIONS", "2000")
        # pytest-xdist's workers inherit the preload and the plugin: the lane
        # takes every core, as the other lanes do (one process left one idle)
        workers = os.environ.get("CORRAL_TEST_WORKERS", "auto")
        command = [sys.executable, "-m", "pytest", "-p", "corral_sanitized_native", "-q",
                   "-p", "no:cacheprovider", "-n", workers, *TESTS, *argv]
        print("sanitize:", " ".join(command), flush=True)
        done = subprocess.run(command, cwd=REPO, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace",
                              check=False)
        sys.stdout.write(done.stdout)
        calls: Counter[str] = Counter()
        for written in Path(tmp).glob("calls.json*"):  # one file a worker
            calls.update(json.loads(written.read_text()))
    reports = [line for line in done.stdout.splitlines() if any(r in line for r in REPORTS)]
    took = time.monotonic() - started
    print(f"sanitize: build {built - started:.0f} s, tests {took - (built - started):.0f} s, "
          f"{sum(calls.values())} fuzz calls: " +
          ", ".join(f"{name} {count}" for name, count in sorted(calls.items())))
    if reports:
        print("sanitize: FAILED, sanitizer reports:\n  " + "\n  ".join(reports[:20]))
        return 1
    if done.returncode != 0:
        print(f"sanitize: FAILED (pytest exit {done.returncode})")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
