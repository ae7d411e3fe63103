"""Time decoding with and without a ``Field(json_schema=...)`` passthrough.

    .venv/bin/python bench/verbatim.py [--decodes 20000]

Prints microseconds per ``trio_mcp.decode`` of a one-parameter arguments object (as
a tool call decodes its arguments) for each case, the best of five rounds.
Only a passthrough that asserts something is validated with ``jsonschema``; a
descriptive one (``examples``, ``x-...``) should cost the same as none.
"""

from __future__ import annotations

import argparse
import time
from typing import Annotated, Any

import attrs

from trio_mcp import Field, decode

RULES = {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}


@attrs.frozen
class Contact:
    method: str
    phone: str | None = None
    email: str | None = None


CASES: list[tuple[str, object, object]] = [
    ("int, Field(ge=0)", Annotated[int, Field(ge=0)], 7),
    (
        "int, Field(ge=0, json_schema={examples})",
        Annotated[int, Field(ge=0, json_schema={"examples": [1]})],
        7,
    ),
    (
        "Any, Field(json_schema={anyOf})",
        Annotated[
            Any,
            Field(
                json_schema={
                    "anyOf": [{"type": "integer", "minimum": 0}, {"const": "n/a"}]
                }
            ),
        ],
        7,
    ),
    ("Contact", Contact, {"method": "phone", "phone": "555"}),
    (
        "Contact, Field(json_schema={anyOf required})",
        Annotated[Contact, Field(json_schema=RULES)],
        {"method": "phone", "phone": "555"},
    ),
]


def arguments_of(tp: object) -> type:
    """One parameter of type ``tp``, the way a tool's arguments are decoded."""
    return attrs.make_class("Arguments", {"v": attrs.field(type=tp)}, frozen=True)  # type: ignore[call-overload]


def main(decodes: int) -> None:
    for label, field_type, field_value in CASES:
        tp, value = arguments_of(field_type), {"v": field_value}
        decode(tp, value)  # build the hooks once
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(decodes // 5):
                decode(tp, value)  # type: ignore[arg-type]
            best = min(best, (time.perf_counter() - start) / (decodes // 5))
        print(f"{label:48} {best * 1e6:8.2f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decodes", type=int, default=20000)
    main(parser.parse_args().decodes)
