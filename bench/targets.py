"""Issue 28's targets, checked against one run's figures: one line each, PASS or MISS.

Figures, not a test: ``bench/run.py`` prints this block at the end of its report so a
run after each change to the request path says at once which targets it meets. A
figure the run did not measure (a peer left out, the guard A/B skipped) reads "not
measured", never PASS. Every ratio is taken within the run (best ÷ best, as the
report's tables).

The definitions:

- stdio ``x floor``: trio_mcp's req/s ÷ the Trio floor's (``bench/peers/ceiling.py
  stdio-tasks``), ``echo`` and ``search``; the server-CPU ratio (floor µs ÷ trio_mcp
  µs) is printed beside it, steadier on a busy machine.
- own work: (trio_mcp µs - Trio floor µs) ÷ trio_mcp µs of server CPU per call: the
  share of a call that is trio_mcp's own (parsing, checks, decoding, the reply
  guard, redaction, receipt, encoding) rather than the structure under it.
- p99 ratios: trio_mcp's p99 ÷ ``mcp`` 2.3.0's, each tool, same transport.
- HTTP ``x bare app``: trio_mcp's req/s ÷ the bare ASGI app's on Hypercorn-Trio.
- import: the median of ``python -c STATEMENT`` minus the median of ``import trio``,
  in CPU time (the child's user + system; wall time beside it): a busy neighbour
  stretches an import's wall time, hardly its CPU time.
- 1,000 tools: declaring them, ``Server(...)`` and the first ``tools/list`` page
  (``bench/catalog.py``).
- guards: ``bench/guards.py``, the added server CPU per call of each guard ÷ the
  call without it (A/B, interleaved).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

NOT_MEASURED = "not measured"


class Run(Protocol):
    """What a peer's best repeat exposes (``load.LoadResult``)."""

    @property
    def rate(self) -> float: ...

    def percentile(self, share: float) -> float: ...


class Row(Protocol):
    """Every repeat of one peer, transport and tool (``run.Row``)."""

    cpu_us: list[float]

    def best(self) -> Run: ...


@dataclass(frozen=True)
class Names:
    """The peers' names as the report's rows are keyed."""

    ceiling: str
    floor: str
    target: str
    reference: str


Rows = Mapping[tuple[str, str, str], Row]


@dataclass(frozen=True)
class Line:
    """One target: what it asks, what the run measured, and whether that meets it."""

    target: str
    figure: str
    met: bool | None  # None: not measured

    def render(self) -> str:
        status = {True: "PASS", False: "MISS", None: "-   "}[self.met]
        return f"{status}  {self.target:<44} {self.figure}"


def _cpu(row: Row | None) -> float | None:
    return min(row.cpu_us) if row is not None and row.cpu_us else None


def _rate(row: Row | None) -> float | None:
    return row.best().rate if row is not None else None


def _p99(row: Row | None) -> float | None:
    return row.best().percentile(0.99) if row is not None else None


def _all(checks: Sequence[bool | None]) -> bool | None:
    """Met when every part is, unmeasured when any part is."""
    if not checks or any(check is None for check in checks):
        return None
    return all(checks)


def stdio_floor(rows: Rows, names: Names) -> list[Line]:
    """trio_mcp ≥ 0.7x the Trio floor (echo, search); own work ≤ 0.43x of the total."""
    lines = []
    for tool in ("echo", "search"):
        ours = rows.get((names.target, "stdio", tool))
        floor = rows.get((names.floor, "stdio", tool))
        rate, base = _rate(ours), _rate(floor)
        mine, theirs = _cpu(ours), _cpu(floor)
        if not (rate and base and mine and theirs):
            lines.append(Line(f"stdio {tool} >= 0.70x Trio floor", NOT_MEASURED, None))
            lines.append(Line(f"stdio {tool} own work <= 0.43x", NOT_MEASURED, None))
            continue
        lines.append(
            Line(
                f"stdio {tool} >= 0.70x Trio floor",
                f"{rate / base:.2f}x req/s ({theirs / mine:.2f}x by server CPU: "
                f"{mine:,.0f} vs {theirs:,.0f} µs/call)",
                rate / base >= 0.7,
            )
        )
        own = (mine - theirs) / mine
        lines.append(
            Line(
                f"stdio {tool} own work <= 0.43x",
                f"{own:.2f}x ({mine - theirs:,.0f} of {mine:,.0f} µs/call)",
                own <= 0.43,
            )
        )
    return lines


def p99_ratio(rows: Rows, names: Names, transport: str, limit: float) -> Line:
    """trio_mcp's p99 ÷ mcp's for every tool, at most ``limit``."""
    label = f"{'stdio' if transport == 'stdio' else 'HTTP'} p99 <= {limit:.2f}x mcp's"
    parts, checks = [], []
    for tool in ("echo", "add", "search"):
        ours = _p99(rows.get((names.target, transport, tool)))
        theirs = _p99(rows.get((names.reference, transport, tool)))
        if ours is None or not theirs or ours != ours or theirs != theirs:
            return Line(label, NOT_MEASURED + " (needs the mcp peer)", None)
        parts.append(f"{tool} {ours / theirs:.2f}")
        checks.append(ours / theirs <= limit)
    return Line(label, ", ".join(parts), _all(checks))


def http_ceiling(rows: Rows, names: Names) -> Line:
    """trio_mcp ≥ 0.95x the bare app on Hypercorn-Trio, echo, add and search."""
    label = "HTTP >= 0.95x bare app (echo, add, search)"
    parts, checks = [], []
    for tool in ("echo", "add", "search"):
        ours = rows.get((names.target, "http", tool))
        bare = rows.get((names.ceiling, "http", tool))
        rate, base, mine, theirs = _rate(ours), _rate(bare), _cpu(ours), _cpu(bare)
        if not (rate and base and mine and theirs):
            return Line(label, NOT_MEASURED, None)
        parts.append(f"{tool} {rate / base:.2f} (CPU {theirs / mine:.2f})")
        checks.append(rate / base >= 0.95)
    return Line(label, "req/s: " + ", ".join(parts), _all(checks))


def imports(times: Mapping[str, Mapping[str, float]]) -> list[Line]:
    """``import trio_mcp`` and ``from trio_mcp import Server, tool`` ≤ trio + 50 ms."""
    base = times.get("import trio")
    lines = []
    for statement in ("import trio_mcp", "from trio_mcp import Server, tool"):
        label = f"{statement} <= trio + 50 ms"
        got = times.get(statement)
        if base is None or got is None:
            lines.append(Line(label, NOT_MEASURED, None))
            continue
        cpu = got["cpu"] - base["cpu"]
        wall = got["wall"] - base["wall"]
        lines.append(Line(label, f"{cpu:+.0f} ms CPU ({wall:+.0f} ms wall)", cpu <= 50))
    return lines


def catalog(figures: Mapping[str, Any]) -> Line:
    """1,000 tools declared and served in under 0.3 s."""
    label = "1,000 tools declared and served < 0.3 s"
    if not figures or "error" in figures:
        return Line(label, figures.get("error", NOT_MEASURED), None)
    total = figures["declare_ms"] + figures["build_ms"] + figures["first_page_ms"]
    return Line(
        label,
        f"{total / 1e3:.2f} s (declare {figures['declare_ms']:,.0f} ms, Server(...) "
        f"{figures['build_ms']:,.0f} ms, first page {figures['first_page_ms']:.1f} ms)",
        total < 300,
    )


#: The guards of ``bench/guards.py``: its key, the target's label, the limit.
GUARDS = (
    ("jwt", "JWT verification <= 10% of an HTTP call", 0.10),
    ("jwt-fresh", "  same, a new token every call", 0.10),
    ("rate-limit", "rate limit <= 5% of an HTTP call", 0.05),
    ("metrics-otel", "metrics (OTel SDK) <= 5% of an HTTP call", 0.05),
    ("metrics-prometheus", "metrics (metrics_path) <= 5% of an HTTP call", 0.05),
    ("redaction", "redaction <= 5% of a stdio call", 0.05),
)


def guards(figures: Mapping[str, Any]) -> list[Line]:
    """Each guard's added server CPU per call, as a share of the call without it."""
    if "error" in figures:
        return [Line("guards (bench/guards.py)", f"failed: {figures['error']}", None)]
    lines = []
    for key, label, limit in GUARDS:
        got = figures.get(key)
        if got is None:
            lines.append(Line(label, NOT_MEASURED, None))
            continue
        added = got["cpu_added"]
        lines.append(
            Line(
                label,
                f"{added:+.1%} ±{got['error']:.1%} server CPU ({got['cpu_a']:,.0f} -> "
                f"{got['cpu_b']:,.0f} µs/call, {got['case']}); throughput "
                f"{got['rate_ratio']:.2f}x",
                added <= limit,
            )
        )
    return lines


def summary(
    rows: Rows,
    names: Names,
    times: Mapping[str, Mapping[str, float]],
    catalog_figures: Mapping[str, Any],
    guard_figures: Mapping[str, Any],
) -> list[str]:
    """The whole block, as Markdown (a fenced block, so it reads the same printed)."""
    lines: list[Line] = [
        *stdio_floor(rows, names),
        p99_ratio(rows, names, "stdio", 0.10),
        http_ceiling(rows, names),
        p99_ratio(rows, names, "http", 1 / 3),
        *imports(times),
        catalog(catalog_figures),
        *guards(guard_figures),
    ]
    met = sum(line.met is True for line in lines)
    missed = sum(line.met is False for line in lines)
    render: Callable[[Line], str] = Line.render
    return [
        "## Issue 28's targets in this run",
        "",
        "```",
        *map(render, lines),
        f"{met} met, {missed} missed, {len(lines) - met - missed} not measured",
        "```",
    ]
