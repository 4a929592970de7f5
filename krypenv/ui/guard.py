"""What ``krypenv serve`` checks of every request before the app sees it: Host, Origin, method, Content-Type, length.

:class:`Guard` is an ASGI middleware in front of the whole app, HTTP and WebSocket alike.  The
HTTP framing itself (request line, headers, ``Content-Length`` and ``Transfer-Encoding``
syntax, header sizes) is uvicorn's h11 parser's, before this runs (:mod:`krypenv.ui.serving`).
The guard then checks, in this order, answering the first failure as a JSON error
``{"error": "..."}`` (and closing the connection):

0. **Size of the head**: the request target and headers together, at most :attr:`Limits.head`
   bytes (16 KiB; a 431 beyond).  h11 bounds only what it buffers of a head still incomplete
   (the same 16 KiB), so a longer head that arrives in one read would pass it: this makes the
   bound exact.
1. **Host** (DNS rebinding): a page of ``evil.example`` whose name is made to resolve to
   127.0.0.1 can send requests *and read the answers*; the browser sends ``Host:
   evil.example``.  The Host header must name the address the server is bound to
   (:meth:`RequestGuard.check_host`): bound to a loopback address, ``localhost``,
   ``127.0.0.1``, ``[::1]`` or the bound address; bound to a wildcard (``0.0.0.0``, ``::``),
   any IP literal; a host name only where it was allowed with ``--allow-host``; and the port
   must be the server's.  A missing or malformed Host is a 400, a foreign one a 403.
2. **Origin** (cross-site requests, CSRF, cross-site WebSocket hijacking): any page may *send*
   a request to 127.0.0.1, and browsers send ``Origin`` with every cross-origin request, every
   same-origin POST and every WebSocket handshake.  An ``Origin`` other than the server's own
   (``http://`` + the Host it was reached by), ``null`` included, is a 403
   (:meth:`RequestGuard.check_origin`).
3. **Method**: the server takes GET and POST (and the WebSocket's GET handshake); any other
   method is a 405 naming them in ``Allow``, so no CORS preflight (``OPTIONS``) is ever granted.
4. **Body**, for a POST, before a byte of it is read: ``Content-Type: application/json`` (a 415
   otherwise; a page cannot send JSON across origins without a preflight), a ``Content-Length``
   (a 411 without one or with ``Transfer-Encoding``: no chunked bodies), of at most
   :attr:`Limits.body` bytes (a 413 beyond).

A request that names one of these headers twice is a 400 (which copy counts is never guessed).
Every answer of the server carries ``Cache-Control: no-store``, ``X-Content-Type-Options:
nosniff``, ``X-Frame-Options: DENY`` and a Content-Security-Policy that lets the page load
and connect to this server only.  A refused WebSocket handshake gets the same JSON answer
(ASGI's denial response).  :class:`Limits` holds every bound of the server in one place.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
METHODS = ("GET", "POST")
CHECKED = ("host", "origin", "content-type", "content-length", "transfer-encoding")  # at most one of each
CSP = ("default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
       "form-action 'self'")
SECURITY_HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"), (b"content-security-policy", CSP.encode()),
                    (b"referrer-policy", b"no-referrer")]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Limits:
    """Every bound of ``krypenv serve``; the defaults are those ``docs/SECURITY.md`` states (tests pass others)."""

    body: int = 16 * 1024 * 1024  # bytes of a request body (an uploaded records file, JSON-escaped)
    head: int = 16 * 1024  # bytes of a request line and its headers (h11's buffer; more is a 400)
    connections: int = 64  # connections open at once, HTTP and WebSocket; more are answered 503 at once
    request_timeout: float = 20.0  # seconds a request (headers and body) may take to arrive, from the connection
    # opening or the previous answer; then the connection is closed
    keep_alive: float = 5.0  # seconds an idle keep-alive connection is kept open
    backlog: int = 128  # the listen backlog
    ws_message: int = 64 * 1024  # bytes of one WebSocket message from a page (more: closed with 1009)
    ws_ping: float = 20.0  # seconds between the server's pings; a client that does not answer one in as long is gone
    move_wait: float = 8.0  # seconds a move or a new game waits for the agents before answering with thinking: true
    hint_wait: float = 60.0  # seconds a hint may take before it is given up (503)
    shutdown: float = 3.0  # seconds the requests in progress get to finish when the server stops


class HttpError(Exception):
    """A request refused: its HTTP status and the message of the JSON error."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address ``text`` spells, else None."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def split_host(value: str) -> tuple[str, int | None]:
    """(host name lowercased without brackets, port or None) of a ``Host`` header value; ValueError if malformed."""
    value = value.strip()
    if not value or any(c.isspace() or c in "/@?#\\" for c in value):
        raise ValueError(f"malformed host {value!r}")
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        if not sep or _ip(name) is None or (rest and not rest.startswith(":")):
            raise ValueError(f"malformed host {value!r}")
        port = rest[1:] if rest else None
    else:
        if value.count(":") > 1:
            raise ValueError(f"malformed host {value!r} (an IPv6 address needs brackets)")
        name, sep, port_text = value.partition(":")
        port = port_text if sep else None
    if port is not None and not (port.isdigit() and port.isascii() and 0 < int(port) < 65536):
        raise ValueError(f"malformed port in host {value!r}")
    return name.lower().rstrip("."), None if port is None else int(port)


class RequestGuard:
    """The Host and Origin checks of a server bound to ``host:port`` (see the module docstring)."""

    def __init__(self, host: str, port: int, allow_hosts: tuple[str, ...] | list[str] = ()) -> None:
        self.port = port
        bound = host.strip("[]").lower()
        ip = _ip(bound)
        self.wildcard = ip is not None and ip.is_unspecified
        loopback = bound == "localhost" or (ip is not None and ip.is_loopback)
        names = {bound} | (set(LOCAL_NAMES) if loopback or self.wildcard else set())
        self.names = frozenset(names | {h.strip("[]").lower() for h in allow_hosts})

    def check_host(self, value: str | None) -> str:
        """The ``Host`` header if it names this server; :class:`HttpError` otherwise."""
        if not value:
            raise HttpError(400, "a Host header is needed")
        try:
            name, port = split_host(value)
        except ValueError as exc:
            raise HttpError(400, f"bad Host header: {exc}") from None
        ok_name = name in self.names or (self.wildcard and _ip(name) is not None)
        if not ok_name or (port or 80) != self.port:
            raise HttpError(403, f"Host {value[:100]!r} does not name this server (port {self.port}; a host name must "
                                 f"be allowed with krypenv serve --allow-host)")
        return value

    def check_origin(self, origin: str | None, host: str) -> None:
        """Refuse an ``Origin`` header (when sent) that is not ``http://`` + the request's Host."""
        if origin is None:
            return
        parts = urlsplit(origin.strip())
        try:
            same = parts.scheme == "http" and not parts.path and split_host(parts.netloc) == split_host(host)
        except ValueError:
            same = False
        if not same:
            raise HttpError(403, f"requests from the page at {origin[:100]!r} are refused: only this server's own page "
                                 f"(http://{host[:100]}) may call its API")


def check_json(content_type: str | None) -> None:
    """Refuse a body whose ``Content-Type`` is not ``application/json``."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise HttpError(415, f"the request body must be JSON with Content-Type: application/json, got "
                             f"{(content_type or 'none')[:80]!r}")


def body_length(headers: Mapping[str, str], limit: int) -> int:
    """The body length of a POST from its lower-case headers, at most ``limit``; :class:`HttpError` naming the fault."""
    if headers.get("transfer-encoding") is not None:
        raise HttpError(411, "a chunked body is refused: send Content-Length")
    raw = headers.get("content-length")
    if raw is None:
        raise HttpError(411, "a POST needs a Content-Length header")
    raw = raw.strip()
    if not raw.isdigit() or not raw.isascii():
        raise HttpError(400, f"bad Content-Length {raw[:40]!r}: it must be a number of bytes from 0 to {limit}")
    length = int(raw[:20]) if len(raw) <= 20 else limit + 1
    if length > limit:
        raise HttpError(413, f"request body of {raw[:20]} bytes is over the limit of {limit}")
    return length


def head_size(scope: Scope) -> int:
    """Bytes of the request's target and headers, as sent (each header line with its ``: `` and CRLF)."""
    target = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
    return target + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def header_map(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name; a 400 when one of :data:`CHECKED` comes twice."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1").lower()
        if name in out and name in CHECKED:
            raise HttpError(400, f"the request has more than one {name} header")
        out[name] = raw_value.decode("latin-1")
    return out


async def answer(scope: Scope, send: Send, status: int, message: str) -> None:
    """Send ``{"error": message}`` with ``status`` and close: an HTTP answer, or a refused WebSocket handshake."""
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close"), *SECURITY_HEADERS]
    if status == 405:
        headers.append((b"allow", ", ".join(METHODS).encode()))
    if scope["type"] == "websocket":
        if "websocket.http.response" not in scope.get("extensions", {}):
            await send({"type": "websocket.close", "code": 1008})  # the server cannot say why: a bare 403
            return
        prefix = "websocket."
    else:
        prefix = ""
    await send({"type": prefix + "http.response.start", "status": status, "headers": headers})
    await send({"type": prefix + "http.response.body", "body": body})


class Guard:
    """ASGI middleware: every request passes :meth:`check` (size, Host, Origin, method, body) or gets a JSON error."""

    def __init__(self, app: ASGIApp, hosts: RequestGuard, max_body: int, max_head: int = Limits.head) -> None:
        self.app, self.hosts, self.max_body, self.max_head = app, hosts, max_body, max_head

    def check(self, scope: Scope) -> None:
        """Raise :class:`HttpError` for the first check (in the module docstring's order) that a request fails."""
        size = head_size(scope)
        if size > self.max_head:
            raise HttpError(431, f"the request's target and headers take {size} bytes, over the limit of "
                                 f"{self.max_head}")
        headers = header_map(scope)
        host = self.hosts.check_host(headers.get("host"))
        self.hosts.check_origin(headers.get("origin"), host)
        if scope["type"] == "websocket":
            return
        method = scope["method"]
        if method not in METHODS:
            raise HttpError(405, f"{method[:20]} is not allowed: the server takes GET and POST")
        if method == "POST":
            check_json(headers.get("content-type"))
            body_length(headers, self.max_body)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check, then pass the request on with the security headers added to its answer."""
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        try:
            self.check(scope)
        except HttpError as exc:
            await answer(scope, send, exc.status, str(exc))
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, send_with_headers)  # a WebSocket's messages pass unchanged
