"""What ``krypenv serve`` checks of every request before it reads a body: Host, Origin, Content-Type, length.

These are the defences local development servers use (Jupyter's server checks Host and Origin
alike) against two attacks from a web page open in the user's own browser:

* **DNS rebinding**: a page of ``evil.example`` whose name is made to resolve to 127.0.0.1 can
  send requests *and read the answers*; the browser sends ``Host: evil.example``.  The Host
  header must name the address the server is bound to (:meth:`RequestGuard.check_host`):
  bound to a loopback address, ``localhost``, ``127.0.0.1``, ``[::1]`` or the bound address;
  bound to a wildcard (``0.0.0.0``, ``::``), any IP literal; a host name only where it was
  allowed with ``--allow-host``; and the port must be the server's.  A DNS name that is not
  allowed never passes, so no rebinding page does.
* **Cross-site requests (CSRF)**: any page may *send* a POST to 127.0.0.1.  Browsers send
  ``Origin`` with every cross-origin request and with same-origin POSTs; an ``Origin`` other
  than the server's own (``http://`` + the Host it was reached by), ``null`` included, is
  refused (:meth:`RequestGuard.check_origin`).  Bodies must be ``application/json``
  (:func:`check_json`), which a page cannot send cross-origin without a CORS preflight that
  this server never grants (it answers no ``OPTIONS`` and sends no CORS headers).

:func:`body_length` bounds what is read: a POST needs a ``Content-Length`` of at most the
limit; a missing, negative or malformed length and ``Transfer-Encoding`` are refused.  Each
refusal is a :class:`HttpError` with its HTTP status and a message naming what was wrong.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")


class HttpError(Exception):
    """A request refused before it is handled: its HTTP status and the message of the JSON error."""

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
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
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
            raise HttpError(403, f"Host {value!r} does not name this server (port {self.port}; a host name must be "
                               f"allowed with krypenv serve --allow-host)")
        return value

    def check_origin(self, origin: str | None, host: str) -> None:
        """Refuse an ``Origin`` header (when sent) that is not ``http://`` + the request's Host."""
        if origin is None:
            return
        parts = urlsplit(origin.strip())
        try:
            same = (parts.scheme == "http" and not parts.path and parts.netloc != ""
                    and split_host(parts.netloc) == split_host(host))
        except ValueError:
            same = False
        if not same:
            raise HttpError(403, f"requests from the page at {origin[:100]!r} are refused: only this server's own page "
                               f"(http://{host}) may call its API")


def check_json(content_type: str | None) -> None:
    """Refuse a body whose ``Content-Type`` is not ``application/json``."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise HttpError(415, f"the request body must be JSON with Content-Type: application/json, got "
                           f"{(content_type or 'none')[:80]!r}")


def body_length(headers: Mapping[str, str], limit: int) -> int:
    """The body length of a POST from its headers, at most ``limit``; :class:`HttpError` naming what is wrong."""
    if headers.get("Transfer-Encoding") is not None:
        raise HttpError(411, "a chunked body is refused: send Content-Length")
    raw = headers.get("Content-Length")
    if raw is None:
        raise HttpError(411, "a POST needs a Content-Length header")
    raw = raw.strip()
    if not raw.isdigit() or not raw.isascii():
        raise HttpError(400, f"bad Content-Length {raw[:40]!r}: it must be a number of bytes from 0 to {limit}")
    length = int(raw[:20]) if len(raw) <= 20 else limit + 1
    if length > limit:
        raise HttpError(413, f"request body of {raw[:20]} bytes is over the limit of {limit}")
    return length
