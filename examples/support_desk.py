"""A support desk served over MCP: the end-to-end example of the API guide, runnable.

Tools search and close tickets, a templated resource (``ticket://{ticket_id}``)
shows one ticket, and a prompt drafts a reply to its customer. Closing requires the
``desk_write`` capability, which the host grants (``allow=[desk_write]`` here, or
``trio-mcp run examples.support_desk:server --allow desk_write``).

    python examples/support_desk.py        # serves MCP over stdin/stdout

Importing this module only builds objects: the in-memory store, the desk and the
module-level ``server``. Nothing is read or written until ``main()`` runs.
"""

from __future__ import annotations

import attrs
import trio

from trio_mcp import (
    Capability,
    PromptMessage,
    ResourceNotFound,
    Server,
    ToolContext,
    ToolError,
    ToolHints,
    prompt,
    resource,
    tool,
)

desk_write = Capability("desk_write", description="Change tickets in the support desk")


@attrs.frozen
class TicketSummary:
    """One line of a ticket list."""

    id: str
    title: str


@attrs.frozen
class Ticket:
    """A support ticket, as the ``ticket://`` resource shows it."""

    id: str
    title: str
    body: str
    customer: str
    status: str = "open"
    resolution: str | None = None
    closed_by: str | None = None


class DeskError(ToolError):
    """A failure the model may read and act on."""


@attrs.define
class TicketStore:
    """Tickets held in memory; a real desk would use a database."""

    tickets: dict[str, Ticket] = attrs.field(factory=dict)

    @classmethod
    def sample(cls) -> TicketStore:
        """Return a store holding a few sample tickets."""
        store = cls()
        for ticket in (
            Ticket("T-1", "Refund for a double charge", "I was charged twice.", "ana"),
            Ticket(
                "T-2", "Password reset link expired", "The link says expired.", "bo"
            ),
            Ticket(
                "T-3", "Refund request: late delivery", "Arrived a week late.", "cy"
            ),
        ):
            store.tickets[ticket.id] = ticket
        return store

    def search(self, query: str, limit: int) -> list[TicketSummary]:
        """Return open tickets whose title or body contains every word of ``query``."""
        words = query.lower().split()
        found = [
            TicketSummary(t.id, t.title)
            for t in self.tickets.values()
            if t.status == "open"
            and all(w in f"{t.title} {t.body}".lower() for w in words)
        ]
        return found[: max(limit, 0)]

    def get(self, ticket_id: str) -> Ticket:
        """Return a ticket.

        Raises:
            DeskError: if there is no such ticket.
        """
        try:
            return self.tickets[ticket_id]
        except KeyError:
            raise DeskError(f"there is no ticket {ticket_id!r}") from None

    async def close(
        self, ticket_id: str, note: str, *, by: str | None
    ) -> TicketSummary:
        """Close a ticket with a resolution note, recording who closed it.

        Raises:
            DeskError: if the ticket does not exist or is already closed.
        """
        await trio.lowlevel.checkpoint()
        ticket = self.get(ticket_id)
        if ticket.status == "closed":
            raise DeskError(f"ticket {ticket_id!r} is already closed")
        self.tickets[ticket_id] = attrs.evolve(
            ticket, status="closed", resolution=note, closed_by=by
        )
        return TicketSummary(ticket.id, ticket.title)


@attrs.define
class SupportDesk:
    """The desk's MCP surface: its methods are the tools, resource and prompt."""

    tickets: TicketStore

    @tool(hints=ToolHints(read_only=True))
    def search_tickets(self, query: str, limit: int = 20) -> list[TicketSummary]:
        """
        Search open support tickets.

        Args:
            query: Words to look for.
            limit: Most results to return.
        """
        return self.tickets.search(query, limit)

    @tool(caps=[desk_write], errors=(DeskError,), timeout=30)
    async def close_ticket(self, ticket_id: str, note: str) -> TicketSummary:
        """
        Close a ticket with a resolution note.

        Args:
            ticket_id: The ticket to close.
            note: Why it is being closed.
        """
        ctx = ToolContext.current()
        return await self.tickets.close(ticket_id, note, by=ctx.principal_id)

    @resource("ticket://{ticket_id}")
    def read_ticket(self, ticket_id: str) -> Ticket:
        """
        One support ticket: its title, text, customer and status.

        Args:
            ticket_id: The ticket to show.
        """
        try:
            return self.tickets.get(ticket_id)
        except DeskError:
            # A missing ticket is a missing resource: -32602 with data.uri.
            raise ResourceNotFound(f"ticket://{ticket_id}") from None

    @prompt(title="Draft a reply")
    def draft_reply(
        self, ticket_id: str, tone: str | None = None
    ) -> list[PromptMessage]:
        """
        Draft a reply to a ticket's customer.

        Args:
            ticket_id: The ticket to answer.
            tone: How the reply should sound, for example "formal".
        """
        ticket = self.tickets.get(ticket_id)
        style = f" in a {tone} tone" if tone else ""
        return [
            PromptMessage.user(
                f"Write a reply{style} to {ticket.customer} about ticket {ticket.id} "
                f"({ticket.title}). They wrote: {ticket.body}"
            ),
        ]


def build_server(desk: SupportDesk) -> Server:
    """Return the MCP server for ``desk``."""
    return Server(
        name="support-desk",
        version="1.4.0",
        tools=[desk.search_tickets, desk.close_ticket],
        resources=[desk.read_ticket],
        prompts=[desk.draft_reply],
        instructions="Search tickets before closing one; closing needs desk_write.",
    )


desk = SupportDesk(tickets=TicketStore.sample())
server = build_server(desk)


async def main() -> None:
    """Serve the desk over stdin and stdout until stdin closes."""
    await server.serve_stdio(allow=[desk_write])


if __name__ == "__main__":
    trio.run(main)
