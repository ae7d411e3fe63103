"""``trio-mcp install``: put a server into an MCP host's configuration.

The entry launches ``<this python> -m trio_mcp run <absolute target>``, so the host
finds the interpreter and the code wherever it starts. An existing file is merged
(other entries kept) after a backup copy is written beside it (``<file>.bak``); a
file that is not valid JSON, or whose server table is not an object, is never
overwritten: the command stops and says what to fix.

Default locations (``--config`` overrides any of them):

* ``claude-desktop``: macOS ``~/Library/Application Support/Claude/claude_desktop_config.json``,
  Windows ``%APPDATA%\\Claude\\claude_desktop_config.json``, Linux
  ``~/.config/Claude/claude_desktop_config.json``; table ``mcpServers``.
* ``cursor``: ``~/.cursor/mcp.json`` on every system; table ``mcpServers``.
* ``vscode``: the workspace's ``.vscode/mcp.json`` (in the current directory);
  table ``servers``, each entry with ``"type": "stdio"``.
* ``claude-code``: prints the ``claude mcp add`` command; with ``--config`` it
  writes that file in the ``.mcp.json`` form (table ``mcpServers``).
* ``json``: prints the entry.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import trio

from ._load import CliError, absolute_target, open_server, split_target

__all__ = ["HOSTS", "default_config", "install"]

HOSTS = ("claude-code", "claude-desktop", "cursor", "json", "vscode")


def default_config(
    host: str,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
    environ: Mapping[str, str] = os.environ,
    cwd: Path | None = None,
) -> Path | None:
    """Return where ``host`` keeps its MCP configuration, or None if it prints."""
    home = Path.home() if home is None else home
    if host == "claude-desktop":
        if platform == "darwin":
            return (
                home / "Library/Application Support/Claude/claude_desktop_config.json"
            )
        if platform == "win32":
            appdata = environ.get("APPDATA") or str(home / "AppData/Roaming")
            return Path(appdata) / "Claude/claude_desktop_config.json"
        config = environ.get("XDG_CONFIG_HOME") or str(home / ".config")
        return Path(config) / "Claude/claude_desktop_config.json"
    if host == "cursor":
        return home / ".cursor/mcp.json"
    if host == "vscode":
        return (Path.cwd() if cwd is None else cwd) / ".vscode/mcp.json"
    return None


def _environment(pairs: Sequence[str], target: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--env {pair!r}: write it as KEY=VALUE")
        env[key] = value
    module_part, _ = split_target(target)
    if (
        "PYTHONPATH" not in env
        and not module_part.endswith(".py")
        and os.sep not in module_part
    ):
        # A module found only through the current directory must stay importable
        # when the host starts the server from its own directory.
        root = module_part.split(".")[0]
        saved = list(sys.path)
        try:
            sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
            elsewhere = importlib.util.find_spec(root) is not None
        finally:
            sys.path[:] = saved
        if not elsewhere:
            env["PYTHONPATH"] = os.getcwd()
    return env


def launch_entry(
    target: str, allow: Sequence[str], env: Mapping[str, str], *, legacy: bool = True
) -> dict[str, Any]:
    """Return the ``{"command", "args", "env"}`` entry a host runs.

    ``--legacy`` is in it unless ``legacy`` is false: a host's protocol era is not
    known in advance, and a handshake-era host cannot connect without it.
    """
    args = ["-m", "trio_mcp", "run", absolute_target(target)]
    if legacy:
        args.append("--legacy")
    for name in allow:
        args += ["--allow", name]
    return {"command": sys.executable, "args": args, "env": dict(env)}


def _read(path: Path, table: str) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}); fix it or move it away, then run this again. "
            "Nothing was written."
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get(table, {}), dict):
        raise CliError(
            f"{path}: expected a JSON object with an object under {table!r}; fix it "
            "or move it away, then run this again. Nothing was written."
        )
    return config


def _write(
    path: Path, table: str, name: str, entry: dict[str, Any], force: bool
) -> str:
    config = _read(path, table)
    existing = config.get(table, {}).get(name)
    if existing is not None and existing != entry and not force:
        raise CliError(
            f"{path} already has a different server named {name!r}; nothing was "
            "written. Choose another name with --name NAME, or replace it with --force"
        )
    backup = ""
    if path.exists():
        shutil.copy2(path, path.with_name(path.name + ".bak"))
        backup = f" (previous file kept as {path.name}.bak)"
    config.setdefault(table, {})[name] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    replaced = " (replaced the entry of that name)" if existing is not None else ""
    return f"wrote server '{name}' to {path}{replaced}{backup}"


def _claude_code_command(name: str, entry: dict[str, Any]) -> str:
    words = ["claude", "mcp", "add", name]
    for key, value in entry["env"].items():
        words += ["-e", f"{key}={value}"]
    words += ["--", entry["command"], *entry["args"]]
    return shlex.join(words)


async def _server_name(target: str) -> str:
    async with open_server(target) as server:
        return server.name


def _file_host(
    host: str, table: str, stdio_type: bool
) -> Callable[[argparse.Namespace, str, dict[str, Any]], None]:
    def write(args: argparse.Namespace, name: str, entry: dict[str, Any]) -> None:
        path = Path(args.config) if args.config else default_config(host)
        assert path is not None
        if stdio_type:
            entry = {"type": "stdio", **entry}
        print(_write(path.expanduser(), table, name, entry, args.force))
        if host != "claude-code":
            print(
                f"restart {host} (or reload its MCP servers) to start it",
                file=sys.stderr,
            )

    return write


def install(args: argparse.Namespace) -> int:
    """Write or print the host's entry for the target; return the exit status."""
    env = _environment(args.env, args.target)
    name = args.name or trio.run(_server_name, args.target)
    entry = launch_entry(args.target, args.allow, env, legacy=not args.modern_only)
    if args.host == "json":
        print(json.dumps({name: entry}, indent=2))
    elif args.host == "claude-code" and not args.config:
        print(_claude_code_command(name, entry))
    elif args.host == "vscode":
        _file_host("vscode", "servers", True)(args, name, entry)
    else:
        _file_host(args.host, "mcpServers", False)(args, name, entry)
    return 0
