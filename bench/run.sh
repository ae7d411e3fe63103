#!/usr/bin/env bash
# bench/run.sh - the benchmark, from a clone of this repository alone.
#
#   bash bench/run.sh            full run (about 5-15 min on 2 cores): ceilings, trio_mcp,
#                                mcp 2.3.0, fastmcp 4.1.6; stdio and HTTP; import,
#                                start-up, peak RSS; the 1,000-tool catalog; the guards'
#                                A/B (bench/guards.py); issue 28's targets, PASS or MISS
#   bash bench/run.sh --quick    under two minutes: small sizes, one repeat, no fastmcp,
#                                fewer start-up, import, catalog and guard rounds
#   bash bench/run.sh --help     every option (bench/run.py)
#   bash bench/run.sh --instructions [--quick] [--only TEXT]
#                                instructions per call by valgrind instead (bench/
#                                instructions.py: stdio and in-process HTTP rows against
#                                the Trio floor and the bare app; 3-5 min, --quick about
#                                half); the figure a busy machine cannot move
#
# Builds bench/.venv first (bench/venv.sh), then prints the table; the report is also
# kept in bench/results/latest.{md,json} (git-ignored).
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/venv.sh
source "$BENCH/venv.sh"
if [[ "${1:-}" == "--instructions" ]]; then
    exec "$BENCH/.venv/bin/python" "$BENCH/instructions.py" "${@:2}"
fi
exec "$BENCH/.venv/bin/python" "$BENCH/run.py" "$@"
