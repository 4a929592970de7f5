"""Where a workload's time goes, function by function, inside numba's compiled code: ``perf`` with the JIT's names.

    python experiments/profile_jit.py engine [--seconds 15] [--top 25] [--lines 40]

``perf`` cannot name the functions numba compiles at run time: their samples show as bare addresses.  This runs one
workload of ``experiments/instructions.py`` (``engine``, ``vec_2p``, ``vec``, ``aec``, ``kille_engine``,
``kille_vec``, ``kille_aec``; one numba thread) in a child process with an empty numba cache, so that every
compiled library keeps its object code.  After a first run of the workload (it compiles, about two minutes) the
child writes ``/tmp/perf-PID.map``, which ``perf report`` reads: every text symbol of each library's object file
(``nm``), placed by the address of the library's entry point, and numba's runtime's reference counting,
``NRT_incref`` and ``NRT_decref`` (an atomic instruction each).  Then ``perf record`` samples the child for
``--seconds`` while it repeats the workload, and the table gives each compiled function's share of the samples in
compiled code (inlined functions count in their caller).  Needs ``perf`` and ``nm`` (binutils); the machine's own
``perf_event_paranoid`` must allow recording a child process.

``--lines N`` also lists the N source lines with the most samples: the child compiles with debug info
(``NUMBA_DEBUGINFO=1``) for its line tables, but undoes what numba's debug mode changes besides (bounds checks,
variables kept alive, no inlining), so that the code sampled is the program's.  It keeps each library's object,
and ``addr2line`` gives every sampled address its innermost source line (an inlined function's own line).
"""

from __future__ import annotations

import argparse
import bisect
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from instructions import WORKLOAD, WORKLOADS

PRELUDE = r'''
import os
if os.environ.get("PROFILE_OBJDIR"):  # --lines: debug info for its line tables, the program's code otherwise
    from numba.core import cpu, lowering

    def _finalize(self, flags, options, _finalize=cpu.CPUTargetOptions.finalize):
        _finalize(self, flags, options)
        flags.boundscheck = False  # debug info turns on bounds checks and longer lifetimes: not the program's code
        flags.dbg_extend_lifetimes = False

    def _pre_lower(self, _pre_lower=lowering.Lower.pre_lower):
        _pre_lower(self)
        self.builder.function.attributes.discard("noinline")  # and forbids inlining

    cpu.CPUTargetOptions.finalize = _finalize
    lowering.Lower.pre_lower = _pre_lower
'''

MAPPER = r'''
import gc, subprocess, tempfile
from numba.core.registry import CPUDispatcher, cpu_target

def perf_map():
    """Write /tmp/perf-PID.map: each compiled library's text symbols, placed by its entry point; NRT's counting."""
    rows, objects = [], []
    for obj in gc.get_objects():
        if not (isinstance(obj, CPUDispatcher) and obj.overloads):
            continue
        for cres in obj.overloads.values():
            try:
                blob = cres.library._get_compiled_object()  # only a library compiled in this process keeps it
            except RuntimeError:
                continue
            with tempfile.NamedTemporaryFile(suffix=".o") as fh:
                fh.write(blob)
                fh.flush()
                listing = subprocess.run(["nm", "-S", "--defined-only", fh.name], capture_output=True,
                                         text=True, check=True).stdout
            syms = {p[3]: (int(p[0], 16), int(p[1], 16)) for p in map(str.split, listing.splitlines())
                    if len(p) == 4 and p[2] in "tT"}
            entry = cres.fndesc.llvm_func_name
            if entry in syms:
                base = cres.library.get_pointer_to_function(entry) - syms[entry][0]
                rows += [(base + off, size, sym) for sym, (off, size) in syms.items()]
                if OBJDIR:  # --lines: keep the object (with NUMBA_DEBUGINFO's line tables) and where it lies
                    path = os.path.join(OBJDIR, f"{len(objects)}.o")
                    with open(path, "wb") as out:
                        out.write(blob)
                    objects.append(f"{base:x} {base + max(o + z for o, z in syms.values()):x} {path}\n")
    engine = cpu_target.target_context.codegen()._engine
    rows += [(engine.get_function_address(s), 16, s) for s in ("NRT_incref", "NRT_decref")]
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        fh.writelines(f"{a:x} {s:x} {n}\n" for a, s, n in sorted(rows) if a)
    if OBJDIR:
        with open(os.path.join(OBJDIR, "index"), "w") as fh:
            fh.writelines(objects)

OBJDIR = os.environ.get("PROFILE_OBJDIR", "")
'''

TAIL = r'''
import time
run()  # compiles everything the workload calls, into the empty cache
perf_map()
print("READY", flush=True)
t0, done = time.perf_counter(), 0
while time.perf_counter() - t0 < float(os.environ["PROFILE_SECONDS"]) + 3:  # outlasts perf's recording
    done += run()
print("UNITS", done, time.perf_counter() - t0, flush=True)
'''


def short(symbol: str) -> str:
    """``module.function`` of a numba symbol (Itanium-mangled ``_ZN<len><name>...``), else the symbol itself."""
    m = re.match(r"_ZN(.*?)B\d", symbol)
    if not m:
        return symbol
    parts, rest = [], m.group(1)
    while rest and rest[0].isdigit():
        n = int(re.match(r"\d+", rest).group())
        k = len(str(n))
        parts.append(rest[k:k + n])
        rest = rest[k + n:]
    return ".".join(parts[-2:])


def line_shares(data: Path, objdir: Path) -> Counter[str]:
    """Samples per source line (``file:line``, the innermost inlined one) of the compiled code in ``perf.data``."""
    libs = sorted((int(lo, 16), int(hi, 16), path) for lo, hi, path in
                  map(str.split, (objdir / "index").read_text().splitlines()))
    ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True,
                         check=True).stdout.split()
    offsets: dict[str, list[int]] = {}
    for ip in (int(x, 16) for x in ips):
        k = bisect.bisect_right(libs, (ip, float("inf"), "")) - 1
        if k >= 0 and ip < libs[k][1]:
            offsets.setdefault(libs[k][2], []).append(ip - libs[k][0])
    lines: Counter[str] = Counter()
    for path, offs in offsets.items():
        # -a: each address, then its innermost source line (the inlined function's own, where one was inlined)
        out = subprocess.run(["addr2line", "-e", path, "-a"], input="".join(f"{o:x}\n" for o in offs),
                             capture_output=True, text=True, check=True).stdout.splitlines()
        lines.update(where.split(" ")[0] for where in out[1::2])
    return lines


def profile(workload: str, seconds: float, lines: bool = False) -> tuple[Counter[str], float, Counter[str]]:
    """(samples per compiled function, their share of all the child's samples, samples per source line: only with
    ``lines``, which compiles with line tables, ``NUMBA_DEBUGINFO``) of ``workload``."""
    with tempfile.TemporaryDirectory() as tmp:
        objdir = Path(tmp) / "objects" if lines else None
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "cache"), NUMBA_NUM_THREADS="1",
                   PROFILE_SECONDS=str(seconds))
        if objdir is not None:
            objdir.mkdir()
            env.update(NUMBA_DEBUGINFO="1", PROFILE_OBJDIR=str(objdir))
        child = subprocess.Popen([sys.executable, "-c", PRELUDE + WORKLOAD + MAPPER + TAIL, workload, "0"], env=env,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("READY"):
                break
        else:
            raise SystemExit(f"profile_jit: the {workload} workload ended before it was ready (exit {child.wait()})")
        data = Path(tmp) / "perf.data"
        subprocess.run(["perf", "record", "-q", "-F", "1999", "-p", str(child.pid), "-o", str(data), "--", "sleep",
                        str(seconds)], check=True, capture_output=True)
        child.wait()
        by_line = line_shares(data, objdir) if objdir is not None else Counter()
        report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "dso,symbol",
                                 "--stdio"], capture_output=True, text=True, check=True).stdout
        Path(f"/tmp/perf-{child.pid}.map").unlink(missing_ok=True)
    shares: Counter[str] = Counter()
    total = 0.0
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S.*?)\s+\[\.\]\s+(\S+)", line)
        if m:
            total += float(m.group(1))
            if m.group(2).startswith("[JIT]"):
                shares[short(m.group(3))] += float(m.group(1))
    return shares, sum(shares.values()) / total if total else 0.0, by_line


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, checked: SystemExit with a one-line message naming a bad option."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", choices=WORKLOADS)
    p.add_argument("--seconds", type=float, default=15.0, help="how long perf records (1 to 600)")
    p.add_argument("--top", type=int, default=25, help="how many functions the table lists (1 to 500)")
    p.add_argument("--lines", type=int, default=0,
                   help="also list this many source lines by share (0 to 500; compiles with line tables)")
    a = p.parse_args(argv)
    if not 1 <= a.seconds <= 600:
        raise SystemExit("profile_jit: --seconds must be 1 to 600")
    if not 1 <= a.top <= 500:
        raise SystemExit("profile_jit: --top must be 1 to 500")
    if not 0 <= a.lines <= 500:
        raise SystemExit("profile_jit: --lines must be 0 to 500")
    return a


def main() -> None:
    """Print the table of the workload's compiled functions by share (module docstring)."""
    a = parse()
    shares, jit, by_line = profile(a.workload, a.seconds, a.lines > 0)
    total = sum(shares.values())
    print(f"{a.workload}: {jit:.0%} of the samples in compiled code; of those:")
    print("| share | function |\n|---:|---|")
    for name, v in shares.most_common(a.top):
        print(f"| {v / total:.1%} | `{name}` |")
    counting = sum(v for k, v in shares.items() if k in ("NRT_incref", "NRT_decref"))
    print(f"\nreference counting (NRT_incref, NRT_decref): {counting / total:.1%}")
    if a.lines:
        print("\n| share | line | source |\n|---:|---|---|")
        n = sum(by_line.values())
        for where, v in by_line.most_common(a.lines):
            print(f"| {v / n:.1%} | {where.rsplit('/', 1)[-1]} | `{source_line(where)}` |")


def source_line(where: str) -> str:
    """The text of ``file:line``, stripped, or ``?`` where the file or line is unknown."""
    path, _, line = where.rpartition(":")
    try:
        n = int(line)
        return Path(path).read_text().splitlines()[n - 1].strip() if n >= 1 else "?"
    except (OSError, ValueError, IndexError):
        return "?"


if __name__ == "__main__":
    main()
