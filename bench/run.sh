#!/usr/bin/env bash
# Run the shared benchmark harness (../shared/bench, read-only) with trio_mcp as a peer.
#
#   bash bench/run.sh            full run (~8 min): mcp, fastmcp, raw-Trio ceilings, trio_mcp
#   bash bench/run.sh --quick    ~1 min smoke run of the harness
#
# The harness is copied to a scratch folder (it writes results next to itself); its report
# is copied back to bench/results/. Traffic stays on 127.0.0.1; servers are stopped by PID.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="${SHARED_BENCH:-$ROOT/../shared/bench}"
[[ -d "$SHARED" ]] || { echo "bench: no harness at $SHARED" >&2; exit 2; }
source "$ROOT/scripts/bootstrap"
SCRATCH="$(mktemp -d /tmp/trio-mcp-bench.XXXXXX)"
cp -r "$SHARED/." "$SCRATCH/"
sed "s|{trio_mcp}|$ROOT|g" "$ROOT/bench/trio_mcp.toml" > "$SCRATCH/trio_mcp.toml"
(cd "$SCRATCH" && bash run_all.sh --extra-peers trio_mcp.toml "$@")
mkdir -p "$ROOT/bench/results"
cp "$SCRATCH"/results/latest.* "$ROOT/bench/results/" 2>/dev/null || true
echo "bench: report in bench/results/latest.md (scratch copy: $SCRATCH)"
