#!/usr/bin/env bash
# The README's test command: corral's whole test suite, every lane, one total.
#
#   bash scripts/test.sh            # every lane; ends with "=== N passed, ... in Xs ==="
#   bash scripts/test.sh ARGS...    # only `pytest ARGS...` in the main venv
#
# Set-up (once per run, shared by the lanes): the venv .venv with corral
# installed editable with its test extra (this builds corral._native wherever
# a C compiler is present; CORRAL_NATIVE=0 skips it), and .venv-integrations
# with corral beside the agent frameworks corral.integrations adapts
# (openai-agents, pydantic-ai, langchain-core, anthropic) and the MCP adapters
# that pin mcp<2 (langchain-mcp-adapters, smolagents[mcp]): installing them
# together is the proof that corral conflicts with none of them; it is made
# in the integrations lane's job, beside the main lane.  uv ($UV, else from
# PyPI into .venv) makes the venvs; its and pip's caches are reused.  The
# MCP conformance clients (SDK 1.x and 2.x venvs, Inspector from npm) come
# from scripts/setup_conformance.sh, cached under .conformance/.
#
# Lanes:
#   main          every test but tests/integrations; tests taking the
#                 `make_root` fixture run on every backend config present
#                 (os/native x openat2/walk)
#   openat2-off   tests/contained, tools, security with CORRAL_OPENAT2=0 (the
#                 walk does everything), for tests using the default backend
#   os-only       the same with CORRAL_BACKEND=os
#   integrations  tests/integrations in .venv-integrations (beside the three
#                 lanes above, its report printed after theirs)
#   sanitize      scripts/sanitize.py: the native module built with ASan and
#                 UBSan, the native tests and a bounded fuzz of every native
#                 function against it; any sanitizer report fails the lane
# The fixture's configs are deselected in the two extra lanes (the main lane
# ran them), and so are tests marked `no_backend` (no file touched) or
# `own_backend` (the backend named by the test, whatever the lane says); the
# os-only lane leaves out `every_config` too (tests that run every config
# CORRAL_BACKEND leaves: there, the main lane's os configs again).  An
# environment that picks a lane itself (CORRAL_BACKEND or CORRAL_OPENAT2
# set, as CI's lanes do) or CORRAL_LANES=0 runs main only.
#
# Each lane prints pytest's own report (header, progress, failures, its
# "N passed in Xs" line); the totals come from the lanes' JUnit files, in one
# summary at the end whose last line has pytest's form.  Race statistics go to
# $CORRAL_TEST_OUT/race-stats.jsonl (default .test-out/), not the terminal.
# CORRAL_TEST_WORKERS sets pytest-xdist's worker count (default: auto, one
# per core; 0 runs in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS

out=${CORRAL_TEST_OUT:-.test-out}
rm -rf "$out" && mkdir -p "$out"
out=$(cd "$out" && pwd)
export CORRAL_RACE_STATS="$out/race-stats.jsonl"

say() { printf '== %s\n' "$*"; }

# -- set-up -------------------------------------------------------------------
say "set-up: .venv (corral[test]) and .venv-integrations"
python3 -m venv .venv
# $UV names a uv to use (.ci/run passes its tools venv's: pip need not install
# a second one here); else uv comes from PyPI into .venv
if [ -z "${UV:-}" ] || ! "$UV" --version >/dev/null 2>&1; then
    if ! .venv/bin/python -m uv --version >/dev/null 2>&1; then
        .venv/bin/python -m pip install -q --upgrade pip uv
    fi
    UV=$PWD/.venv/bin/uv
fi
export UV  # scripts/setup_conformance.sh makes its venvs with it
uv() { "$UV" "$@"; }
conformance=
if [ -f scripts/setup_conformance.sh ]; then  # the MCP clients tests/e2e drive (cached)
    # made beside corral's own install (npm waits on the network, the install
    # on the C compiler)
    bash scripts/setup_conformance.sh > "$out/conformance.log" 2>&1 &
    conformance=$!
fi
uv pip install -q --python .venv/bin/python -e '.[test]'
if [ -n "$conformance" ]; then
    # if a client cannot be made, the tests that need it fail and say so; the rest runs
    wait "$conformance" || say "conformance set-up failed (see below)"
    cat "$out/conformance.log"
fi
lanes_on=0
if [ $# -eq 0 ] && [ -z "${CORRAL_BACKEND:-}${CORRAL_OPENAT2:-}" ] && [ "${CORRAL_LANES:-1}" != 0 ]; then
    lanes_on=1
fi
integrations_venv() {  # made beside the main lane, in the integrations lane's job
    [ -x .venv-integrations/bin/python ] || uv venv -q --python .venv/bin/python .venv-integrations
    uv pip install -q --python .venv-integrations/bin/python -e '.[test-integrations]' \
        langchain-mcp-adapters 'smolagents[mcp]'
}
say "set-up done in $((SECONDS - started)) s"

workers=${CORRAL_TEST_WORKERS:-auto}
xdist=()
if [ "$workers" != 0 ]; then xdist=(-n "$workers"); fi

if [ $# -gt 0 ]; then  # a developer's own selection: plain pytest
    exec .venv/bin/python -m pytest "$@"
fi

# -- lanes ----------------------------------------------------------------------
status=0
lane() {  # lane NAME PYTHON [pytest args...]
    local name=$1 python=$2
    shift 2
    # the load says whether a lane's time is its own (leftover processes of
    # an earlier lane would show here)
    say "lane $name (load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown))"
    "$python" -m pytest -ra -p no:cacheprovider --junitxml="$out/$name.xml" "$@" \
        || status=1
}

if [ "$lanes_on" = 1 ]; then
    # the integrations lane's venv is made, and the lane run, beside the main
    # lane and the two after it (its tests mostly wait on the frameworks'
    # imports and event loops: about 20 s of CPU); its report is printed when
    # those are done
    (integrations_venv && say "integrations venv made at $((SECONDS - started)) s" \
        && lane integrations .venv-integrations/bin/python tests/integrations
     exit $((status || $?))) > "$out/integrations.log" 2>&1 &
    integrations=$!
fi
lane main .venv/bin/python "${xdist[@]}" --ignore=tests/integrations
if [ "$lanes_on" = 1 ]; then
    core=()
    for dir in tests/contained tests/tools tests/security; do
        if [ -d "$dir" ]; then core+=("$dir"); fi
    done
    fixture_configs="not os-openat2 and not os-walk and not native-openat2 and not native-walk"
    CORRAL_OPENAT2=0 lane openat2-off .venv/bin/python "${xdist[@]}" -k "$fixture_configs" \
        -m "not no_backend and not own_backend" "${core[@]}"
    CORRAL_BACKEND=os lane os-only .venv/bin/python "${xdist[@]}" -k "$fixture_configs" \
        -m "not no_backend and not own_backend and not every_config" "${core[@]}"
    wait "$integrations" || status=1
    cat "$out/integrations.log"
    say "lane sanitize"
    .venv/bin/python scripts/sanitize.py -ra --junitxml="$out/sanitize.xml" || status=1
fi

# -- one summary --------------------------------------------------------------
.venv/bin/python scripts/test_summary.py --seconds $((SECONDS - started)) "$out"/*.xml \
    || status=1
exit $status
