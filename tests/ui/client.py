"""A client of ``krypenv serve``'s JSON API for the tests: one request, or one move waited out."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def call(base: str, method: str, path: str, body: Any = None, raw: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """(status, decoded JSON) of one request (JSON bodies, as the page sends them)."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = ({"Content-Type": "application/json"} if data is not None else {}) | (headers or {})
    req = urllib.request.Request(base + path, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def move(base: str, gid: str, st: dict[str, Any], n: int = 1) -> tuple[int, Any]:
    """Make move ``n`` of the legal list in state ``st`` (naming its move_index), waiting out the agents' thinking.

    Like the page, it asks only for the events after ``st``'s (``since``): the answer's events are the new ones.
    """
    since = st["n_events"]
    status, out = call(base, "POST", f"/api/games/{gid}/move", {"n": n, "move_index": st["move_index"],
                                                                "since": since})
    while status == 200 and out["state"]["thinking"]:
        status, out = call(base, "GET", f"/api/games/{gid}?since={since}")
    return status, out
