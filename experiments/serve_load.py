"""Load test of ``krypenv serve``: many clients playing whole games at once, no game in progress may be lost.

    python experiments/serve_load.py --clients 20 --seconds 180 [--url http://127.0.0.1:8000]

Without ``--url`` it starts a server of its own on a free localhost port, records in a
temporary folder.  Each client loops until the time is up: start a game (Krypkasino with 2–4
players or Kungsholmskille with 3–4, against ``random``, ``greedy``, ``expert`` or ``timid``),
play it to the end by the API as the page does (moves naming their ``move_index``, waiting out
``thinking``), ask for a hint now and then, and open the finished game's replay.  It prints
requests by status, answer times (median, 95th percentile, max), games finished, and the
games in progress that vanished (``404 unknown game id``: the number that must be 0).  With
its own server it then checks every finished game's record file by the rules.  Traffic goes
to loopback only, and every loop is bounded by the time given.  Not part of the library;
``tests/ui/test_server_load.py`` runs it for a short while.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

TABLES = [("krypkasino", 2, "random"), ("krypkasino", 3, "greedy"), ("krypkasino", 4, "expert"),
          ("kungsholmskille", 3, "random"), ("kungsholmskille", 4, "timid")]


class Client:
    """One player: whole games one after another, every answer counted."""

    def __init__(self, base: str, stats: dict[str, Any], lock: threading.Lock, rng: random.Random) -> None:
        self.base, self.stats, self.lock, self.rng = base, stats, lock, rng

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """(status, JSON) of one request, its time and status counted."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        start = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                status, out = resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            status, out = exc.code, json.loads(exc.read() or b"{}")
        except OSError as exc:
            status, out = 0, {"error": f"{type(exc).__name__}: {exc}"}
        with self.lock:
            self.stats["status"][status] += 1
            self.stats["times"].append(time.monotonic() - start)
            if status >= 500 or status == 0:
                self.stats["errors"].append(f"{method} {path}: {status} {out.get('error')}")
        return status, out

    def play_game(self, deadline: float) -> None:
        """One game from start to end (or to the deadline), with a hint now and then and its replay."""
        game, players, agent = self.rng.choice(TABLES)
        status, out = self.call("POST", "/api/games", {"game": game, "players": players, "agents": [agent],
                                                       "seed": self.rng.randrange(10**6)})
        if status != 200:
            return
        gid, st = out["id"], out["state"]
        while not st["over"] and time.monotonic() < deadline:
            if st["thinking"]:
                status, out = self.call("GET", f"/api/games/{gid}?since=0")
            elif self.rng.random() < 0.05:
                self.call("POST", f"/api/games/{gid}/hint", {"spec": "expert" if game == "krypkasino" else "timid"})
                continue
            else:
                n = self.rng.randrange(len(st["legal"])) + 1
                status, out = self.call("POST", f"/api/games/{gid}/move", {"n": n, "move_index": st["move_index"]})
            if status == 404:
                with self.lock:
                    self.stats["lost"].append(gid)
                return
            if status != 200:
                continue
            st = out["state"]
        if st["over"]:
            with self.lock:
                self.stats["finished"].append(gid)
            self.call("GET", f"/api/games/{gid}/replay")

    def run(self, deadline: float) -> None:
        """Games until the deadline."""
        while time.monotonic() < deadline:
            self.play_game(deadline)


def run_load(base: str, clients: int, seconds: float, seed: int = 0) -> dict[str, Any]:
    """Run ``clients`` clients against ``base`` for ``seconds``; the counts and times."""
    stats: dict[str, Any] = {"status": Counter(), "times": [], "finished": [], "lost": [], "errors": []}
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=Client(base, stats, lock, random.Random(seed * 1000 + k)).run,
                                args=(deadline,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats


def check_records(folder: Path, finished: list[str]) -> tuple[int, list[str]]:
    """(records checked ok, problems) of the finished games' record files."""
    from krypenv.records import check_record

    ok, problems = 0, []
    for gid in finished:
        files = list(folder.glob(f"web-*-{gid}.jsonl"))
        if len(files) != 1:
            problems.append(f"{gid}: {len(files)} record files")
            continue
        for line in files[0].read_text().splitlines():
            outcome = check_record(json.loads(line))
            ok += outcome.ok
            if not outcome.ok:
                problems.append(f"{files[0].name}: {outcome.error}")
    return ok, problems


def report(stats: dict[str, Any], seconds: float) -> list[str]:
    """The printed summary."""
    times = sorted(stats["times"]) or [0.0]
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    return [f"{sum(stats['status'].values())} requests in {seconds:.0f} s: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(stats["status"].items())),
            (f"answer time: median {statistics.median(times) * 1000:.0f} ms, 95% {p95 * 1000:.0f} ms, "
             f"max {times[-1] * 1000:.0f} ms"),
            f"games finished: {len(stats['finished'])}; games in progress lost: {len(stats['lost'])}",
            *(f"  {e}" for e in stats["errors"][:5])]


def main() -> None:
    """Serve (unless --url), load, report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--url", default=None, help="a running server (default: start one on loopback)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.url:
        stats = run_load(args.url.rstrip("/"), args.clients, args.seconds, args.seed)
        print("\n".join(report(stats, args.seconds)))
        return
    from krypenv.ui.server import make_server

    with tempfile.TemporaryDirectory() as tmp:
        from krypenv.ui.store import Store

        # every finished game's record is checked below: keep them all (the default keeps the newest 1000)
        server = make_server("127.0.0.1", 0, games=Path(tmp), store=Store(Path(tmp), max_files=10**6)).start()
        stats = run_load(server.url, args.clients, args.seconds, args.seed)
        server.stop()
        ok, problems = check_records(Path(tmp), stats["finished"])
        print("\n".join(report(stats, args.seconds)))
        print(f"records of finished games checked by the rules: {ok} ok, {len(problems)} problems")
        for p in problems[:10]:
            print("  " + p)


if __name__ == "__main__":
    main()
