#!/usr/bin/env bash
# The README's test command: a fresh venv, corral with its test extra, pytest.
#
# corral._native is built by the install wherever a C compiler is present
# (CORRAL_NATIVE=0 skips it), and tests that take the `make_root` fixture run
# against every backend config present (os/native x openat2/walk).
#
# With no arguments two more lanes follow, for the tests that use the default
# backend instead of `make_root`: the openat2 fast path off (CORRAL_OPENAT2=0,
# the walk does everything) and the os backend forced (CORRAL_BACKEND=os).
# The fixture's configs are deselected there: the main pass ran them already.
# An environment that picks a lane itself (CORRAL_BACKEND or CORRAL_OPENAT2
# set, as CI's lanes do) or CORRAL_LANES=0 runs the main pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
bash scripts/setup_conformance.sh  # MCP clients for tests/e2e (made once, then reused)
.venv/bin/python -m pytest "$@"

if [ $# -eq 0 ] && [ -z "${CORRAL_BACKEND:-}${CORRAL_OPENAT2:-}" ] && [ "${CORRAL_LANES:-1}" != 0 ]; then
    core=()
    for dir in tests/contained tests/tools tests/security; do
        if [ -d "$dir" ]; then core+=("$dir"); fi
    done
    fixture_configs="not os-openat2 and not os-walk and not native-openat2 and not native-walk"
    echo "== lane: openat2 disabled (CORRAL_OPENAT2=0): ${core[*]}"
    CORRAL_OPENAT2=0 .venv/bin/python -m pytest -q -p no:cacheprovider -k "$fixture_configs" "${core[@]}"
    echo "== lane: os backend only (CORRAL_BACKEND=os): ${core[*]}"
    CORRAL_BACKEND=os .venv/bin/python -m pytest -q -p no:cacheprovider -k "$fixture_configs" "${core[@]}"
fi
