"""``trio-mcp serve --trusted-proxy --forwarded-header`` (issue 34): the client's
address behind a proxy, for rate limits and listen bounds alike."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import cli, write_server


def _refused_before_serving(tmp_path: Path, *flags: str) -> str:
    """Run ``serve`` on the echo server with ``flags``: it stops with status 2 and
    a line, no traceback. Return its stderr."""
    write_server(tmp_path)

    done = cli("serve", "echo_server.py:server", *flags, cwd=tmp_path)

    assert 2 == done.returncode
    assert "Traceback" not in done.stderr
    return done.stderr


def test_a_trusted_proxy_that_is_no_address_is_one_line_before_serving(
    tmp_path: Path,
) -> None:
    stderr = _refused_before_serving(
        tmp_path, "--port", "0", "--trusted-proxy", "proxy"
    )

    assert "--trusted-proxy" in stderr


def test_a_forwarded_header_is_one_of_the_two_a_proxy_sets(tmp_path: Path) -> None:
    stderr = _refused_before_serving(tmp_path, "--forwarded-header", "x-real-ip")

    assert "x-forwarded-for" in stderr
