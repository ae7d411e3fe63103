"""``trio-mcp``: run, serve, check, lock, call and install servers from the command line.

Every command that takes a TARGET accepts ``package.module:attr`` or
``path/file.py:attr``, where ``attr`` is a Server, a factory (sync or async) or an
async context manager function yielding one (the lifespan). stdout carries only
what the command produces (the protocol stream for ``run`` and ``mcp``, JSON for
``call`` and ``check --json``); summaries and logs go to stderr. A target that
cannot be loaded is a one-line message and exit status 2; ``--debug`` adds the
traceback.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn

from trio_mcp import McpError
from trio_mcp._version import __version__

from .._interrupt import interrupt_in
from ._commands import COMMANDS
from ._load import CliError
from ._logs import LEVELS, BadLevel, configure_logging, level_from

__all__ = ["main", "parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, with a "did you mean" for a mistyped choice or flag."""

    def error(self, message: str) -> NoReturn:
        super().error(message + _choice_hint(message))

    def unrecognized(self, extra: Sequence[str]) -> NoReturn:
        """Refuse arguments this (sub)command does not take, with its own usage and
        the flags closest to the mistyped ones."""
        flags = [flag for action in self._actions for flag in action.option_strings]
        hints = []
        for word in extra:
            if word.startswith("-"):
                close = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1)
                hints += [f"did you mean {close[0]}?"] if close else []
        hint = "; " + "; ".join(hints) if hints else ""
        self.error(f"unrecognized arguments: {' '.join(extra)}{hint}")

    def command_parser(self, name: str) -> _Parser | None:
        """Return the sub-parser of one command (a ``_Parser`` too), or None."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                found = action.choices.get(name)
                return found if isinstance(found, _Parser) else None
        return None  # pragma: no cover - the parser always has commands


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


def _choice_hint(message: str) -> str:
    """``; did you mean 'serve'?`` for argparse's invalid-choice message, or ''."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return ""
    choices = re.findall(r"'([^']*)'", found[2])
    close = difflib.get_close_matches(found[1], choices, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _common() -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--log-level",
        choices=LEVELS,
        default=None,
        help="log to stderr at this level (default: $TRIO_MCP_LOG_LEVEL or warning); "
        "info shows every receipt",
    )
    common.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback when the target cannot be loaded",
    )
    return common


def parser() -> _Parser:
    """Return the ``trio-mcp`` argument parser."""
    top = _Parser(
        prog="trio-mcp", description="Run, check and connect trio_mcp servers."
    )
    top.add_argument("--version", action="version", version=f"trio-mcp {__version__}")
    common = _common()
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, add_arguments, _) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, parents=[common])
        add_arguments(command)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # `trio-mcp call TOOL ... -- COMMAND ...`: the command after '--' is the target.
    stdio_command = None
    if argv[:1] in (["call"], ["proxy"]) and "--" in argv:
        at = argv.index("--")
        argv, stdio_command = argv[:at], argv[at + 1 :]
    top = parser()
    args, extra = top.parse_known_args(argv)
    if extra:
        command = top.command_parser(args.command)
        (command or top).unrecognized(extra)
    args.stdio_command = stdio_command
    run: Callable[[argparse.Namespace], int] = COMMANDS[args.command][2]
    try:
        configure_logging(level_from(args.log_level))
        return run(args)
    except BaseException as exc:
        if _leaves(exc) and all(isinstance(e, BrokenPipeError) for e in _leaves(exc)):
            return _reader_gone()
        problem = _user_facing(exc)
        if problem is None:
            raise
        if isinstance(problem, KeyboardInterrupt):
            return 130  # Ctrl-C before serving began (a serve method stops by itself)
        if args.debug:
            traceback.print_exception(exc, file=sys.stderr)
        print(f"trio-mcp {args.command}: {problem}", file=sys.stderr)
        return 2


#: The exit status of a process killed by SIGPIPE, as a shell reports it (128 + 13).
EXIT_READER_GONE = 141


def _reader_gone() -> int:
    """Stop quietly, as Unix tools do, when whoever read our output stopped reading
    (``trio-mcp call ... | head``): no traceback, nothing more written.

    The interpreter flushes stdout once more on exit; pointing it at the null device
    first keeps that flush from failing again (Python's own advice for SIGPIPE).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_READER_GONE


def _user_facing(exc: BaseException) -> BaseException | None:
    """The one error to show as a line (or Ctrl-C), unwrapping Trio's groups.

    Under Trio an error raised in a nursery arrives inside an exception group; a
    group whose only members are one such error (or interrupts) is that error.
    """
    interrupt = interrupt_in(exc)
    if interrupt is not None:
        return interrupt
    leaves = _leaves(exc)
    shown = (CliError, McpError, BadLevel)
    if len(leaves) == 1 and isinstance(leaves[0], shown):
        return leaves[0]
    return None


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]
