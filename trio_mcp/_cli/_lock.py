"""``mcp.lock``: digests of every entry a client sees, to notice contract changes.

A tool's name, description and schemas are what a model reads; a change to any of
them changes how models use the tool, so ``trio-mcp lock --check`` fails on it and
says which entry and which part (description, input schema, output schema, ...)
changed. Each entry keeps one digest per top-level field of its wire form.

Tools from dependencies: a distribution publishes the tools it provides under the
entry point group ``trio_mcp.tools`` (``name = "package.module:attr"``, the attr a
``@tool`` object). A locked tool whose wire name one of them provides records that
distribution and its version, so a changed tool after an upgrade is reported with
the upgrade that brought it.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import trio

from trio_mcp import Server, Tool

from ._load import open_server

__all__ = ["ENTRY_POINT_GROUP", "compare", "lock_data", "providers", "run_lock"]

LOCK_VERSION = 2
ENTRY_POINT_GROUP = "trio_mcp.tools"
_KINDS = {"ToolSpec": "tools", "ResourceSpec": "resources", "PromptSpec": "prompts"}


def digest(value: Any) -> str:
    """Return the SHA-256 of a JSON value's canonical form."""
    canonical = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def providers() -> dict[str, dict[str, str]]:
    """Map each tool name published under ``trio_mcp.tools`` to its distribution.

    An entry point that cannot be loaded or is not a tool is skipped: the lock
    then records the tool without a provider, which is what it knows.
    """
    found: dict[str, dict[str, str]] = {}
    for dist in metadata.distributions():
        for entry in dist.entry_points:
            if entry.group != ENTRY_POINT_GROUP:
                continue
            try:
                obj = entry.load()
            except Exception:  # a broken plugin must not break the lock
                continue
            if isinstance(obj, Tool):
                found[obj.spec().name] = {
                    "distribution": dist.metadata["Name"],
                    "version": dist.version,
                }
    return found


def _entry(wire: dict[str, Any], provider: dict[str, str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "digest": digest(wire),
        "parts": {key: digest(value) for key, value in sorted(wire.items())},
    }
    if provider is not None:
        out["provider"] = provider
    return out


def lock_data(
    server: Server, published: dict[str, dict[str, str]] | None = None
) -> dict[str, Any]:
    """Return the lock document for ``server``: digests per entry and per part."""
    published = providers() if published is None else published
    entries: dict[str, dict[str, Any]] = {kind: {} for kind in _KINDS.values()}
    for spec in server.catalog():
        wire: dict[str, Any] = dict(spec.to_wire())
        kind = _KINDS[type(spec).__name__]
        name = str(wire.get("uri") or wire.get("uriTemplate") or wire.get("name"))
        provider = published.get(name) if kind == "tools" else None
        entries[kind][name] = _entry(wire, provider)
    return {"version": LOCK_VERSION, "server": server.name, **entries}


def _words(key: str) -> str:
    """``inputSchema`` -> ``input schema``, as the change report says it."""
    return re.sub(r"(?<!^)([A-Z])", r" \1", key).lower()


def _parts_changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    old = before.get("parts", {})
    new = after.get("parts", {})
    return [
        _words(key)
        + (" added" if key not in old else " removed" if key not in new else "")
        for key in sorted(old.keys() | new.keys())
        if old.get(key) != new.get(key)
    ]


def _provided(before: dict[str, Any], after: dict[str, Any]) -> str:
    old: dict[str, str] | None = before.get("provider")
    new: dict[str, str] | None = after.get("provider")
    if new is None:
        return (
            "" if old is None else f" (was from {old['distribution']} {old['version']})"
        )
    if old is None or old == new:
        return f" (from {new['distribution']} {new['version']})"
    return (
        f" (from {new['distribution']} {old['version']} -> {new['version']})"
        if old["distribution"] == new["distribution"]
        else f" (from {old['distribution']} {old['version']} -> "
        f"{new['distribution']} {new['version']})"
    )


class BadLock(Exception):
    """A lock file that is not one ``lock_data`` wrote; the message says where."""


def read_lock(path: Path) -> dict[str, Any]:
    """The lock document at ``path``, its shape checked as far as ``compare`` reads it.

    Raises:
        BadLock: for a file that is not UTF-8 JSON, not an object, or whose entries
            are not what ``trio-mcp lock`` writes (a format of another version is
            left to ``compare``, which names it).
        OSError: if the file cannot be read.
    """
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise BadLock("it is not UTF-8 text") from None
    except ValueError as exc:
        raise BadLock(f"it is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise BadLock(f"it holds a JSON {type(document).__name__}, not an object")
    if document.get("version") != LOCK_VERSION:
        return document
    for kind in _KINDS.values():
        entries = document.get(kind, {})
        if not isinstance(entries, dict):
            raise BadLock(f"'{kind}' is not an object")
        for name, entry in entries.items():
            where = f"{kind}.{name}"
            if not isinstance(entry, dict) or not isinstance(entry.get("digest"), str):
                raise BadLock(f"'{where}' has no digest")
            if not isinstance(entry.get("parts", {}), dict):
                raise BadLock(f"'{where}.parts' is not an object")
            provider = entry.get("provider")
            if provider is not None and not (
                isinstance(provider, dict)
                and all(
                    isinstance(provider.get(k), str)
                    for k in ("distribution", "version")
                )
            ):
                raise BadLock(f"'{where}.provider' is not a distribution and version")
    return document


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Return one line per difference between two lock documents (empty if equal)."""
    if old.get("version") != LOCK_VERSION:
        return [
            f"the lock file has format {old.get('version')!r}, this trio-mcp writes "
            f"{LOCK_VERSION}; run 'trio-mcp lock' again to rewrite it"
        ]
    lines: list[str] = []
    for kind in _KINDS.values():
        before: dict[str, Any] = old.get(kind, {})
        after: dict[str, Any] = new.get(kind, {})
        noun = kind[:-1]
        lines.extend(
            f"{noun} '{name}' was removed"
            for name in sorted(before.keys() - after.keys())
        )
        lines.extend(
            f"{noun} '{name}' was added"
            for name in sorted(after.keys() - before.keys())
        )
        for name in sorted(before.keys() & after.keys()):
            if before[name].get("digest") != after[name].get("digest"):
                parts = ", ".join(_parts_changed(before[name], after[name]))
                lines.append(
                    f"{noun} '{name}'{_provided(before[name], after[name])} "
                    f"changed: {parts}"
                )
    return lines


async def _data(target: str) -> dict[str, Any]:
    async with open_server(target) as server:
        return lock_data(server)


def run_lock(target: str, file: str, *, check: bool) -> int:
    """Write the lock file, or with ``check`` compare it; return the exit status."""
    data = trio.run(_data, target)
    path = Path(file)
    if not check:
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        print(f"wrote {path}")
        return 0
    if not path.is_file():
        print(
            f"no lock file at {path}; run 'trio-mcp lock {target}' first",
            file=sys.stderr,
        )
        return 1
    try:
        old = read_lock(path)
    except OSError as exc:
        print(f"cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except BadLock as exc:
        print(
            f"{path} is not a lock file this trio-mcp can read ({exc}); run "
            f"'trio-mcp lock {target}' to write it again",
            file=sys.stderr,
        )
        return 1
    changes = compare(old, data)
    for line in changes:
        print(line, file=sys.stderr)
    if changes:
        print(
            f"{path} is out of date; review the changes and run 'trio-mcp lock {target}'",
            file=sys.stderr,
        )
        return 1
    print(f"{path} matches the catalog")
    return 0
