"""Run every peer under the same load and print the comparison table.

    bash bench/run.sh [--quick] [--repeat N] [--peers trio_mcp,ceiling] ...

(run.sh builds bench/.venv first, then runs this file with it.) Peers: the ceilings
(a raw Trio stdio loop, a bare ASGI app on Hypercorn's Trio worker), the Trio floor
(the raw loop with a task, cancel scope and limiter slot per request), trio_mcp
(``examples/bench_server.py``), ``mcp`` 2.3.0 and ``fastmcp`` 4.1.6, all with the same
three tools. Repeats are interleaved (peer A, B, C, then again) and the best repeat is
shown, since noise on a shared machine only slows a run down; ratios are best ÷ best
in the same run. Everything goes to 127.0.0.1; servers are stopped by their PID. The
report is printed and kept in bench/results/latest.{md,json} (git-ignored), with each
server's stderr in bench/results/raw/.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from load import (
    ARGUMENTS,
    LoadError,
    LoadResult,
    StdioPeer,
    check_reply,
    cpu_seconds,
    http_ask,
    http_run,
    peak_rss_mib,
    request_body,
)
from targets import Names, summary

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
RESULTS = BENCH / "results"
PY = sys.executable
TOOLS = tuple(ARGUMENTS)
SERVER_CPU = 1  # the server's processor when there are two or more; the client gets 0
#: The servers' environment. Without bytecode caches trio_mcp (an editable install,
#: never compiled by pip) would compile its sources on every start while the peers'
#: site-packages load from the .pyc files pip wrote: main() compiles trio_mcp first.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


@dataclass
class Peer:
    """A server under test: command lines only, ``{port}`` filled in for HTTP."""

    name: str
    stdio: list[str]
    http: list[str]
    imports: str
    role: str = ""  # "ceiling", "reference" (ratios are taken to it) or ""
    quick: bool = True  # run by --quick too


PEERS = [
    Peer(
        "ceiling (raw Trio / Hypercorn-Trio)",
        [PY, "bench/peers/ceiling.py", "stdio"],
        [PY, "bench/peers/ceiling.py", "http", "{port}"],
        "import json, trio, hypercorn.trio",
        "ceiling",
    ),
    Peer(
        "Trio floor (a task per request, stdio)",
        [PY, "bench/peers/ceiling.py", "stdio-tasks"],
        [],
        "import json, trio",
    ),
    Peer(
        "trio_mcp",
        [PY, "examples/bench_server.py"],
        [PY, "examples/bench_server.py", "--http", "--port", "{port}"],
        "import trio_mcp",
    ),
    Peer(
        "mcp 2.3.0 (MCPServer)",
        [PY, "bench/peers/mcp_sdk.py", "stdio"],
        [PY, "bench/peers/mcp_sdk.py", "http", "{port}"],
        "from mcp.server import MCPServer",
        "reference",
    ),
    Peer(
        "fastmcp 4.1.6 (FastMCP)",
        [PY, "bench/peers/fastmcp_peer.py", "stdio"],
        [PY, "bench/peers/fastmcp_peer.py", "http", "{port}"],
        "from fastmcp import FastMCP",
        quick=False,
    ),
]
#: The peer the issue's targets are about.
TARGET = "trio_mcp"
FLOORS = {
    "python -c pass": "pass",
    "import trio": "import trio",
    "from trio_mcp import Server, tool": "from trio_mcp import Server, tool",
}


@dataclass
class Row:
    """Every repeat of one peer, transport and tool."""

    runs: list[LoadResult] = field(default_factory=list)
    cpu_us: list[float] = field(default_factory=list)

    def best(self) -> LoadResult:
        """The fastest repeat (noise only slows a run down)."""
        return max(self.runs, key=lambda run: run.rate)


@dataclass
class Settings:
    """Sizes of one bench run."""

    calls: int
    http_calls: int
    inflight: int
    warmup: int
    repeat: int
    time_limit: float
    starts: int
    imports: int
    quick: bool = False


@dataclass
class Found:
    """What the run measured besides the loads: imports, the catalog, the guards."""

    imports: dict[str, dict[str, float]]  # statement or peer -> wall, cpu medians (ms)
    catalog: dict[str, Any]
    guards: dict[str, Any]


def cpu_times() -> list[int]:
    """The machine's aggregate CPU jiffies from /proc/stat (user ... steal)."""
    with open("/proc/stat") as stat:
        return [int(x) for x in stat.readline().split()[1:9]]


def noise(before: list[int], after: list[int]) -> str:
    """Steal and the machine's busy share between two ``cpu_times`` readings."""
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta) or 1
    idle = delta[3] + delta[4]
    return (
        f"During the run the machine's CPUs were {1 - idle / total:.0%} busy "
        f"(all processes, ours included) and the hypervisor stole "
        f"{delta[7] / total:.1%}; load average at the end "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs."
    )


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pin_server() -> None:
    """In the child: run the server on its own processor, apart from the client."""
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {SERVER_CPU})


def spawn(argv: list[str], log_name: str, stdio: bool) -> subprocess.Popen[bytes]:
    """Start a server from the repository root, its stderr kept in results/raw/."""
    (RESULTS / "raw").mkdir(parents=True, exist_ok=True)
    with open(RESULTS / "raw" / f"{log_name}.log", "ab") as log:
        return subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stderr=log,
            env=ENV,
            preexec_fn=pin_server,
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server we started, by its PID: EOF or SIGINT first, then harder."""
    if proc.stdin is not None:
        proc.stdin.close()
    elif proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            proc.wait(5)
            break
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def wait_http(proc: subprocess.Popen[bytes], port: int, limit: float = 30.0) -> float:
    """Poll until the server answers one checked echo call; seconds since ``start``."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LoadError(
                f"the HTTP server exited ({proc.returncode}) before answering"
            )
        try:
            message = http_ask(port, request_body("echo", 0), "echo")
        except (OSError, EOFError, ValueError):
            time.sleep(0.01)
            continue
        if message and not check_reply("echo", message):
            return time.monotonic()
        raise LoadError(f"wrong first answer over HTTP: {message!r}")
    raise LoadError(f"the HTTP server did not answer within {limit} s")


def measure(
    peer: Peer,
    transport: str,
    settings: Settings,
    rows: dict[tuple[str, str, str], Row],
) -> float:
    """One repeat of one peer on one transport: every tool; returns peak RSS in MiB."""
    port = free_port()
    argv = [arg.replace("{port}", str(port)) for arg in getattr(peer, transport)]
    proc = spawn(argv, f"{peer.name.split()[0]}-{transport}", transport == "stdio")
    try:
        stdio = StdioPeer(proc) if transport == "stdio" else None
        if stdio is None:
            wait_http(proc, port)
        for tool in TOOLS:
            calls = settings.calls if stdio else settings.http_calls

            def load(count: int, tool: str = tool) -> LoadResult:
                if stdio is not None:
                    return stdio.run(
                        tool, count, settings.inflight, settings.time_limit
                    )
                return http_run(
                    port, tool, count, settings.inflight, settings.time_limit
                )

            load(settings.warmup)
            before = cpu_seconds(proc.pid)
            result = load(calls)
            used = cpu_seconds(proc.pid) - before
            row = rows.setdefault((peer.name, transport, tool), Row())
            row.runs.append(result)
            row.cpu_us.append(used / max(result.calls, 1) * 1e6)
            print(
                f"  {peer.name[:24]:24} {transport:5} {tool:6} {result.rate:9,.0f} req/s"
                f"  p99 {result.percentile(0.99) * 1e3:6.2f} ms  errors {result.errors}",
                file=sys.stderr,
            )
        return peak_rss_mib(proc.pid)
    finally:
        stop(proc)


def start_to_answer(peer: Peer, transport: str) -> float:
    """Seconds from spawning the server to its first checked ``tools/call`` reply."""
    port = free_port()
    argv = [arg.replace("{port}", str(port)) for arg in getattr(peer, transport)]
    begin = time.monotonic()
    proc = spawn(argv, f"{peer.name.split()[0]}-start", transport == "stdio")
    try:
        if transport == "stdio":
            message = StdioPeer(proc).ask(request_body("echo", 0), timeout=30)
            if check_reply("echo", message):
                raise LoadError(f"wrong first answer over stdio: {message!r}")
            return time.monotonic() - begin
        return wait_http(proc, port) - begin
    finally:
        stop(proc)


def import_ms(statement: str) -> tuple[float, float]:
    """Wall and CPU time (user + system) of ``python -c statement``, in ms.

    A fresh interpreter each time. The CPU time is the child's own, from
    ``getrusage``: other processes on a shared machine stretch the wall time of an
    import, hardly its CPU time.
    """
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    subprocess.run([PY, "-c", statement], cwd=ROOT, env=ENV, check=True)
    wall = (time.perf_counter() - begin) * 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1e3
    return wall, cpu


def run_catalog(rounds: int) -> dict[str, Any]:
    """The 1,000-tool catalog figures from bench/catalog.py, run in its own process.

    A failure is reported in the table rather than losing the whole run's figures.
    """
    try:
        out = subprocess.run(
            [PY, str(BENCH / "catalog.py"), "--json", "--rounds", str(rounds)],
            cwd=ROOT,
            env=ENV,
            check=True,
            capture_output=True,
            timeout=600,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        detail = (exc.stderr or b"").decode(errors="replace").strip().splitlines()
        return {"error": detail[-1] if detail else repr(exc)}
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def versions() -> str:
    """The versions the figures depend on."""
    names = ["trio", "hypercorn", "h11", "mcp", "fastmcp", "uvicorn", "starlette"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)


def fmt(value: float, digits: int = 0) -> str:
    """A number for the table, '-' when missing."""
    if value != value or value is None:  # NaN
        return "-"
    return f"{value:,.{digits}f}"


def ratio(value: float, base: float) -> str:
    """``value ÷ base`` to two places, '-' when either is missing."""
    if not base or value != value or base != base:
        return "-"
    return f"{value / base:.2f}"


def summary_table(
    peers: list[Peer],
    rows: dict[tuple[str, str, str], Row],
    extras: dict[str, dict[str, float]],
    tool: str,
) -> list[str]:
    """The issue's table for one tool: one line per peer, ratios to the ceiling."""
    ceiling = next((p.name for p in peers if p.role == "ceiling"), "")
    lines = [
        f"| {tool} | stdio req/s | x ceiling | srv µs/call | stdio p99 ms "
        "| HTTP req/s | x ceiling | HTTP p99 ms | import ms "
        "| start→answer ms stdio / HTTP | peak RSS MiB stdio / HTTP |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for peer in peers:
        cells = [peer.name]
        for transport in ("stdio", "http"):
            row = rows.get((peer.name, transport, tool))
            base = rows.get((ceiling, transport, tool))
            if row is None:
                cells += ["-"] * (4 if transport == "stdio" else 3)
                continue
            best = row.best()
            cells.append(fmt(best.rate))
            cells.append(ratio(best.rate, base.best().rate) if base else "-")
            if transport == "stdio":
                cells.append(fmt(min(row.cpu_us)))
            cells.append(fmt(best.percentile(0.99) * 1e3, 2))
        extra = extras.get(peer.name, {})
        cells.append(fmt(extra.get("import_ms", float("nan"))))
        cells.append(
            f"{fmt(extra.get('start_stdio', float('nan')))} / "
            f"{fmt(extra.get('start_http', float('nan')))}"
        )
        cells.append(
            f"{fmt(extra.get('rss_stdio', float('nan')), 1)} / "
            f"{fmt(extra.get('rss_http', float('nan')), 1)}"
        )
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def detail_table(peers: list[Peer], rows: dict[tuple[str, str, str], Row]) -> list[str]:
    """Every peer, transport and tool: best and median rate, latency, CPU, ratios."""
    ceiling = next((p.name for p in peers if p.role == "ceiling"), "")
    reference = next((p.name for p in peers if p.role == "reference"), "")
    lines = [
        "| peer | transport | tool | best req/s | median req/s | p50 ms | p99 ms | errors "
        "| x ceiling | x mcp | p99 ÷ mcp's | srv µs/call |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for peer in peers:
        for transport in ("stdio", "http"):
            for tool in TOOLS:
                row = rows.get((peer.name, transport, tool))
                if row is None:
                    continue
                best = row.best()
                top = rows.get((ceiling, transport, tool))
                ref = rows.get((reference, transport, tool))
                cells = [
                    peer.name,
                    transport,
                    tool,
                    fmt(best.rate),
                    fmt(statistics.median(run.rate for run in row.runs)),
                    fmt(best.percentile(0.5) * 1e3, 2),
                    fmt(best.percentile(0.99) * 1e3, 2),
                    str(sum(run.errors for run in row.runs)),
                    ratio(best.rate, top.best().rate) if top else "-",
                    ratio(best.rate, ref.best().rate) if ref else "-",
                    ratio(best.percentile(0.99), ref.best().percentile(0.99))
                    if ref
                    else "-",
                    fmt(min(row.cpu_us)),
                ]
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def report(
    peers: list[Peer],
    rows: dict[tuple[str, str, str], Row],
    extras: dict[str, dict[str, float]],
    found: Found,
    settings: Settings,
    argv: list[str],
    host: str,
) -> str:
    """The whole Markdown report."""
    errors = [
        f"- {name} {transport} {tool}: {run.errors} errors, first: {run.first_error}"
        for (name, transport, tool), row in rows.items()
        for run in row.runs
        if run.errors
    ]
    cpus = os.cpu_count() or 1
    lines = [
        f"# trio_mcp benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"Command: `{shlex.join(['bash', 'bench/run.sh', *argv])}`, commit {commit()}.",
        "",
        f"Python {platform.python_version()}, {cpus} CPUs"
        + (", server on CPU 1, client on CPU 0" if cpus >= 2 else "")
        + f". {versions()}.",
        f"stdio: {settings.calls} calls, HTTP: {settings.http_calls} calls, "
        f"{settings.inflight} in flight (HTTP: keep-alive connections), "
        f"{settings.warmup} warm-up calls per tool not counted; best of "
        f"{settings.repeat} interleaved repeats; p99 from the best repeat; srv µs/call "
        "= the server's CPU time (user + system) per call, lowest repeat. trio_mcp is "
        "byte-compiled first and the servers run without PYTHONDONTWRITEBYTECODE, "
        "so every peer loads from .pyc files.",
        "",
        f"{host} Noise slows runs down unevenly: compare ratios within one run, "
        "not absolute rates across runs.",
        "",
        *summary_table(peers, rows, extras, "echo"),
        "",
        "| floor | import ms | CPU ms |",
        "|---|---:|---:|",
        *[
            f"| `{name}` | {fmt(found.imports[name]['wall'])} "
            f"| {fmt(found.imports[name]['cpu'])} |"
            for name in FLOORS
            if name in found.imports
        ],
        "",
        *detail_table(peers, rows),
        "",
    ]
    catalog = found.catalog
    if "error" in catalog:
        lines += [f"1,000-tool catalog: failed ({catalog['error']}).", ""]
    elif catalog:
        lines += [
            f"1,000-tool catalog (trio_mcp): `Server(...)` built in "
            f"{catalog['build_ms']:,.0f} ms (declaring the tools: "
            f"{catalog['declare_ms']:,.0f} ms); `tools/list` over stdio, all "
            f"{catalog['pages']} pages: {catalog['list_ms']:,.1f} ms "
            f"(first page {catalog['first_page_ms']:,.2f} ms), median of "
            f"{catalog['rounds']}.",
            "",
        ]
    lines += guard_table(found.guards)
    lines += errors or ["Every reply was checked; none was wrong."]
    names = Names(
        ceiling=next((p.name for p in PEERS if p.role == "ceiling"), ""),
        floor=next((p.name for p in PEERS if p.name.startswith("Trio floor")), ""),
        target=TARGET,
        reference=next((p.name for p in PEERS if p.role == "reference"), ""),
    )
    lines += ["", *summary(rows, names, found.imports, catalog, found.guards)]
    return "\n".join(lines) + "\n"


def guard_table(guards: dict[str, Any]) -> list[str]:
    """The guards' A/B (bench/guards.py) as printed by it, or why it is missing."""
    if not guards:
        return []
    if "error" in guards:
        return [f"Guards' A/B: {guards['error']}.", ""]
    return [*guards.get("table", []), ""]


QUICK_HELP = """\
--quick: under two minutes on 2 shared cores (49-79 s at a load average of 4-9), so it
can follow every change to the request path. It runs the ceilings, the Trio floor,
trio_mcp and mcp 2.3.0 (for the p99 ratios): 1,000 stdio and 500 HTTP calls per tool,
100 warm-up calls, one repeat. It leaves out fastmcp (the full run has it) and the
other peers' start-up and import times; trio_mcp starts once per transport (not 5
times) and imports are the median of 5 (not 10); the catalog's pages are walked 5
times (not 20) and the guards' A/B runs 20 pairs of blocks (not 40, stdio blocks of
200 calls, not 400). Its figures are noisier than the full run's: quote the full run.

bash bench/run.sh --instructions [--quick] [--only TEXT] runs bench/instructions.py
instead: instructions per call under valgrind (stdio echo and search against the Trio
floor, the in-process HTTP app against the bare app), which the machine's load does
not move; its --help says how.
"""


def parse(argv: list[str]) -> tuple[argparse.Namespace, Settings]:
    """Command-line options and the run's sizes."""
    parser = argparse.ArgumentParser(
        description=__doc__,
        epilog=QUICK_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, fewer peers (see below)"
    )
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--calls", type=int, help="stdio calls per tool (5000)")
    parser.add_argument("--http-calls", type=int, help="HTTP calls per tool (3000)")
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--time-limit", type=float, default=60.0, help="per load (s)")
    parser.add_argument("--peers", help="comma-separated name prefixes to run")
    parser.add_argument("--no-catalog", action="store_true")
    parser.add_argument(
        "--no-guards", action="store_true", help="skip the guards' A/B (guards.py)"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    settings = Settings(
        calls=args.calls or (1000 if quick else 5000),
        http_calls=args.http_calls or (500 if quick else 3000),
        inflight=args.inflight,
        warmup=100 if quick else 300,
        repeat=args.repeat or (1 if quick else 3),
        time_limit=args.time_limit,
        starts=1 if quick else 5,
        imports=5 if quick else 10,
        quick=quick,
    )
    return args, settings


def chosen(args: argparse.Namespace, quick: bool) -> list[Peer]:
    """The peers to run: ``--peers`` prefixes, else all (quick: those marked so)."""
    if args.peers:
        prefixes = [p.strip() for p in args.peers.split(",")]
        return [p for p in PEERS if any(p.name.startswith(x) for x in prefixes)]
    return [p for p in PEERS if p.quick or not quick]


def load_peers(
    peers: list[Peer], settings: Settings
) -> tuple[dict[tuple[str, str, str], Row], dict[str, dict[str, float]]]:
    """Every peer on every transport it speaks, repeats interleaved."""
    rows: dict[tuple[str, str, str], Row] = {}
    extras: dict[str, dict[str, float]] = {peer.name: {} for peer in peers}
    for repeat in range(settings.repeat):
        print(f"bench: repeat {repeat + 1} of {settings.repeat}", file=sys.stderr)
        for peer in peers:
            for transport in ("stdio", "http"):
                if not getattr(peer, transport):
                    continue  # the peer does not speak it
                rss = measure(peer, transport, settings, rows)
                key = f"rss_{transport}"
                extras[peer.name][key] = max(extras[peer.name].get(key, 0.0), rss)
    return rows, extras


def start_and_import(
    peers: list[Peer], settings: Settings, extras: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Start-up times into ``extras``; the import medians (wall, CPU) by statement.

    Quick runs time trio_mcp's start-up and imports only (and the floors).
    """
    timed = [p for p in peers if not settings.quick or p.name == TARGET]
    for transport in ("stdio", "http"):
        for peer in timed:
            if not getattr(peer, transport):
                continue
            times = [start_to_answer(peer, transport) for _ in range(settings.starts)]
            extras[peer.name][f"start_{transport}"] = statistics.median(times) * 1e3
    statements = {peer.imports: peer.name for peer in timed}
    statements |= {statement: name for name, statement in FLOORS.items()}
    samples: dict[str, list[tuple[float, float]]] = {s: [] for s in statements}
    for _ in range(settings.imports):
        for statement in statements:
            samples[statement].append(import_ms(statement))
    medians = {
        label: {
            "wall": statistics.median(w for w, _ in samples[statement]),
            "cpu": statistics.median(c for _, c in samples[statement]),
        }
        for statement, label in statements.items()
    }
    for peer in timed:
        extras[peer.name]["import_ms"] = medians[peer.name]["wall"]
        extras[peer.name]["import_cpu_ms"] = medians[peer.name]["cpu"]
    medians["import trio_mcp"] = medians.get(TARGET, {})
    return {k: v for k, v in medians.items() if v}


def run_guards(quick: bool, rows: dict[tuple[str, str, str], Row]) -> dict[str, Any]:
    """The guards' A/B figures from bench/guards.py, run in its own process.

    It takes "a whole call" from this run's trio_mcp rows (server CPU per call,
    lowest repeat) when they are there, else measures its own.
    """
    cases = {"http echo": ("http", "echo"), "stdio echo": ("stdio", "echo")}
    cases["stdio search"] = ("stdio", "search")
    found = {
        case: min(rows[(TARGET, *key)].cpu_us)
        for case, key in cases.items()
        if (TARGET, *key) in rows
    }
    given = ",".join(f"{case}={us:.1f}" for case, us in found.items())
    options = ["--quick"] if quick else []
    if len(found) == len(cases):
        options += ["--call-us", given]
    try:
        out = subprocess.run(
            [PY, str(BENCH / "guards.py"), "--json", *options],
            cwd=ROOT,
            env=ENV,
            check=True,
            stdout=subprocess.PIPE,
            timeout=900,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return {"error": f"bench/guards.py failed ({exc!r}); run it alone to see why"}
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def commit() -> str:
    """The commit the run measured, with "+ changes" when the tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=10", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git clone)"
    return head + (" + uncommitted changes" if dirty else "")


class Phases:
    """Wall time of each phase of the run, printed as it ends (stderr)."""

    def __init__(self) -> None:
        self.begin = self.last = time.monotonic()

    def done(self, what: str) -> None:
        now = time.monotonic()
        print(
            f"bench: {what} took {now - self.last:.1f} s ({now - self.begin:.1f} s in all)",
            file=sys.stderr,
        )
        self.last = now


def main(argv: list[str]) -> None:
    """Run the peers, then print and keep the report."""
    args, settings = parse(argv)
    # Stopped with SIGTERM, unwind so every server started so far is stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    peers = chosen(args, settings.quick)
    if (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {0})
    phases = Phases()
    compileall.compile_dir(ROOT / "trio_mcp", quiet=1)
    compileall.compile_dir(ROOT / "examples", quiet=1)
    start = cpu_times()
    rows, extras = load_peers(peers, settings)
    phases.done("the loads")
    print("bench: start-up and import times", file=sys.stderr)
    imports = start_and_import(peers, settings, extras)
    phases.done("start-up and imports")
    catalog = {} if args.no_catalog else run_catalog(5 if settings.quick else 20)
    phases.done("the catalog")
    print("bench: the guards' A/B (bench/guards.py)", file=sys.stderr)
    guards = {} if args.no_guards else run_guards(settings.quick, rows)
    phases.done("the guards' A/B")
    host = noise(start, cpu_times())
    found = Found(imports, catalog, guards)
    text = report(peers, rows, extras, found, settings, argv, host)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.md").write_text(text)
    raw = {
        f"{name}|{transport}|{tool}": {
            "rates": [run.rate for run in row.runs],
            "p99_ms": [run.percentile(0.99) * 1e3 for run in row.runs],
            "cpu_us": row.cpu_us,
            "errors": [run.errors for run in row.runs],
        }
        for (name, transport, tool), row in rows.items()
    }
    (RESULTS / "latest.json").write_text(
        json.dumps(
            {
                "commit": commit(),
                "command": shlex.join(["bash", "bench/run.sh", *argv]),
                "rows": raw,
                "extras": extras,
                "imports": imports,
                "catalog": catalog,
                "guards": guards,
            }
        )
    )
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
