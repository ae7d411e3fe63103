"""``trio-mcp dev``: the pinned MCP Inspector 2.x on a server, in the modern era.

The Inspector is a Node program; it starts the server itself over stdio with
``<this python> -m trio_mcp run <target>``. Two things make it connect to a
2026-07-28 server:

* the version is pinned by ``inspector/package.json`` and its lockfile, shipped
  inside trio_mcp and installed once with ``npm ci`` (never ``npx``, which on an old
  Node silently resolves an Inspector 0.x that sends ``initialize``);
* ``protocolEra: "modern"``, without which Inspector 2.x speaks the handshake era.

The server reaches the Inspector as the one entry of a session config file
(``--config``, a temporary file), not as a command on its command line: the entry's
name is the server's (an ad-hoc command would be named after its executable,
``python3.11``), and the Inspector's variadic options (``--tool-arg a=1 b=2``)
cannot swallow a server command that follows them.

The install goes to ``$TRIO_MCP_INSPECTOR_DIR``, or into the active virtualenv
(``<venv>/share/trio-mcp``), or the user's cache; its directory name carries the
lockfile's digest, so a new pin installs beside the old one.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import trio

from ._common import summary
from ._load import CliError, absolute_target, open_server
from ._node import Node, find_node, parse_minimum

__all__ = [
    "INSPECTOR",
    "Launch",
    "Pin",
    "inspector_command",
    "pin",
    "prepare",
    "run_inspector",
    "session_config",
]

INSPECTOR = "@modelcontextprotocol/inspector"
_PIN_DIR = Path(__file__).parent / "inspector"
# The launcher inside the package (its "bin"); `--web`/`--cli`/`--tui` pick the mode.
_LAUNCHER = ("clients", "launcher", "build", "index.js")


@attrs.frozen(eq=False)
class Pin:
    """The pinned Inspector: its version, the Node it needs, the lockfile's digest."""

    version: str
    node: tuple[int, int, int]
    digest: str


def pin() -> Pin:
    """Read the pin from the shipped package.json and package-lock.json."""
    lock_text = (_PIN_DIR / "package-lock.json").read_bytes()
    lock = json.loads(lock_text)
    entry = lock["packages"][f"node_modules/{INSPECTOR}"]
    return Pin(
        version=entry["version"],
        node=parse_minimum(entry["engines"]["node"]),
        digest=hashlib.sha256(lock_text).hexdigest()[:12],
    )


def _base_dir() -> Path:
    explicit = os.environ.get("TRIO_MCP_INSPECTOR_DIR")
    if explicit:
        return Path(explicit)
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "share" / "trio-mcp"
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "trio-mcp"


def _launcher(install_dir: Path) -> Path:
    return install_dir.joinpath("node_modules", *INSPECTOR.split("/"), *_LAUNCHER)


def install_inspector(node: Node, the_pin: Pin) -> Path:
    """Return the Inspector's launcher, running ``npm ci`` first if needed.

    The install happens in a temporary sibling directory renamed into place, so
    an interrupted or concurrent install never leaves a half-filled one behind.
    What an earlier one left anyway (a directory at the install's place without
    the launcher: a copy, an older trio-mcp's interrupted install, a cleaning that
    stopped halfway; temporary directories of installs killed long ago) is
    removed first, and the command says so.
    """
    base = _base_dir()
    target = base / f"inspector-{the_pin.version}-{the_pin.digest}"
    if _launcher(target).is_file():
        return _launcher(target)
    base.mkdir(parents=True, exist_ok=True)
    _clear_leftovers(base, target)
    print(
        f"trio-mcp dev: installing MCP Inspector {the_pin.version} (once) into {target}",
        file=sys.stderr,
    )
    work = Path(tempfile.mkdtemp(prefix=_WORK_PREFIX, dir=base))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(_PIN_DIR / name, work / name)
        _npm_ci(node, work)
        _put_in_place(work, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _launcher(target)


#: The temporary directories of installs in progress, beside the installs.
_WORK_PREFIX = ".inspector-"
#: A temporary directory older than this is an install that was killed.
_STALE_WORK = 24 * 3600.0


def _clear_leftovers(base: Path, target: Path) -> None:
    """Remove an incomplete install at ``target`` and long-dead work directories."""
    if target.exists() or target.is_symlink():
        _set_aside(target, "an incomplete MCP Inspector install (no launcher)")
    now = time.time()
    for work in base.glob(f"{_WORK_PREFIX}*"):
        try:
            stale = now - work.lstat().st_mtime > _STALE_WORK
        except OSError:  # another process removed it meanwhile
            continue
        if stale:
            _set_aside(work, "the temporary directory of an install that was killed")


def _put_in_place(work: Path, target: Path) -> None:
    """Rename the finished install to ``target``, unless another one got there."""
    try:
        work.rename(target)
        return
    except OSError:
        if _launcher(target).is_file():  # a concurrent install finished first
            return
    # Something incomplete appeared at ``target`` while npm ran.
    _set_aside(target, "an incomplete MCP Inspector install (no launcher)")
    try:
        work.rename(target)
    except OSError as exc:
        if not _launcher(target).is_file():
            raise CliError(_cannot(target, "put the MCP Inspector at", exc)) from None


def _set_aside(path: Path, what: str) -> None:
    """Move ``path`` out of the way (one rename), then delete it; say so."""
    aside = path.with_name(f".stale-{path.name}-{secrets.token_hex(4)}")
    try:
        path.rename(aside)
    except FileNotFoundError:  # another process cleared it first
        return
    except OSError as exc:
        raise CliError(_cannot(path, "remove", exc)) from None
    print(f"trio-mcp dev: {path} held {what}; removed it", file=sys.stderr)
    if aside.is_dir() and not aside.is_symlink():
        shutil.rmtree(aside, ignore_errors=True)
    else:
        aside.unlink(missing_ok=True)


def _cannot(path: Path, action: str, exc: OSError) -> str:
    reason = (exc.strerror or str(exc)).lower()
    return (
        f"cannot {action} {path}: {reason}; remove it yourself (or set "
        "TRIO_MCP_INSPECTOR_DIR to a directory you can write) and run trio-mcp dev again"
    )


def _npm_ci(node: Node, where: Path) -> None:
    command = [*node.npm(), "ci", "--no-audit", "--no-fund", "--loglevel=error"]
    done = subprocess.run(
        command, cwd=where, env=_node_env(node), stdout=sys.stderr, check=False
    )
    if done.returncode != 0:
        raise CliError(
            f"npm ci of MCP Inspector failed (exit {done.returncode}); the lines "
            "above say why (is the npm registry reachable?)"
        )


def _node_env(node: Node) -> dict[str, str]:
    """This environment with the chosen Node first on PATH, for its children."""
    env = os.environ.copy()
    env["PATH"] = os.pathsep.join([str(node.path.parent), env.get("PATH", "")])
    return env


@attrs.frozen(eq=False)
class Launch:
    """What ``trio-mcp dev`` asks of the Inspector."""

    target: str
    allow: Sequence[str] = ()
    mode: str = "web"
    extra: Sequence[str] = ()  # Inspector options (``--inspector-args``)


def session_config(launch: Launch, name: str) -> dict[str, object]:
    """The Inspector's session config: one stdio server, ``name``, in the modern era."""
    args = ["-m", "trio_mcp", "run", absolute_target(launch.target)]
    for capability in launch.allow:
        args += ["--allow", capability]
    entry = {
        "type": "stdio",
        "command": sys.executable,
        "args": args,
        "protocolEra": "modern",
    }
    return {"mcpServers": {name: entry}}


def inspector_command(
    node: Node, launcher: Path, launch: Launch, config: Path, name: str
) -> list[str]:
    """The Inspector's command line: mode, the session config, its options.

    ``--server`` picks the entry in CLI mode; the web page and the terminal UI list
    the file's servers (the one there is).
    """
    command = [
        str(node.path),
        str(launcher),
        f"--{launch.mode}",
        "--config",
        str(config),
    ]
    if launch.mode == "cli":
        command += ["--server", name]
    return [*command, *launch.extra]


async def _check(target: str) -> tuple[str, str]:
    """The start line and the server's name (the Inspector shows it)."""
    async with open_server(target) as server:
        return summary(server, "the MCP Inspector", ()), server.name


def prepare() -> tuple[Node, Path]:
    """Find a new enough Node and install the pinned Inspector; return both."""
    the_pin = pin()
    node = find_node(the_pin.node)
    return node, install_inspector(node, the_pin)


def run_inspector(launch: Launch) -> int:
    """Find Node, check the target, then run the Inspector on it until it exits.

    Node comes first: without it nothing is served, so no "serving" banner.
    """
    the_pin = pin()
    node = find_node(the_pin.node)
    line, name = trio.run(_check, launch.target)
    print(line, file=sys.stderr)
    launcher = install_inspector(node, the_pin)
    if launch.mode == "web":
        print(
            f"trio-mcp dev: MCP Inspector {pin().version} (Node "
            f"{'.'.join(map(str, node.version))}); it prints the address of its "
            "page, usually http://127.0.0.1:6274; Ctrl-C stops it",
            file=sys.stderr,
        )
    with tempfile.TemporaryDirectory(prefix="trio-mcp-dev-") as scratch:
        config = Path(scratch) / "mcp.json"
        config.write_text(json.dumps(session_config(launch, name), indent=2))
        command = inspector_command(node, launcher, launch, config, name)
        return _run_child(command, _node_env(node))


def _run_child(command: list[str], env: dict[str, str]) -> int:
    """Run the Inspector until it exits; Ctrl-C and SIGTERM stop it, not orphan it.

    Ctrl-C in a terminal reaches the whole process group, the Inspector included;
    SIGTERM reaches only this process, so it is passed on.
    """
    child = subprocess.Popen(command, env=env)
    previous = signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
