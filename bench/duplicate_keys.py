"""What refusing duplicate member names costs on the parse path, by valgrind.

    bench/.venv/bin/python bench/duplicate_keys.py [--quick]

(``.venv/bin/python`` runs it too: it needs ``valgrind``.) Every message a transport
reads goes through ``trio_mcp._json.loads``, whose scanner hands each object's
members to a hook (``_object``) that builds the dict and compares two lengths, so a
member name twice is refused (``DuplicateKey``). This counts the instructions of one
``loads`` of a ``tools/call`` request (six objects) with that check, as it was
before it (the scanner building its own dicts), and with the scanner in pairs mode
but no check (``dict`` as the hook: the floor of any check the stdlib allows), each as
``(instructions(N) - instructions(M)) / (N - M)`` of a child process under
``valgrind --tool=cachegrind`` (start-up cancels out), then the instructions of a
whole stdio ``echo`` call (``bench/instructions.py``'s row), and prints the check's
share of a call. docs/performance.md records the figures.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from instructions import ROWS, Valgrind, measure, measured_env

#: The child: ``N`` parses of the request, by ``loads`` (``checked``) or by
#: ``loads`` as it was before the check (``plain``: the same steps, the scanner
#: building dicts itself), or by that scanner in pairs mode with ``dict`` as the
#: hook (``pairs``: the least any check through the hook can cost).
CHILD = """
import json, sys
from trio_mcp._json import loads, _reject_constant
variant, count = sys.argv[1], int(sys.argv[2])
text = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "tools/call",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        },
        "name": "echo", "arguments": {"text": "hello"},
    },
}, separators=(",", ":"))
def before(decoder):
    scan = vars(decoder)["scan_once"]
    def loads_before(text):
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        try:
            value, end = scan(text, 0)
        except StopIteration:
            end = -1
        if end != len(text):
            value = decoder.decode(text)
        return value
    return loads_before
parse = {
    "plain": before(json.JSONDecoder(parse_constant=_reject_constant)),
    "pairs": before(
        json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=dict)
    ),
    "checked": loads,
}[variant]
for _ in range(count):
    parse(text)
"""


def per_parse(variant: str, large: int, small: int, work: Path) -> float:
    """Instructions of one parse in ``variant``, the difference of two runs."""
    valgrind = Valgrind()
    counts = []
    for count in (small, large):
        out = work / f"{variant}-{count}.out"
        command = [*valgrind.argv(out), sys.executable, "-c", CHILD, variant]
        subprocess.run(
            [*command, str(count)], check=True, env=measured_env(), timeout=600
        )
        counts.append(valgrind.instructions(out))
    return (counts[1] - counts[0]) / (large - small)


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer parses and calls")
    args = parser.parse_args(argv)
    parses = (20_000, 4_000) if args.quick else (100_000, 20_000)
    calls = (400, 80) if args.quick else (800, 160)
    with tempfile.TemporaryDirectory(prefix="trio-mcp-dupkeys-") as work:
        plain = per_parse("plain", *parses, Path(work))
        pairs = per_parse("pairs", *parses, Path(work))
        checked = per_parse("checked", *parses, Path(work))
    [row] = [r for r in ROWS if r.name == "trio_mcp stdio echo"]
    [figure] = measure([row], *calls, repeat=1, valgrind=Valgrind())
    call = figure.value
    cost = checked - plain
    print(f"loads of a tools/call request, before the check: {plain:,.0f} instructions")
    print(f"the same, the scanner in pairs mode (dict):      {pairs:,.0f} instructions")
    print(
        f"loads of a tools/call request, names checked:    {checked:,.0f} instructions"
    )
    print(f"the check: {cost:,.0f} instructions a message, of which pairs mode alone")
    print(f"  (the floor of any check through the stdlib scanner) {pairs - plain:,.0f}")
    print(f"a stdio echo call (whole server process): {call:,.0f} instructions")
    print(f"the check's share of a stdio call: {100 * cost / call:.2f} % (budget 2 %)")


if __name__ == "__main__":
    main(sys.argv[1:])
