"""Capabilities, the host's grants, and the check that runs before every call.

A capability is a value; a declaration's ``caps=`` is both what each call requires
and the ceiling of what ``ToolContext.require`` allows inside it. Nothing here looks
at descriptions or hints: they grant nothing. No trio and no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias

import attrs

from .. import _checks as checks
from .._errors import InvalidArgument

__all__ = ["Capability", "Grants", "closure", "resolve_grants"]


def _as_tuple(caps: Iterable[Capability]) -> tuple[Capability, ...]:
    """Typed for attrs' mypy plugin, so ``requires=[cap]`` type-checks (``tuple`` does not)."""
    return checks.as_tuple(caps, "Capability.requires", "a list of Capability values")


def _requires(
    instance: Capability,
    attribute: attrs.Attribute[tuple[Capability, ...]],
    value: tuple[Capability, ...],
) -> None:
    for cap in value:
        if not isinstance(cap, Capability):
            raise checks.invalid("each of Capability.requires", "a Capability", cap)


def _name(instance: Capability, attribute: attrs.Attribute[str], name: str) -> None:
    if (
        not isinstance(name, str)
        or not name
        or not name.replace("_", "")
        .replace(".", "")
        .replace("-", "")
        .replace(":", "")
        .isalnum()
    ):
        raise InvalidArgument(
            f"capability name {name!r} must be letters, digits, '_', '-', '.' or ':'"
        )


@attrs.frozen
class Capability:
    """A named authority a host grants and a declaration requires.

    Args:
        name: The identifier used by ``allow=`` and ``--allow NAME``.
        description: What holding it lets a caller do, for people reading the catalog.
        requires: Capabilities that must be granted as well whenever this one is used.
    """

    name: str = attrs.field(validator=_name)
    description: str = attrs.field(kw_only=True, validator=checks.text)
    requires: tuple[Capability, ...] = attrs.field(
        default=(),
        kw_only=True,
        converter=_as_tuple,
        validator=_requires,
    )


#: What a host grants: capabilities (or their names), or a function of the principal.
Grants: TypeAlias = (
    "Iterable[Capability | str] | Callable[[object | None], Iterable[Capability | str]]"
)


def closure(caps: Iterable[Capability]) -> frozenset[str]:
    """Return the names of ``caps`` and of everything they require, transitively."""
    names: set[str] = set()
    stack = list(caps)
    while stack:
        cap = stack.pop()
        if cap.name not in names:
            names.add(cap.name)
            stack.extend(cap.requires)
    return frozenset(names)


def resolve_grants(allow: Grants, principal: object | None) -> frozenset[str]:
    """Return the capability names granted to ``principal``.

    A callable is asked for each call, so grants may depend on who is calling.
    """
    if callable(allow):
        granted = allow(principal)
    elif not allow:
        return _NOTHING  # the stdio default: no generator for an empty grant
    else:
        granted = allow
    return frozenset(c.name if isinstance(c, Capability) else str(c) for c in granted)


_NOTHING: frozenset[str] = frozenset()
