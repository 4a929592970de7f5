"""Record every numba compile (a cache miss) of this Python process: put this folder on ``PYTHONPATH`` and name a
folder in ``KRYPENV_COMPILE_LOG``; at exit the process writes ``<pid>.tsv`` there (its command line, then one row per
compile: function, its own seconds without the compiles it triggered, with them, argument types).
``python experiments/compile_profile.py DIR`` sums them (docs/results/ci.md, "Where numba's compile time goes")."""

from __future__ import annotations

import atexit
import os
import sys
import time

OUT = os.environ.get("KRYPENV_COMPILE_LOG")
if OUT:
    import numba.core.event as ev

    _open: list[list[float]] = []  # per compile in progress: its start and the seconds of the compiles it triggered
    _rows: list[tuple[str, float, float, str]] = []

    class _Listener(ev.Listener):
        """Times each ``numba:compile`` event, nested compiles apart."""

        def on_start(self, event: ev.Event) -> None:
            _open.append([time.perf_counter(), 0.0])

        def on_end(self, event: ev.Event) -> None:
            start, inner = _open.pop()
            took = time.perf_counter() - start
            if _open:
                _open[-1][1] += took
            func = event.data["dispatcher"].py_func
            _rows.append((f"{func.__module__}.{func.__qualname__}", took - inner, took, str(event.data["args"])))

    ev.register("numba:compile", _Listener())

    def _write() -> None:
        if _rows:
            with open(os.path.join(OUT, f"{os.getpid()}.tsv"), "w") as f:
                f.write("#" + " ".join(sys.argv)[:300] + "\n")
                f.writelines(f"{n}\t{own:.3f}\t{total:.3f}\t{args}\n" for n, own, total, args in _rows)

    atexit.register(_write)
