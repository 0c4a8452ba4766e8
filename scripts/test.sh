#!/usr/bin/env bash
# The README's test command: a fresh venv, corral with its test extra, pytest.
#
# corral._native is built by the install wherever a C compiler is present
# (CORRAL_NATIVE=0 skips it), and the suites run against every backend
# present.  With no arguments, the core suites then run twice more, once with
# the openat2 fast path off (CORRAL_OPENAT2=0: the walk does everything) and
# once with the os backend forced (CORRAL_BACKEND=os), so code that takes the
# default backend is tested in those lanes too.  An environment that already
# picks a lane (CORRAL_BACKEND / CORRAL_OPENAT2 set, as CI's lanes do) or
# CORRAL_LANES=0 runs the main pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
.venv/bin/python -m pytest "$@"

if [ $# -eq 0 ] && [ -z "${CORRAL_BACKEND:-}${CORRAL_OPENAT2:-}" ] && [ "${CORRAL_LANES:-1}" != 0 ]; then
    core=()
    for dir in tests/contained tests/tools; do
        if [ -d "$dir" ]; then core+=("$dir"); fi
    done
    echo "== lane: openat2 disabled (CORRAL_OPENAT2=0) on ${core[*]}"
    CORRAL_OPENAT2=0 .venv/bin/python -m pytest -q -p no:cacheprovider "${core[@]}"
    echo "== lane: os backend only (CORRAL_BACKEND=os) on ${core[*]}"
    CORRAL_BACKEND=os .venv/bin/python -m pytest -q -p no:cacheprovider "${core[@]}"
fi
