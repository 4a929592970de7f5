"""A short, bounded load test of ``krypenv serve``: 20 clients play whole games at once; no game in progress is lost.

The full run (a few minutes) is ``python experiments/serve_load.py --clients 20 --seconds 180``;
this one plays for 20 seconds on a server of its own, on loopback only.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from krypenv.ui.server import make_server

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "serve_load.py"


@pytest.mark.slow
def test_twenty_clients_lose_no_game_in_progress(tmp_path: Path) -> None:
    """Every request is answered (no 5xx, no refused connection), no game in progress vanishes, and every finished
    game's record file exists once and replays legally."""
    spec = importlib.util.spec_from_file_location("serve_load", SCRIPT)
    load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load)
    server = make_server("127.0.0.1", 0, games=tmp_path).start()
    try:
        stats = load.run_load(server.url, clients=20, seconds=20.0)
    finally:
        server.stop()
    assert stats["lost"] == []
    assert set(stats["status"]) <= {200}, stats["status"]
    assert len(stats["finished"]) >= 20
    ok, problems = load.check_records(tmp_path, stats["finished"])
    assert problems == [] and ok >= len(stats["finished"])
