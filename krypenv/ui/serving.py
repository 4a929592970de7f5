"""``krypenv serve`` on uvicorn: HTTP/1.1 by h11, WebSockets by wsproto, and the two bounds uvicorn leaves to us.

uvicorn runs the ASGI app of :mod:`krypenv.ui.web` with its limits set deliberately
(:class:`~krypenv.ui.guard.Limits` holds the numbers):

* **framing** is h11's: a malformed request line or header, a bad or conflicting
  ``Content-Length``, a ``Transfer-Encoding`` other than ``chunked`` or headers over
  ``Limits.head`` bytes (16 KiB) are answered 400 and the connection closed, before the app;
* **keep-alive**: an idle connection is closed after ``Limits.keep_alive`` seconds (5 s);
* **WebSocket**: wsproto, messages of at most ``Limits.ws_message`` bytes (64 KiB), no
  compression (``permessage-deflate`` off: no decompression bombs), a ping every
  ``Limits.ws_ping`` seconds (20 s) that must be answered within as long;
* **listen backlog** ``Limits.backlog`` (128); no proxy headers trusted (``X-Forwarded-*``
  are ignored); no ``Server`` header; requests in progress get ``Limits.shutdown`` seconds
  (3 s) when the server stops; lifespan events off.

uvicorn has no bound on how long a request may take to *arrive* (a client that trickles its
headers one byte at a time holds its connection for ever; uvicorn issue 157) and counts its
``limit_concurrency`` only once a request has arrived, answering in plain text.  So
:class:`BoundedH11`, uvicorn's own h11 protocol with two additions, takes their place (and
``limit_concurrency`` stays unset):

* **a connection cap**: past ``Limits.connections`` (64) open connections, HTTP and WebSocket
  together, a new one is answered a JSON 503 at once and closed, before it is read;
* **a request deadline**: a request's headers and body must have arrived within
  ``Limits.request_timeout`` seconds (20 s) of the connection opening or of the previous
  answer, however slowly they trickle in; then the connection is closed without an answer.
  Once a request has arrived, the app takes its time (a hint may take a minute).

:class:`Server` binds the socket when it is made (so a port in use is an error at once) and
runs uvicorn in the foreground (:meth:`Server.serve_forever`, Ctrl-C stops it) or on a thread
(:meth:`Server.start`, :meth:`Server.stop`: tests and scripts).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from krypenv.ui.api import App
from krypenv.ui.guard import SECURITY_HEADERS, Limits, RequestGuard
from krypenv.ui.web import build

_BUSY_BODY = json.dumps({"error": "too many connections at once; try again shortly"}).encode()
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\nretry-after: 2\r\n"
        + b"".join(k + b": " + v + b"\r\n" for k, v in SECURITY_HEADERS)
        + b"content-length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))  # the answer past Limits.connections


class BoundedH11(H11Protocol):
    """uvicorn's h11 protocol with a cap on open connections and a deadline for each request (module docstring)."""

    limits = Limits()  # a server's subclass sets its own (Server makes one)
    refused = False
    deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Answer 503 and close when the cap is reached; else start the first request's deadline."""
        if len(self.server_state.connections) >= self.limits.connections:
            self.refused, self.transport = True, transport
            transport.write(BUSY)
            if transport.can_write_eof():
                transport.write_eof()  # the answer, then the end: the client's request is read and dropped
            self.loop.call_later(1.0, transport.close)
            return
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        """(Re)start the request deadline."""
        self._disarm()
        self.deadline = self.loop.call_later(self.limits.request_timeout, self._expired)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _expired(self) -> None:
        """The request did not arrive in time: close the connection (the app, if it reads, sees a disconnect)."""
        self.deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def _arrived(self) -> bool:
        """True when the current request has arrived whole (nothing more is awaited from the client)."""
        return self.conn.their_state in (h11.DONE, h11.MUST_CLOSE)

    def data_received(self, data: bytes) -> None:
        """Read as uvicorn does; stop the deadline once the request has arrived whole."""
        if self.refused:
            return
        super().data_received(data)
        if self._arrived():
            self._disarm()

    def eof_received(self) -> None:
        """The client has finished sending: a refused connection is closed now."""
        if self.refused:
            self.transport.close()

    def on_response_complete(self) -> None:
        """After an answer the next request's deadline starts (unless it has arrived already, pipelined)."""
        super().on_response_complete()
        if not self.transport.is_closing() and not self._arrived():
            self._arm()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        """A WebSocket handshake has arrived: wsproto takes the connection, with its own pings."""
        self._disarm()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the deadline; a refused connection was never counted."""
        self._disarm()
        if not self.refused:
            super().connection_lost(exc)


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (IPv6 when the host has a colon); OSError if that is impossible."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


class Server:
    """``krypenv serve``'s app on uvicorn, on a socket bound at creation (see the module docstring)."""

    def __init__(self, app: App, host: str, port: int, allow_hosts: list[str], limits: Limits) -> None:
        self.app, self.limits = app, limits
        self.socket = listening_socket(host, port)
        self.server_address: tuple[str, int] = self.socket.getsockname()[:2]
        guard = RequestGuard(host, self.port, allow_hosts)
        protocol = type("Bounded", (BoundedH11,), {"limits": limits})
        config = uvicorn.Config(
            build(app, guard, limits), http=protocol, ws="wsproto", lifespan="off", log_config=None,
            log_level="warning", access_log=False, proxy_headers=False, server_header=False,
            limit_concurrency=None, backlog=limits.backlog, timeout_keep_alive=limits.keep_alive,  # type: ignore[arg-type]
            timeout_graceful_shutdown=limits.shutdown,  # type: ignore[arg-type]
            h11_max_incomplete_event_size=limits.head, ws_max_size=limits.ws_message,
            ws_ping_interval=limits.ws_ping, ws_ping_timeout=limits.ws_ping, ws_per_message_deflate=False)
        self.uvicorn = uvicorn.Server(config)
        self.thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        return self.server_address[1]

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` of the bound address (IPv6 in brackets)."""
        host = self.server_address[0]
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (in the main thread) or :meth:`stop`, then stop the agents and save every record."""
        try:
            self.uvicorn.run(sockets=[self.socket])
        finally:
            self.close()

    def start(self) -> Server:
        """Serve on a thread; return once the server accepts connections."""
        self.thread = threading.Thread(target=self.serve_forever, name="krypenv-serve", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.uvicorn.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("krypenv serve did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving (requests in progress get :attr:`Limits.shutdown` seconds) and wait for the thread."""
        self.uvicorn.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=self.limits.shutdown + 30)

    def close(self) -> None:
        """Close the socket, stop the agents and save every game's record."""
        self.socket.close()
        self.app.store.close()
