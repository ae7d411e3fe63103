"""The OAuth guide's hands-on section runs as written from a clone (a CI walk).

docs/guides/oauth.md, "Trying it with a real authorization server": its first
``bash`` block is the set-up (``bash scripts/bootstrap``, already done here); every
later block of the section is run, in order, as one ``bash -euo pipefail`` script, in
a temp dir that looks like the clone's root (``.venv``, ``tests`` and ``examples``
linked to this checkout's), so every file the walk needs must be created by a command
the guide shows. The only change: the line choosing the two ports gets free ones.
Both servers are real (panva's oidc-provider under the Node that bootstrap installed,
``trio-mcp serve``); the walk's process group is killed at the end whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
from pathlib import Path

from trio_mcp.testing import check_message

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "oauth.md"
SECTION = "## Trying it with a real authorization server"
DPOP_SECTION = "### Trying DPoP"
EXCHANGE_SECTION = "### Trying token exchange"
PORTS_LINE = "ISSUER_PORT=9400 MCP_PORT=8000"
LINKED = (".venv", "tests", "examples")


def bash_blocks(heading: str) -> list[str]:
    """The ``bash`` blocks of the guide's section under ``heading``."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index(heading) :]
    section = section[: section.index("\n## ", len(heading))]
    return re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)


def hands_on() -> tuple[str, str]:
    """The section's set-up block and the script of its other blocks."""
    blocks = bash_blocks(SECTION)
    return blocks[0], "\n".join(blocks[1:])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def run_walk(cwd: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in its own process group; kill the group when it ends."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIO_MCP_")}
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=50)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def answers(output: str) -> list[tuple[int, str | None, dict[str, object]]]:
    """Each ``call``'s status, ``WWW-Authenticate`` header and JSON body, in order."""
    found = []
    for part in re.split(r"^(?=HTTP/1\.1 )", output, flags=re.M)[1:]:
        lines = part.strip().splitlines()
        status = int(lines[0].split()[1])
        header = next(
            (
                ln.split(":", 1)[1].strip()
                for ln in lines
                if ln.lower().startswith("www-")
            ),
            None,
        )
        body = next(ln for ln in lines if ln.startswith("{"))
        found.append((status, header, json.loads(body)))
    return found


def walk(
    tmp_path: Path, script: str, mcp_port: int
) -> subprocess.CompletedProcess[str]:
    """Run a hands-on ``script`` from a clone-like ``tmp_path`` on free ports."""
    assert (ROOT / "tests/auth/provider/node_modules/oidc-provider").is_dir(), (
        "oidc-provider is not installed: run bash scripts/bootstrap"
    )
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    assert 1 == script.count(PORTS_LINE)
    script = script.replace(
        PORTS_LINE, f"ISSUER_PORT={free_port()} MCP_PORT={mcp_port}"
    )
    return run_walk(tmp_path, script)


def test_the_oauth_guides_hands_on_runs_as_written_from_a_clone(
    tmp_path: Path,
) -> None:
    setup, script = hands_on()
    assert "bash scripts/bootstrap" in setup
    mcp_port = free_port()

    done = walk(tmp_path, script, mcp_port)

    assert 0 == done.returncode, done.stdout + done.stderr
    # Issue 45, item 10: the private signing key never lands in the clone.
    assert not (tmp_path / "config.json").exists()
    got = answers(done.stdout)
    assert [401, 200, 403, 200] == [status for status, _, _ in got], done.stdout
    # The official Python client sent the token and read the note.
    official = [ln for ln in done.stdout.splitlines() if ln.startswith("2026-07-28 ")]
    assert ["2026-07-28 the note groceries"] == official, done.stdout
    # The start line does not say "granted: nothing" where tokens grant.
    assert "granted: what each token's scopes map to;" in done.stderr, done.stderr
    metadata = f"http://127.0.0.1:{mcp_port}/.well-known/oauth-protected-resource/mcp"
    assert f'Bearer resource_metadata="{metadata}"' == got[0][1]
    step_up = got[2][1]
    assert step_up is not None
    assert step_up.startswith('Bearer error="insufficient_scope"')
    assert 'scope="notes:read notes:write"' in step_up
    for _, _, body in got:
        check_message(body, "tools/call")
    assert "the note groceries" == got[1][2]["result"]["structuredContent"]  # type: ignore[index]
    assert "written" == got[3][2]["result"]["structuredContent"]  # type: ignore[index]


def test_the_dpop_walk_runs_as_written(tmp_path: Path) -> None:
    """ "Trying DPoP": a bound token admitted once per proof, refused as a bearer."""
    done = walk(tmp_path, "\n".join(bash_blocks(DPOP_SECTION)), free_port())

    assert 0 == done.returncode, done.stdout + done.stderr
    assert not (tmp_path / "config.json").exists()
    provider = ("ready http://127.0.0.1:", "oidc-provider NOTICE: ")
    lines = [ln for ln in done.stdout.splitlines() if not ln.startswith(provider)]
    assert "token_type: DPoP" == lines[0], done.stdout
    assert "200 " == lines[1]
    assert lines[2].startswith('401 DPoP error="invalid_dpop_proof"')
    assert "the DPoP proof was used before (jti)" in lines[2]
    assert lines[3].startswith('401 DPoP error="invalid_token"')
    assert "the token is DPoP-bound" in lines[3]
    assert 4 == len(lines)


def test_the_token_exchange_walk_runs_as_written(tmp_path: Path) -> None:
    """ "Trying token exchange": the upstream names the caller, the gateway's
    client and its own audience; no token is in the servers' log."""
    done = walk(tmp_path, "\n".join(bash_blocks(EXCHANGE_SECTION)), free_port())

    assert 0 == done.returncode, done.stdout + done.stderr
    assert not (tmp_path / "config.json").exists()
    provider = ("ready http://127.0.0.1:", "oidc-provider NOTICE: ")
    lines = [ln for ln in done.stdout.splitlines() if not ln.startswith(provider)]
    assert ["agent through gateway, for https://search.example/mcp"] == lines
    log = (tmp_path / "gateway.log").read_text()
    assert "serving gateway 1.0" in log
    assert "eyJ" not in log  # no JWT, the caller's or the exchanged one
