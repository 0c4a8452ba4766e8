#!/usr/bin/env bash
# The MCP conformance clients the tests drive `corral serve` with, made once
# and reused (each part is skipped when its stamp matches the pinned version):
#
#   $DIR/sdk1   a venv with the official Python SDK, 1.x line   (mcp==$SDK1)
#   $DIR/sdk2   a venv with the official Python SDK, 2.x line   (mcp==$SDK2)
#   $DIR/node   npm packages: MCP Inspector (its CLI, `inspector --cli`),
#               the reference server @modelcontextprotocol/server-filesystem,
#               which benchmarks/bench_mcp.py measures corral against, the
#               official conformance suite @modelcontextprotocol/conformance
#               and supergateway (stdio to Streamable HTTP), which
#               tests/e2e/test_http_gateway.py runs together (docs/http.md),
#               the TypeScript SDK (@modelcontextprotocol/sdk), whose
#               client tests/e2e/test_serve_lifecycle.py closes mid-call,
#               and gpt-tokenizer (o200k, its vocabulary in the package),
#               which benchmarks/bench_tokens.py and
#               tests/e2e/test_mcp_tokens.py count what a model reads with
#
# DIR is $CORRAL_CONFORMANCE_DIR or .conformance/ in the repository (ignored
# by git).  Arguments name the parts to make (sdk1, sdk2, node; default all):
# benchmarks/bench_mcp.py asks for `node` only.  None of this is a run-time need of corral: `corral serve` speaks
# MCP with the standard library only.  Called by scripts/test.sh; safe to
# run by hand.  With $UV naming a uv (scripts/test.sh sets it) the venvs are
# made by uv, from its cache; else by venv and pip.  Exits non-zero if a part
# cannot be made (the tests that need
# it then fail saying so).
set -euo pipefail
cd "$(dirname "$0")/.."

SDK1="1.30.0"
SDK2="2.3.0"
INSPECTOR="2.12.0"
REFERENCE="2026.8.31"
CONFORMANCE_SUITE="0.1.13"  # the newest that runs on Node 20 (later ones need fs.globSync, Node 22)
SUPERGATEWAY="4.0.0"
TS_SDK="1.32.2"
TOKENIZER="4.0.0"
DIR="${CORRAL_CONFORMANCE_DIR:-$PWD/.conformance}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$DIR"

sdk_venv() {  # name version
    local venv="$DIR/$1" want="mcp==$2"
    if [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$want" ] && [ -x "$venv/bin/python" ]; then
        return 0
    fi
    rm -rf "$venv"
    if [ -n "${UV:-}" ]; then  # scripts/test.sh's uv: a venv from its cache in seconds
        "$UV" venv -q --python "$(command -v "$PYTHON")" "$venv"
        "$UV" pip install -q --python "$venv/bin/python" "$want" jsonschema
    else
        "$PYTHON" -m venv "$venv"
        # (this machine's pip config names index folders that may be absent: not our business)
        "$venv/bin/python" -m pip install -q "$want" jsonschema \
            2> >(grep -v "is neither a file nor a directory" >&2)
    fi
    echo "$want" > "$venv/.stamp"
    echo "conformance: made $venv ($want)"
}

node_packages() {
    local node="$DIR/node"
    local want="@modelcontextprotocol/inspector@$INSPECTOR @modelcontextprotocol/server-filesystem@$REFERENCE"
    want="$want @modelcontextprotocol/conformance@$CONFORMANCE_SUITE supergateway@$SUPERGATEWAY"
    want="$want @modelcontextprotocol/sdk@$TS_SDK gpt-tokenizer@$TOKENIZER"
    if [ "$(cat "$node/.stamp" 2>/dev/null)" = "$want" ]; then
        return 0
    fi
    if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
        echo "conformance: npm/node not found: MCP Inspector, the reference server, the conformance suite, supergateway and the tokenizer are missing" >&2
        return 1
    fi
    rm -rf "$node"
    mkdir -p "$node"
    # shellcheck disable=SC2086  # several package specs
    INSPECTOR_SKIP_CLIENT_INSTALL=1 npm install --prefix "$node" --no-audit --no-fund \
        --loglevel=error $want >/dev/null
    echo "$want" > "$node/.stamp"
    echo "conformance: installed $want into $node"
}

status=0
for part in "${@:-sdk1 sdk2 node}"; do
    for one in $part; do
        case "$one" in
            sdk1) sdk_venv sdk1 "$SDK1" || status=1 ;;
            sdk2) sdk_venv sdk2 "$SDK2" || status=1 ;;
            node) node_packages || status=1 ;;
            *) echo "setup_conformance.sh: unknown part $one (sdk1, sdk2, node)" >&2; status=2 ;;
        esac
    done
done
exit $status
