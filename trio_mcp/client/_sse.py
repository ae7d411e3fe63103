"""Server-sent events as the client reads them: each event's data, bounded in size.

The Streamable HTTP response to a request may be ``text/event-stream`` carrying the
request's notifications and then its response (revision 2026-07-28, "Streamable
HTTP"). Lines end with LF, CRLF or CR (the WHATWG grammar); ``data:`` lines of one
event are joined with LF; an event whose ``event:`` type is neither absent nor
``message`` is skipped; comments (``:``, keep-alives), ``id:`` and ``retry:`` are
ignored. A line or an event's data past ``limit`` raises ``McpError.Transport``
before it is buffered further.
"""

from __future__ import annotations

from .._errors import Transport

__all__ = ["SseParser"]


class SseParser:
    """Feed bytes with ``feed``; it returns the events completed, each one's data."""

    def __init__(self, source: str, limit: int) -> None:
        self._source = source
        self._limit = limit
        self._pending = bytearray()
        self._data: list[str] = []
        self._size = 0
        self._event = ""
        self._skip_lf = False

    def _too_big(self) -> Transport:
        return Transport(
            f"{self._source} sent an event past the client's limit of {self._limit} bytes"
        )

    def feed(self, chunk: bytes) -> list[str]:
        """Take the next bytes of the stream; return the data of each event completed."""
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        self._pending += chunk
        done: list[str] = []
        start = 0
        buffer = self._pending
        while True:
            cr, lf = buffer.find(b"\r", start), buffer.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                break
            end = min(ends)
            line = bytes(buffer[start:end])
            start = end + 1
            if buffer[end : end + 1] == b"\r":
                if start < len(buffer):
                    if buffer[start : start + 1] == b"\n":
                        start += 1
                else:
                    self._skip_lf = True
            event = self._line(line)
            if event is not None:
                done.append(event)
        del buffer[:start]
        if len(buffer) > self._limit + 16:
            raise self._too_big()
        return done

    def _line(self, raw: bytes) -> str | None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Transport(
                f"{self._source} sent an event stream that is not UTF-8"
            ) from exc
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            self._size += len(raw) + 1
            if self._size > self._limit + 16:
                raise self._too_big()
            self._data.append(value)
        elif field == "event":
            self._event = value
        return None

    def _dispatch(self) -> str | None:
        data, kind = self._data, self._event
        self._data, self._event, self._size = [], "", 0
        if not data or kind not in ("", "message"):
            return None
        return "\n".join(data)
