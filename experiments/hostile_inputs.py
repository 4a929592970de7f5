"""Probe: peak memory and output of ``krypenv replay`` and of the upload's ``load_text`` on hostile records files.

    python experiments/hostile_inputs.py                      # this tree
    python experiments/hostile_inputs.py --tree /tmp/old-main # another checkout, e.g. before a change

Builds in a temporary folder: one valid record alone (the baseline: importing a game's engine
costs most of the memory), 5 MB of short junk lines (the first one parses, so the file is
read as JSON Lines), 8 MB of one valid record and junk lines, a valid record around a line of
100,000 nested lists, and one around a 5,000-digit integer (the record is the tree's
``tests/krypkasino/data/deal_3p.json``).  Each is run, each in a fresh process with the
chosen tree first on ``PYTHONPATH`` and as working folder, through (a) ``python -m
krypenv.replay FILE`` and ``... --json``, and (b) ``load_text`` on the file's text as the web
server's upload does, printing the server's ``{deals, errors}`` answer.  A wrapper process
counts the output and reads the child's peak RSS (``getrusage(RUSAGE_CHILDREN).ru_maxrss``);
this script imports nothing from the tree, so it measures an old checkout as well.  Not part
of the library; it measured the table in the records-bounding change's report.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The wrapper: runs argv[1:], counts its stdout and stderr, prints {rc, rss_mb, out_bytes, out_lines, err_tail, s}.
WRAP = r"""
import json, resource, subprocess, sys, threading, time
start = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
got = {"out": [0, 0, b""], "err": [0, 0, b""]}
def count(stream, key):
    for chunk in iter(lambda: stream.read(1 << 16), b""):
        c = got[key]
        c[0] += len(chunk); c[1] += chunk.count(b"\n"); c[2] = (c[2] + chunk)[-300:]
threads = [threading.Thread(target=count, args=(p.stdout, "out")),
           threading.Thread(target=count, args=(p.stderr, "err"))]
for t in threads: t.start()
for t in threads: t.join()
rc = p.wait()
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"rc": rc, "rss_mb": rss, "out_bytes": got["out"][0], "out_lines": got["out"][1],
                  "err_bytes": got["err"][0], "err_tail": got["err"][2].decode(errors="replace").strip()[-160:],
                  "s": time.perf_counter() - start}))
"""

# The upload: load_text on the file's text, and the server's answer ({id, deals, errors}) printed.
UPLOAD = r"""
import json, sys
from krypenv.ui.replay import load_text
text = open(sys.argv[1], encoding="utf-8").read()
deals, errors = load_text(text, "upload.jsonl")
del text
sys.stdout.write(json.dumps({"id": "x", "deals": [d.to_json(i) for i, d in enumerate(deals)], "errors": errors}))
"""


def build(folder: Path, record: str) -> dict[str, Path]:
    """The hostile files, by name."""
    files = {"baseline": folder / "one.jsonl", "junk-5MB": folder / "junk.jsonl",
             "record+junk-8MB": folder / "upload.jsonl", "nested-100k": folder / "nested.jsonl",
             "int-5000-digits": folder / "hugeint.jsonl"}
    files["baseline"].write_text(record + "\n")  # the imports of a game's engine alone
    short = ["{}", "x", "1", "[]"]  # short lines: an object with no game, bad JSON, not objects
    n = 5_000_000 // 3
    files["junk-5MB"].write_text("\n".join(short[i % 4] for i in range(n)) + "\n")
    n = (8_000_000 - len(record)) // 2
    files["record+junk-8MB"].write_text(record + "\n" + "x\n" * n)
    files["nested-100k"].write_text("\n".join([record, "[" * 100_000 + "]" * 100_000, record]) + "\n")
    files["int-5000-digits"].write_text("\n".join([record, "1" * 5000, record]) + "\n")
    return files


def measure(cmd: list[str], tree: Path) -> dict[str, object]:
    """Run ``cmd`` in ``tree`` under the wrapper, in a fresh process; its counts."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    proc = subprocess.run([sys.executable, "-c", WRAP, *cmd], cwd=tree, env=env, capture_output=True, text=True,
                          check=True, timeout=3600)
    return json.loads(proc.stdout)


def main() -> None:
    """Build the files, run every measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the checkout whose krypenv is measured (default: this one)")
    args = parser.parse_args()
    tree = args.tree.resolve()
    record = json.dumps(json.loads((tree / "tests" / "krypkasino" / "data" / "deal_3p.json").read_text()))
    py = sys.executable
    print(f"tree {tree}; Python {sys.version.split()[0]}")
    print(f"{'file':<16} {'run':<16} {'rc':>3} {'peak RSS MB':>11} {'stdout bytes':>13} {'lines':>9} "
          f"{'stderr bytes':>12} {'s':>6}  stderr tail")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in build(Path(tmp), record).items():
            runs = {"replay": [py, "-m", "krypenv.replay", str(path)],
                    "replay --json": [py, "-m", "krypenv.replay", str(path), "--json"],
                    "load_text": [py, "-c", UPLOAD, str(path)]}
            for label, cmd in runs.items():
                r = measure(cmd, tree)
                tail = str(r["err_tail"]).splitlines()[-1] if r["err_tail"] else ""
                print(f"{name:<16} {label:<16} {r['rc']:>3} {r['rss_mb']:>11.0f} {r['out_bytes']:>13,} "
                      f"{r['out_lines']:>9,} {r['err_bytes']:>12,} {r['s']:>6.1f}  {tail[:90]}", flush=True)


if __name__ == "__main__":
    main()
