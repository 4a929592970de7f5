"""Probe: the memory of a running ``krypenv serve`` under hostile records uploads, in any checkout.

    python experiments/serve_memory.py                        # this tree
    python experiments/serve_memory.py --tree /tmp/old-main   # another checkout, e.g. before a change

Starts ``python -m krypenv.cli serve --port 0`` in the chosen tree (first on ``PYTHONPATH`` and
as working folder), then uploads ``--uploads`` times the 8 MB file of one valid record and
about 4M junk lines (:func:`hostile_inputs.build`), as that tree's page does (a JSON body
``{name, text}``; a checkout whose server takes the raw text is sent the raw text), and after
each upload reads the server's resident memory (``VmRSS``) and peak (``VmHWM``) from
``/proc``.  Prints the answer's size, the time, and both figures per upload.  Loopback only.
Not part of the library; it measured the upload figures of the "Safe to serve" change.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostile_inputs import build  # the same hostile files as the replay measurements


def memory(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss, hwm = (int(re.search(rf"{k}:\s+(\d+) kB", status).group(1)) / 1024 for k in ("VmRSS", "VmHWM"))
    return rss, hwm


def upload(base: str, text: str, as_json: bool) -> tuple[int, int]:
    """(status, answer bytes) of one records upload."""
    if as_json:
        req = urllib.request.Request(f"{base}/api/replay", data=json.dumps({"name": "upload.jsonl", "text": text})
                                     .encode(), method="POST", headers={"Content-Type": "application/json"})
    else:
        req = urllib.request.Request(f"{base}/api/replay?name=upload.jsonl", data=text.encode(), method="POST")
    try:
        with urllib.request.urlopen(req, timeout=3600) as resp:
            return resp.status, len(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, len(exc.read())


def main() -> None:
    """Serve, upload, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--uploads", type=int, default=6)
    args = parser.parse_args()
    tree = args.tree.resolve()
    record = json.dumps(json.loads((tree / "tests" / "krypkasino" / "data" / "deal_3p.json").read_text()))
    as_json = "keep_records" in (tree / "krypenv" / "ui" / "api.py").read_text() if (
        tree / "krypenv" / "ui" / "api.py").exists() else False
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONUNBUFFERED="1")
    with tempfile.TemporaryDirectory() as tmp:
        text = build(Path(tmp), record)["record+junk-8MB"].read_text()
        server = subprocess.Popen([sys.executable, "-m", "krypenv.cli", "serve", "--port", "0"], cwd=tmp, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            line = server.stdout.readline()
            port = re.search(r":(\d+)/", line).group(1)
            base = f"http://127.0.0.1:{port}"
            rss, hwm = memory(server.pid)
            print(f"tree {tree}; upload {len(text):,} bytes as {'JSON' if as_json else 'raw text'}")
            print(f"{'upload':>6} {'status':>6} {'answer bytes':>13} {'s':>6} {'RSS MB':>7} {'peak MB':>8}")
            print(f"{'start':>6} {'':>6} {'':>13} {'':>6} {rss:>7.0f} {hwm:>8.0f}")
            for k in range(1, args.uploads + 1):
                start = time.perf_counter()
                status, size = upload(base, text, as_json)
                rss, hwm = memory(server.pid)
                print(f"{k:>6} {status:>6} {size:>13,} {time.perf_counter() - start:>6.1f} {rss:>7.0f} {hwm:>8.0f}",
                      flush=True)
        finally:
            server.terminate()
            server.wait(timeout=60)


if __name__ == "__main__":
    main()
