"""Small value types that several tests declare tools with, decode or encode.

An enum, and a tagged union of two attrs classes: the shapes the type table treats
specially (``{"enum": [...]}``, and an object with exactly one key per member).
"""

from __future__ import annotations

import enum

import attrs

__all__ = ["Circle", "Color", "Square"]


@attrs.define
class Circle:
    radius: float


@attrs.define
class Square:
    side: float


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"
