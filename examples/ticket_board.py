"""An MCP App: a ticket board that hosts render beside the tool's result (SEP-1865).

``show_board`` lists a team's tickets. A host that renders MCP Apps views (it
declares the ``io.modelcontextprotocol/ui`` extension) also shows ``ticket_board.html``,
the ``ui://ticket-board/board`` view, with the result; its "Close" buttons call
``close_ticket`` through the host, a tool only the view may call
(``visibility=("app",)``). Every other client gets the same tools and reads the
result as text.

    python examples/ticket_board.py                   # serves MCP over stdin/stdout
    trio-mcp dev examples/ticket_board.py:server      # the MCP Inspector renders it

The board is kept in memory, so each process starts with the same tickets.
"""

from __future__ import annotations

from pathlib import Path

import attrs
import trio

from trio_mcp import Server, ToolContext, ToolError, ToolHints, View, tool

BOARD = View(
    "ui://ticket-board/board",
    Path(__file__).with_name("ticket_board.html"),
    name="Ticket board",
    description="A team's tickets, with a button to close each open one.",
    prefers_border=True,
)


@attrs.frozen
class Ticket:
    """One ticket on the board."""

    id: str
    title: str
    state: str = "open"


@attrs.frozen
class Board:
    """A team's tickets, as the view draws them."""

    team: str
    tickets: list[Ticket]


TICKETS = {
    "web": [
        Ticket("WEB-1", "Login page times out"),
        Ticket("WEB-2", "Typo on the pricing page"),
        Ticket("WEB-3", "Dark mode contrast", "closed"),
    ],
    "api": [Ticket("API-7", "Rate limit headers missing")],
}
#: Most tickets a text-only client gets (a view can show them all).
TEXT_LIMIT = 2


class UnknownTeam(ToolError):
    """The model asked for a team the desk does not have."""


def _tickets(team: str) -> list[Ticket]:
    if team not in TICKETS:
        raise UnknownTeam(f"no team {team!r}; the teams are {', '.join(TICKETS)}")
    return TICKETS[team]


@tool(view=BOARD, hints=ToolHints(read_only=True), errors=(UnknownTeam,))
def show_board(team: str) -> Board:
    """Show a team's tickets on a board.

    Args:
        team: The team whose tickets to show ("web" or "api").
    """
    tickets = _tickets(team)
    if not ToolContext.current().renders_views:
        tickets = tickets[:TEXT_LIMIT]  # keep the model's text short
    return Board(team, tickets)


@tool(view=BOARD, visibility=("app",), errors=(UnknownTeam,))
def close_ticket(team: str, ticket_id: str) -> Board:
    """Close one of a team's tickets; the board's buttons call it.

    Args:
        team: The team the ticket belongs to.
        ticket_id: The ticket to close.
    """
    tickets = _tickets(team)
    TICKETS[team] = [
        attrs.evolve(t, state="closed") if t.id == ticket_id else t for t in tickets
    ]
    return Board(team, TICKETS[team])


server = Server("ticket-board", "1.0", tools=[show_board, close_ticket])


if __name__ == "__main__":
    trio.run(server.serve_stdio)
