"""A WebSocket client on a raw socket for the tests (wsproto, as the server): handshakes, messages, pings, closes."""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)


@dataclass
class Refused:
    """A handshake the server refused: its HTTP status, headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@dataclass
class Closed:
    """The server closed the socket: its close code and reason (1006: the connection ended without a close frame)."""

    code: int
    reason: str = ""


@dataclass
class WS:
    """An open WebSocket; ``answer_pings`` False plays a client that has vanished without closing."""

    sock: socket.socket
    conn: WSConnection
    answer_pings: bool = True
    pending: list[Event] = field(default_factory=list)

    @classmethod
    def connect(cls, base: str, path: str, host: str | None = None, origin: str | None = None,
                headers: list[tuple[str, str]] | None = None, timeout: float = 30.0) -> WS | Refused:
        """Open ``path`` on the server at ``base`` (``http://HOST:PORT``) with the given Host and Origin."""
        address = base.removeprefix("http://")
        name, _, port = address.rpartition(":")
        sock = socket.create_connection((name.strip("[]"), int(port)), timeout=timeout)
        conn = WSConnection(ConnectionType.CLIENT)
        extra = [(k.encode(), v.encode()) for k, v in (headers or [])]
        if origin is not None:
            extra.append((b"origin", origin.encode()))
        sock.sendall(conn.send(Request(host=host or address, target=path, extra_headers=extra)))
        ws = cls(sock, conn)
        refused: Refused | None = None
        while True:
            events = ws._events()
            for k, event in enumerate(events):
                if isinstance(event, AcceptConnection):
                    ws.pending = events[k + 1:]  # the first messages may come in the same read as the handshake
                    return ws
                if isinstance(event, RejectConnection):
                    refused = Refused(event.status_code, {k.decode().lower(): v.decode() for k, v in event.headers})
                    if not event.has_body:
                        sock.close()
                        return refused
                elif isinstance(event, RejectData) and refused is not None:
                    refused.body += event.data
                    if event.body_finished:
                        sock.close()
                        return refused
                elif isinstance(event, CloseConnection):  # the connection ended
                    sock.close()
                    return refused or Refused(0, {})

    def _events(self) -> list[Event]:
        """The events of the next bytes received (pings answered when ``answer_pings``); [Closed-like] at the end."""
        data = self.sock.recv(65536)
        self.conn.receive_data(data or None)
        out = []
        for event in self.conn.events():
            if isinstance(event, Ping) and self.answer_pings:
                self.sock.sendall(self.conn.send(event.response()))
            elif not isinstance(event, Ping):
                out.append(event)
        if not data and not out:
            out.append(CloseConnection(code=1006))
        return out

    def send_json(self, obj: Any) -> None:
        """Send ``obj`` as a JSON text message."""
        self.send_text(json.dumps(obj))

    def send_text(self, text: str) -> None:
        """Send a text message."""
        self.sock.sendall(self.conn.send(TextMessage(data=text)))

    def send_bytes(self, data: bytes) -> None:
        """Send a binary message."""
        self.sock.sendall(self.conn.send(BytesMessage(data=data)))

    def receive(self, timeout: float = 60.0) -> Any:
        """The next message as JSON, or :class:`Closed` when the server closes; TimeoutError after ``timeout``
        seconds without one (pings answered meanwhile do not count)."""
        deadline = time.monotonic() + timeout
        while True:
            while not self.pending:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no message in {timeout:g} s")
                self.pending = self._events()
            event = self.pending.pop(0)
            if isinstance(event, TextMessage):
                text = event.data
                while not event.message_finished:  # a message in several frames
                    event = self.pending.pop(0) if self.pending else self._next_part()
                    text += event.data
                return json.loads(text)
            if isinstance(event, CloseConnection):
                return Closed(event.code, event.reason or "")

    def _next_part(self) -> TextMessage:
        while not self.pending:
            self.pending = self._events()
        event = self.pending.pop(0)
        assert isinstance(event, TextMessage), event
        return event

    def close(self) -> None:
        """Close the socket (without a close frame: a page that vanished)."""
        self.sock.close()
