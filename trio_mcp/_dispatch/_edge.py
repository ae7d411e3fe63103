"""``Edge``: a transport's way into a dispatcher, with the steps it adds.

Made once per transport (``Dispatcher.edge``) with the steps it contributes to every
call (HTTP: room, rate limit, step-up); its chains are built then, so a call
assembles nothing. An edge with an ``Admission`` gives back the call slot a request
held once the request is answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import trio

from .._context import Emit, no_emit
from .._protocol._jsonrpc import Request
from ._call import Call, Ending, Middleware, Next
from ._request import Caller, Reply

if TYPE_CHECKING:
    from ._dispatcher import Dispatcher

__all__ = ["Admission", "Edge"]


class Edge:
    """A transport's way into a dispatcher, with the steps it adds to every call.

    Made once per transport (``Dispatcher.edge``): both of its chains are built
    then (``Runner.chain``), so no call assembles anything. ``task_chain`` is the
    chain of a tool that may run as a task: the tasks extension's steps around it.
    """

    def __init__(
        self,
        dispatcher: Dispatcher,
        steps: Sequence[Middleware] = (),
        admission: Admission | None = None,
    ) -> None:
        self.dispatcher = dispatcher
        self.admission = admission
        """The step that holds a call slot while its request is unanswered, if
        any: given back here once the request is answered (a call that became a
        task goes on without it)."""
        steps = tuple(steps) if admission is None else (admission.admit, *steps)
        self.steps = steps
        runner, tasks = dispatcher.runner, dispatcher.tasks
        self.chain: Next = runner.chain(self.steps)
        self.task_chain: Next = runner.chain(
            self.steps, outer=(tasks.outer,), inner=(tasks.inner,)
        )

    async def handle(
        self,
        request: Request,
        caller: Caller,
        emit: Emit = no_emit,
        scope: trio.CancelScope | None = None,
    ) -> Reply:
        """``Dispatcher.handle`` through this edge."""
        admission = self.admission
        if admission is None:
            return await self.dispatcher.handle(request, caller, emit, scope, edge=self)
        if scope is None:
            scope = trio.CancelScope()  # what the admission holds its slot for
        try:
            return await self.dispatcher.handle(request, caller, emit, scope, edge=self)
        finally:
            admission.answered(scope)


class Admission(Protocol):
    """A transport's admission of calls (``_http._gate.Gate``): its ``admit`` step
    holds a call slot on behalf of the request (its scope), which ``answered``
    gives back (idempotent: the step gives it back itself when the call ends
    first; a call that became a task goes on without it)."""

    async def admit(self, call: Call, next: Next, /) -> Ending: ...

    def answered(self, request: trio.CancelScope | None, /) -> None: ...
