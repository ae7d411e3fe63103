"""Nothing of trio_mcp imports pydantic unless a declaration uses it (api.md "Where
Python users already are"): checked in a fresh interpreter, where pydantic is
installed (the test extra has it) and would show in ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

ATTRS_SERVER = textwrap.dedent(
    '''
    import dataclasses, datetime, enum, json, sys, uuid
    from typing import Annotated, Literal, TypedDict

    import annotated_types as at
    import attrs
    import trio

    from trio_mcp import Field, Secret, Server, decode, encode, json_schema, tool
    from trio_mcp.testing import McpTestClient


    class Kind(enum.Enum):
        A = "a"


    @attrs.frozen
    class Item:
        name: Annotated[str, Field(min_length=1)]
        when: datetime.datetime | None = None


    @dataclasses.dataclass
    class Box:
        side: Annotated[int, at.Ge(1)]


    class Label(TypedDict):
        text: str


    @tool
    def order(
        items: list[Item],
        box: Box | None = None,
        label: Label | None = None,
        kind: Kind = Kind.A,
        mode: Literal["x", "y"] = "x",
        key: Secret[str] | None = None,
        ref: uuid.UUID | None = None,
    ) -> list[Item]:
        """
        Place an order.

        Args:
            items: What.
            box: In what.
            label: Written on it.
            kind: Which kind.
            mode: How.
            key: A key.
            ref: A reference.
        """
        return items


    async def main() -> None:
        async with McpTestClient(Server("s", "1", tools=[order])) as client:
            await client.list_tools()
            good = await client.call_tool("order", {"items": [{"name": "a"}]})
            bad = await client.call_tool("order", {"items": [{"name": ""}], "x": 1})
        assert not good.is_error and bad.is_error
        json_schema(dict[str, Item])
        encode(decode(Item, {"name": "b"}))


    trio.run(main)
    print(json.dumps(sorted(sys.modules)))
    '''
)


def test_attrs_declarations_and_calls_never_import_pydantic() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ATTRS_SERVER],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert 0 == done.returncode, done.stderr
    loaded = json.loads(done.stdout)
    assert [] == [m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")]
    assert "trio_mcp._schema._pydantic" not in loaded
    assert "trio_mcp._decode._pydantic" not in loaded


def test_pydantic_is_installed_where_the_check_runs() -> None:
    """The check above means something only where pydantic could be imported."""
    done = subprocess.run(
        [sys.executable, "-c", "import pydantic; print(pydantic.VERSION)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    assert done.stdout.strip()
