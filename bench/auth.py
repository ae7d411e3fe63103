"""What a checked bearer token adds to an HTTP ``tools/call`` (A/B, server CPU per call).

    .venv/bin/python bench/auth.py [--calls 2000] [--repeat 3]

Three servers, each ``examples/bench_server.py``'s ``echo`` on ``serve_http``
(Hypercorn's Trio worker) in its own process:

- ``no auth``: plain ``serve_http()``;
- ``auth, one token``: ``serve_http(auth=BearerAuth(...))``, every call with the
  same RS256 JWT (after the first, the verified-token cache answers);
- ``auth, a new token per call``: every call a JWT never seen (full verification:
  parse, the key by ``kid``, the RS256 signature, the claims).

The keys are a JWKS file served by ``python -m http.server`` on 127.0.0.1
(``jwks_uri=``, so no discovery). One keep-alive client sends the calls one after
another; the figure is the server process's CPU time per call (``/proc``), best of
the interleaved repeats, and its excess over ``no auth``. Figures, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from joserfc import jwt
from joserfc.jwk import RSAKey

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
ISSUER = "https://issuer.bench"
AUDIENCE = "https://mcp.bench/mcp"
SERVER = """
import sys, trio
sys.path.insert(0, {examples!r})
from bench_server import server
from trio_mcp.auth import BearerAuth
port, jwks = int(sys.argv[1]), sys.argv[2]
options = {{}}
if jwks != "-":
    options["auth"] = BearerAuth({issuer!r}, {audience!r}, jwks_uri=jwks)
trio.run(lambda: server.serve_http(port=port, **options))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_port(port: int, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def stop(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()


def token(key: RSAKey, ident: int) -> str:
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": f"user-{ident}",
        "client_id": "bench",
        "scope": "read",
        "iat": now,
        "exp": now + 3600,
    }
    return jwt.encode({"alg": "RS256", "typ": "at+jwt", "kid": key.kid}, claims, key)


def body(ident: int) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "tools/call",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
                "name": "echo",
                "arguments": {"text": "hello"},
            },
        }
    ).encode()


def run(port: int, pid: int, tokens: list[str | None]) -> float:
    """Send one call per token; return the server's CPU seconds per call."""
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "echo",
    }
    url = f"http://127.0.0.1:{port}/mcp"
    with httpx.Client(timeout=10) as client:
        for i in range(50):  # warm-up (and the JWKS fetch)
            client.post(url, content=body(i), headers=_auth(headers, tokens[0]))
        before = cpu_seconds(pid)
        for i, value in enumerate(tokens):
            reply = client.post(url, content=body(i), headers=_auth(headers, value))
            if reply.status_code != 200 or "hello" not in reply.text:
                raise SystemExit(
                    f"call {i}: HTTP {reply.status_code} {reply.text[:200]}"
                )
        return (cpu_seconds(pid) - before) / len(tokens)


def _auth(headers: dict[str, str], value: str | None) -> dict[str, str]:
    return headers if value is None else {**headers, "authorization": f"Bearer {value}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    key = signing_key()
    print(f"minting {args.calls * args.repeat + 1} RS256 tokens ...", file=sys.stderr)
    fresh = [token(key, i) for i in range(args.calls * args.repeat + 1)]
    with jwks_served(key) as uri:
        results = measure(args, uri, fresh)
    report(results, args.calls)


def signing_key() -> RSAKey:
    """A new RS256 key (2048 bits), the kind an OAuth server signs access tokens with."""
    return RSAKey.generate_key(2048, parameters={"kid": "bench", "alg": "RS256"})


@contextlib.contextmanager
def jwks_served(key: RSAKey) -> Iterator[str]:
    """Serve ``key``'s public JWKS on 127.0.0.1 (``python -m http.server``); its URL.

    Also used by bench/guards.py. The server is stopped by its PID on exit.
    """
    with tempfile.TemporaryDirectory() as tmp:
        public = key.as_dict(private=False)
        Path(tmp, "jwks.json").write_text(json.dumps({"keys": [public]}))
        port = free_port()
        files = subprocess.Popen(
            [PY, "-m", "http.server", str(port), "-b", "127.0.0.1", "-d", tmp],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_port(port)
            yield f"http://127.0.0.1:{port}/jwks.json"
        finally:
            stop(files)


def measure(
    args: argparse.Namespace, jwks: str, fresh: list[str]
) -> dict[str, list[float]]:
    code = SERVER.format(
        examples=str(ROOT / "examples"), issuer=ISSUER, audience=AUDIENCE
    )
    one = fresh.pop()
    cases: dict[str, tuple[str, object]] = {
        "no auth": ("-", None),
        "auth, one token": (jwks, "one"),
        "auth, a new token per call": (jwks, "fresh"),
    }
    results: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, (uri, kind) in cases.items():
            if kind is None:
                tokens: list[str | None] = [None] * args.calls
            elif kind == "one":
                tokens = [one] * args.calls
            else:
                tokens = [fresh.pop() for _ in range(args.calls)]
            port = free_port()
            server = subprocess.Popen([PY, "-c", code, str(port), uri])
            try:
                wait_port(port)
                results[name].append(run(port, server.pid, tokens))
            finally:
                stop(server)
    return results


def report(results: dict[str, list[float]], calls: int) -> None:
    base = min(results["no auth"])
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{calls} calls per run; server CPU µs per call, best of the repeats")
    print(f"(load average at the end: {load}; the machine is shared, quote ratios)\n")
    print("| server | CPU µs/call | added by auth | vs no auth |")
    print("|---|---:|---:|---:|")
    for name, values in results.items():
        best = min(values)
        added = best - base
        print(
            f"| {name} | {best * 1e6:.0f} | {added * 1e6:+.0f} | {best / base - 1:+.1%} |"
        )


if __name__ == "__main__":
    main()
