#!/usr/bin/env bash
# bench/venv.sh - create or update bench/.venv (git-ignored); idempotent and quick when
# nothing changed. Sourced by bench/run.sh, or run by hand:
#
#   bash bench/venv.sh
#
# The venv holds the peers (mcp, fastmcp), the ceilings' stack (trio, hypercorn), the
# profilers and trio_mcp itself, installed editable from this clone with the extras the
# guards' A/B needs (http, auth, metrics; bench/guards.py). It is rebuilt when
# bench/requirements.txt or pyproject.toml change (content hash in .venv/.bench.stamp).

_bench_venv() (
    set -euo pipefail
    local bench root venv stamp want py
    bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    root="$(dirname "$bench")"
    venv="$bench/.venv"
    stamp="$venv/.bench.stamp"
    exec 9>"${TMPDIR:-/tmp}/trio-mcp-bench-venv.$(printf '%s' "$bench" | cksum | cut -d' ' -f1).lock"
    flock -w 900 9 || { echo "bench: another bench venv set-up is still running" >&2; exit 1; }
    if ! "$venv/bin/python" -c '' 2>/dev/null; then
        py="${PYTHON:-python3}"
        "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
            || { echo "bench: $py is too old; need Python >= 3.11" >&2; exit 1; }
        echo "bench: creating bench/.venv with $("$py" --version 2>&1)" >&2
        rm -rf "$venv"
        "$py" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
    fi
    want="$(cat "$bench/requirements.txt" "$root/pyproject.toml" | sha256sum | cut -c1-64)"
    if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
        echo "bench: installing the peers and trio_mcp into bench/.venv" >&2
        rm -f "$stamp"
        "$venv/bin/python" -m pip install --quiet -r "$bench/requirements.txt" \
            -e "$root[http,auth,metrics]" >&2
        printf '%s\n' "$want" >"$stamp"
    fi
)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    _bench_venv
else
    _bench_venv || return 1
fi
