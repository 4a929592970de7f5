"""The guard of ``krypenv serve`` on its own: Host and Origin rules, body headers, and the ASGI middleware's order.

Quick and socket-free (the middleware runs on a fake app under ``asyncio.run``), so that a
mutation run (docs/results/mutation.md) can run them for every mutant of ``krypenv/ui/guard.py``;
tests/ui/test_server_protocol.py sends the same refusals over real sockets.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krypenv.ui.guard import (
    CSP,
    LOCAL_NAMES,
    SECURITY_HEADERS,
    Guard,
    HttpError,
    Limits,
    RequestGuard,
    answer,
    body_length,
    check_json,
    head_size,
    header_map,
    split_host,
)

PORT = 8123
NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){0,2}", fullmatch=True)
IPV4 = st.ip_addresses(v=4).map(str)
IPV6 = st.ip_addresses(v=6).map(str)


def refused(call: Any, *args: Any) -> tuple[int, str]:
    """(status, message) of the HttpError ``call(*args)`` raises."""
    with pytest.raises(HttpError) as info:
        call(*args)
    return info.value.status, str(info.value)


# ---------------------------------------------------------------- Host
@pytest.mark.parametrize("value,expected", [
    ("localhost", ("localhost", None)), ("LocalHost:80", ("localhost", 80)), ("127.0.0.1:8000", ("127.0.0.1", 8000)),
    ("[::1]:8000", ("::1", 8000)), ("[::1]", ("::1", None)), ("example.com.:1", ("example.com", 1)),
    (" localhost:65535 ", ("localhost", 65535)), ("Xbox.EXAMPLE:1", ("xbox.example", 1)),
])
def test_split_host_reads_name_and_port(value: str, expected: tuple[str, int | None]) -> None:
    """A Host value is a lower-case name (brackets and a final dot dropped) and an optional port 1..65535."""
    assert split_host(value) == expected


@pytest.mark.parametrize("value", ["", "  ", "a b", "a/b", "user@host", "host?x", "host#x", "back\\slash", "::1",
                                   "[::1", "[nope]:80", "[::1]x", "host:", "host:0", "host:65536", "host:8o",
                                   "host:-1", "host:٣", "a:1:2"])
def test_split_host_refuses_malformed_values(value: str) -> None:
    """Spaces, URL punctuation, unbracketed IPv6, a bad bracket, an empty or out-of-range port: ValueError."""
    with pytest.raises(ValueError, match="malformed"):
        split_host(value)


@pytest.mark.parametrize("value", ["::1", "a:1:2", "fe80::1:80"])
def test_more_than_one_colon_needs_brackets(value: str) -> None:
    """Two colons or more outside brackets: an IPv6 address that must be bracketed, said so."""
    with pytest.raises(ValueError, match=r"\(an IPv6 address needs brackets\)"):
        split_host(value)


def test_bound_names_and_allowed_hosts_are_read_like_host_headers() -> None:
    """The bound name and --allow-host names are compared as Host headers are: without case and brackets."""
    named = RequestGuard("XHost", PORT)
    assert named.names == frozenset({"xhost"}) and named.check_host(f"XHOST:{PORT}")
    allowed = RequestGuard("127.0.0.1", PORT, ["[FE80::1]", "Box.Example"])
    assert allowed.check_host(f"[fe80::1]:{PORT}") and allowed.check_host(f"box.example:{PORT}")
    assert allowed.names == frozenset({*LOCAL_NAMES, "fe80::1", "box.example"})


@given(host=st.sampled_from(["127.0.0.1", "localhost", "::1", "127.0.0.2"]), port=st.integers(1, 65535))
def test_loopback_server_answers_its_local_names_on_its_port_only(host: str, port: int) -> None:
    """Bound to a loopback address the server is localhost, 127.0.0.1, [::1] and the bound address, on its port."""
    guard = RequestGuard(host, PORT)
    shown = f"[{host}]" if ":" in host else host
    for name in (*["localhost", "127.0.0.1", "[::1]"], shown):
        assert guard.check_host(f"{name}:{PORT}") == f"{name}:{PORT}"
        if port != PORT:
            assert refused(guard.check_host, f"{name}:{port}")[0] == 403
    assert guard.names == frozenset({*LOCAL_NAMES, host})


def test_port_80_is_implied_by_a_host_without_port() -> None:
    """``Host: localhost`` means port 80: right for a server on 80, refused on any other port."""
    assert RequestGuard("127.0.0.1", 80).check_host("localhost") == "localhost"
    status, message = refused(RequestGuard("127.0.0.1", PORT).check_host, "localhost")
    assert status == 403 and f"port {PORT}" in message and "--allow-host" in message


@given(name=NAMES)
def test_a_name_is_served_only_where_allowed(name: str) -> None:
    """A DNS name (a rebinding page's) is refused on any bind unless --allow-host names it (any case, a final dot)."""
    if name in LOCAL_NAMES:
        return
    for bind in ("127.0.0.1", "0.0.0.0", "::", "192.168.1.5"):
        status, message = refused(RequestGuard(bind, PORT).check_host, f"{name}:{PORT}")
        assert status == 403 and "does not name this server" in message
        allowed = RequestGuard(bind, PORT, [name.upper()])
        assert allowed.check_host(f"{name}.:{PORT}") == f"{name}.:{PORT}"


@given(ip=st.one_of(IPV4, IPV6))
def test_a_wildcard_bind_answers_any_ip_literal(ip: str) -> None:
    """Bound to 0.0.0.0 or ``::`` every IP literal is this machine; bound to an address, only that one (and local
    names on a loopback one)."""
    literal = f"[{ip}]" if ":" in ip else ip
    for bind in ("0.0.0.0", "::", "[::]"):
        assert RequestGuard(bind, PORT).check_host(f"{literal}:{PORT}")
    specific = RequestGuard("192.168.1.5", PORT)
    if ip != "192.168.1.5":
        assert refused(specific.check_host, f"{literal}:{PORT}")[0] == 403
    assert specific.names == frozenset({"192.168.1.5"})  # not a loopback bind: no local names


@pytest.mark.parametrize("value,status,words", [(None, 400, "a Host header is needed"), ("", 400, "needed"),
                                                ("a b", 400, "bad Host header: malformed"),
                                                ("x" * 300, 403, "x" * 100 + "'")])
def test_missing_or_malformed_host_is_a_400(value: str | None, status: int, words: str) -> None:
    """No Host or a malformed one is a 400 saying so; a refused name is quoted at most 100 characters long."""
    got, message = refused(RequestGuard("127.0.0.1", PORT).check_host, value)
    assert got == status and words in message and "x" * 101 not in message
    if value is None:
        assert message == "a Host header is needed"


# ---------------------------------------------------------------- Origin
@given(ip=IPV4, port=st.integers(1, 65535))
def test_own_origin_is_the_host_it_was_reached_by(ip: str, port: int) -> None:
    """``Origin: http://`` + the request's Host passes (any case, any spelling of the same host and port); absent
    passes; another scheme, host, port, a path or ``null`` is a 403 quoting it."""
    guard = RequestGuard("0.0.0.0", port)
    host = f"{ip}:{port}"
    guard.check_origin(None, host)
    guard.check_origin(f"http://{host}", host)
    guard.check_origin(f"HTTP://{host} ", host)
    other_port = port % 65535 + 1
    for origin in (f"https://{host}", f"http://{ip}:{other_port}", f"http://{host}/", f"http://{host}/x", "null",
                   "http://evil.example", "", "http://", f"ws://{host}", f"http://{ip}:{port}:1"):
        status, message = refused(guard.check_origin, origin, host)
        assert status == 403 and "are refused" in message and f"(http://{host})" in message


def test_a_refusal_quotes_origin_and_host_at_most_100_characters() -> None:
    """The 403 quotes the refused Origin and the page's own address, each cut to 100 characters."""
    origin, host = "http://" + "o" * 300, "h" * 300
    status, message = refused(RequestGuard("0.0.0.0", PORT).check_origin, origin, host)
    assert status == 403 and message == (f"requests from the page at {origin[:100]!r} are refused: only this server's "
                                         f"own page (http://{host[:100]}) may call its API")


def test_origin_and_host_must_be_the_same_name_not_the_same_machine() -> None:
    """Reached by localhost, a page of 127.0.0.1 is another origin (the browser treats it so): refused."""
    guard = RequestGuard("127.0.0.1", PORT)
    with pytest.raises(HttpError):
        guard.check_origin(f"http://127.0.0.1:{PORT}", f"localhost:{PORT}")
    guard.check_origin(f"http://LOCALHOST:{PORT}", f"localhost:{PORT}")


# ---------------------------------------------------------------- bodies
@pytest.mark.parametrize("value", ["application/json", "Application/JSON", " application/json ; charset=utf-8",
                                   "application/json;x=1", "application/json; a=1; b=2"])
def test_json_content_types_pass(value: str) -> None:
    """The media type is compared without case and parameters."""
    check_json(value)


@pytest.mark.parametrize("value", [None, "", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                   "application/jsonx", "application/json-patch+json", "json"])
def test_other_content_types_are_415s(value: str | None) -> None:
    """Anything else, none included, is a 415 naming what was sent."""
    status, message = refused(check_json, value)
    assert status == 415 and message == (f"the request body must be JSON with Content-Type: application/json, got "
                                         f"{(value or 'none')!r}")
    long = "text/" + "x" * 200
    assert refused(check_json, long)[1].endswith(f"got {long[:80]!r}")


@given(length=st.integers(0, 10**30), limit=st.integers(0, 10**9))
def test_a_length_is_taken_up_to_the_limit(length: int, limit: int) -> None:
    """Any decimal length within the limit is that length; above it a 413 naming both numbers."""
    headers = {"content-length": f" {length} "}
    if length <= limit:
        assert body_length(headers, limit) == length
    else:
        status, message = refused(body_length, headers, limit)
        assert status == 413 and str(limit) in message and str(length)[:20] in message


@pytest.mark.parametrize("headers,status,words", [
    ({}, 411, "needs a Content-Length"),
    ({"transfer-encoding": "chunked", "content-length": "2"}, 411, "chunked body is refused"),
    ({"transfer-encoding": ""}, 411, "chunked"),
    ({"content-length": "-1"}, 400, "bad Content-Length '-1'"),
    ({"content-length": "1e3"}, 400, "from 0 to 100"),
    ({"content-length": ""}, 400, "bad Content-Length"),
    ({"content-length": "١٢"}, 400, "bad Content-Length"),  # Arabic-Indic digits: isdigit, not ASCII
    ({"content-length": "9" * 25}, 413, "request body of " + "9" * 20 + " bytes is over the limit of 100"),
    ({"content-length": "0" * 20 + "1"}, 413, "request body of " + "0" * 20 + " bytes"),  # 21 digits: too many
    ({"content-length": "x" * 50}, 400, f"bad Content-Length {'x' * 40!r}: it must be a number of bytes from 0 to 100"),
])
def test_bad_lengths_are_named(headers: dict[str, str], status: int, words: str) -> None:
    """No length, a chunked body, a malformed or negative length, a huge one: each its status and words."""
    got, message = refused(body_length, headers, 100)
    assert got == status and words in message, message
    exact = {"needs a Content-Length": "a POST needs a Content-Length header",
             "chunked body is refused": "a chunked body is refused: send Content-Length"}
    assert message == exact.get(words, message)


def test_twenty_digits_are_a_length_however_written() -> None:
    """Up to 20 digits, leading zeros included, are the number they spell."""
    assert body_length({"content-length": "0" * 19 + "5"}, 100) == 5
    assert body_length({"content-length": "0" * 20}, 100) == 0


def test_header_map_reads_names_without_case_and_refuses_twice_checked_ones() -> None:
    """Header names are lower-cased; a header the guard checks may come once (Host, Origin, body headers)."""
    latin = "é".encode("latin-1")
    scope = {"headers": [(b"Host", b"a:1"), (b"X-Twice", b"1"), (b"x-twice", b"2"), (b"x-latin", latin)]}
    assert header_map(scope) == {"host": "a:1", "x-twice": "2", "x-latin": "é"}
    for name in ("host", "origin", "content-type", "content-length", "transfer-encoding"):
        status, message = refused(header_map, {"headers": [(name.encode(), b"1"), (name.title().encode(), b"2")]})
        assert status == 400 and f"more than one {name} header" in message
    assert header_map({"headers": []}) == {}


# ---------------------------------------------------------------- the middleware
def run_guard(scope: dict[str, Any], max_body: int = 100, host: str = "127.0.0.1", allow: tuple[str, ...] = (),
              max_head: int = 1000) -> tuple[list[dict[str, Any]], bool]:
    """(messages sent, whether the app ran) for one request through :class:`Guard` over a fake app answering 200."""
    ran: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        ran.append(True)
        message = await receive()  # the app gets the server's receive and (wrapped) send
        if scope["type"] == "http":
            assert message["type"] == "http.request"
            start = {"type": "http.response.start", "status": 200}  # an answer may leave out its headers
            await send(start if scope.get("bare") else {**start, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"ok"})
        elif scope["type"] == "websocket":
            await send({"type": "websocket.accept"})
        else:
            await send({"type": "lifespan.startup.complete"})

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        kind = scope["type"]
        return {"type": "http.request", "body": b"", "more_body": False} if kind == "http" else {"type": f"{kind}.x"}

    asyncio.run(Guard(app, RequestGuard(host, PORT, list(allow)), max_body, max_head)(scope, receive, send))
    return sent, bool(ran)


def http(method: str = "GET", **headers: str) -> dict[str, Any]:
    """An HTTP scope with the given headers (underscores for dashes)."""
    return {"type": "http", "method": method,
            "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


OWN = f"127.0.0.1:{PORT}"


@pytest.mark.parametrize("method,headers,status,words", [
    ("GET", {}, 400, "a Host header is needed"),
    ("GET", {"host": "evil.example"}, 403, "does not name this server"),
    ("POST", {"host": "evil.example", "origin": "null", "content_type": "text/plain"}, 403, "does not name"),
    ("GET", {"host": OWN, "origin": "http://evil.example"}, 403, "are refused"),
    ("PUT", {"host": OWN, "origin": "null"}, 403, "are refused"),
    ("PUT", {"host": OWN}, 405, "PUT is not allowed"),
    ("OPTIONS", {"host": OWN, "content_type": "text/plain"}, 405, "the server takes GET and POST"),
    ("HEAD", {"host": OWN}, 405, "HEAD is not allowed"),
    ("PROPFIND" * 4, {"host": OWN}, 405, "PROPFINDPROPFINDPROP is not allowed: the server takes GET and POST"),
    ("POST", {"host": OWN, "content_type": "text/plain", "content_length": "999"}, 415, "application/json"),
    ("POST", {"host": OWN, "content_type": "application/json"}, 411, "needs a Content-Length"),
    ("POST", {"host": OWN, "content_type": "application/json", "content_length": "101"}, 413, "over the limit"),
])
def test_the_middleware_refuses_in_the_documented_order(method: str, headers: dict[str, str], status: int,
                                                        words: str) -> None:
    """Host, then Origin, then method, then Content-Type, then length: the first failure is the JSON answer, with the
    security headers and ``connection: close``, and the app never runs."""
    sent, ran = run_guard(http(method, **headers))
    assert not ran and len(sent) == 2
    start, body = sent
    names = dict(start["headers"])
    assert start["type"] == "http.response.start" and start["status"] == status
    assert words in json.loads(body["body"])["error"]
    assert names[b"content-type"] == b"application/json" and names[b"connection"] == b"close"
    assert int(names[b"content-length"]) == len(body["body"])
    assert all(names[k] == v for k, v in SECURITY_HEADERS) and CSP.encode() in names.values()
    assert (names.get(b"allow") == b"GET, POST") == (status == 405)


@given(extra=st.integers(0, 300))
def test_the_head_is_bounded_exactly(extra: int) -> None:
    """A target and headers of at most ``max_head`` bytes (each header line counted with ``: `` and CRLF) pass;
    one byte more is a 431 before anything else is looked at."""
    headers = [(b"host", OWN.encode()), (b"x-pad", b"a" * extra)]
    size = len(b"/api/meta") + len(b"q=1") + sum(len(k) + len(v) + 4 for k, v in headers)
    scope = {"type": "http", "method": "GET", "raw_path": b"/api/meta", "query_string": b"q=1", "headers": headers}
    assert head_size(scope) == size
    sent, ran = run_guard(scope, max_head=size)
    assert ran and sent[0]["status"] == 200
    sent, ran = run_guard({**scope, "method": "PUT", "headers": [(b"origin", b"null"), *headers]}, max_head=size)
    assert not ran and sent[0]["status"] == 431
    assert f"take {size + 14} bytes, over the limit of {size}" in json.loads(sent[1]["body"])["error"]


@pytest.mark.parametrize("method,headers", [
    ("GET", {"host": OWN}), ("GET", {"host": f"localhost:{PORT}", "origin": f"http://localhost:{PORT}"}),
    ("POST", {"host": OWN, "content_type": "application/json", "content_length": "100"}),
    ("POST", {"host": OWN, "origin": f"http://{OWN}", "content_type": "application/json", "content_length": "0"}),
])
def test_what_passes_reaches_the_app_with_the_security_headers(method: str, headers: dict[str, str]) -> None:
    """A request that passes every check reaches the app, and its answer gets the security headers added."""
    sent, ran = run_guard(http(method, **headers))
    assert ran and sent[0]["status"] == 200
    names = dict(sent[0]["headers"])
    assert names[b"content-type"] == b"text/plain" and all(names[k] == v for k, v in SECURITY_HEADERS)
    assert sent[1] == {"type": "http.response.body", "body": b"ok"}
    sent, _ = run_guard({**http(method, **headers), "bare": True})
    assert sent[0]["headers"] == SECURITY_HEADERS


def test_websocket_handshakes_are_checked_for_host_and_origin_only() -> None:
    """A handshake is a GET without a body: Host and Origin decide; a refusal is a JSON denial response when the server
    can send one, else a bare close; an accepted one reaches the app untouched."""
    ws = {"type": "websocket", "extensions": {"websocket.http.response": {}}}
    sent, ran = run_guard({**ws, "headers": [(b"host", OWN.encode()), (b"origin", b"http://evil.example")]})
    assert not ran and [m["type"] for m in sent] == ["websocket.http.response.start", "websocket.http.response.body"]
    assert sent[0]["status"] == 403 and "are refused" in json.loads(sent[1]["body"])["error"]
    sent, ran = run_guard({"type": "websocket", "headers": [(b"host", b"evil.example")]})
    assert not ran and sent == [{"type": "websocket.close", "code": 1008}]
    sent, ran = run_guard({**ws, "headers": [(b"host", OWN.encode()), (b"origin", f"http://{OWN}".encode())]})
    assert ran and sent == [{"type": "websocket.accept"}]


def test_lifespan_and_other_scopes_pass_through() -> None:
    """What is not HTTP or a WebSocket (uvicorn's lifespan) is not a request: the app gets it as it is."""
    sent, ran = run_guard({"type": "lifespan"})
    assert ran and sent == [{"type": "lifespan.startup.complete"}]


def test_answer_over_http_and_websocket() -> None:
    """:func:`answer` writes the same JSON error as an HTTP answer or a WebSocket denial."""
    for kind, prefix in (("http", ""), ("websocket", "websocket.")):
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
            sent.append(message)

        scope = {"type": kind, "extensions": {"websocket.http.response": {}}}
        asyncio.run(answer(scope, send, 418, "no tea"))
        assert [m["type"] for m in sent] == [prefix + "http.response.start", prefix + "http.response.body"]
        assert sent[0]["status"] == 418 and json.loads(sent[1]["body"]) == {"error": "no tea"}


def test_limits_defaults_are_the_documented_ones() -> None:
    """The numbers docs/SECURITY.md states (a change there and here goes together)."""
    limits = Limits()
    assert (limits.body, limits.head, limits.connections, limits.request_timeout, limits.keep_alive, limits.backlog,
            limits.ws_message, limits.ws_ping, limits.move_wait, limits.hint_wait) == (
        16 * 2**20, 16 * 2**10, 64, 20.0, 5.0, 128, 64 * 2**10, 20.0, 8.0, 60.0)


def test_ip_helper_agrees_with_ipaddress() -> None:
    """Bracketed IPv6 binds are read as their address (the guard strips brackets)."""
    guard = RequestGuard("[::1]", PORT)
    assert guard.names == frozenset({*LOCAL_NAMES}) and not guard.wildcard
    assert RequestGuard("::", PORT).wildcard and ipaddress.ip_address("::").is_unspecified
