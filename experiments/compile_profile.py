"""Where numba's compile time goes, from the rows of experiments/compile_events/sitecustomize.py.

Run a command with the recorder on, then sum its rows::

    mkdir -p /tmp/compiles && KRYPENV_COMPILE_LOG=/tmp/compiles PYTHONPATH=experiments/compile_events \\
        python -m pytest -n 2 -p no:cacheprovider          # in a fresh clone: every kernel compiled
    python experiments/compile_profile.py /tmp/compiles

It prints the seconds per process, the most expensive functions, and three kinds of compile: parallel drivers
(``*_par``), specializations for column-major or strided arrays (layout ``F`` or ``A``) and for literal arguments,
with the part of the literal ones that a general specialization compiled in the same process (or, with a shared
cache, in any) would have spared.
"""

from __future__ import annotations

import argparse
import collections
import re
from pathlib import Path


def rows(folder: Path) -> list[tuple[str, str, float, str]]:
    """(process: its pid and command, function, own seconds, argument types) for every compile recorded in
    ``folder``."""
    out = []
    for path in sorted(folder.glob("*.tsv")):
        lines = path.read_text().splitlines()
        for line in lines[1:]:
            name, own, _, args = line.split("\t", 3)
            out.append((f"{path.stem} {lines[0][1:]}", name, float(own), args))
    return out


def unliteral(args: str) -> str:
    """The argument types with every literal replaced by its type."""
    return re.sub(r"Literal\[bool\]\((True|False)\)", "bool", re.sub(r"Literal\[int\]\(-?\d+\)", "int64", args))


def literal_excess(recorded: list[tuple[str, str, float, str]], shared: bool) -> float:
    """Seconds spent compiling a function again for literal arguments, within each process (or across all)."""
    seen, excess = set(), 0.0
    for command, name, own, args in recorded:
        key = (None if shared else command, name, unliteral(args))
        if key in seen:
            excess += own
        seen.add(key)
    return excess


def main() -> None:
    """Print the summary of one recorded run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    recorded = rows(args.folder)
    per_process, per_function = collections.Counter(), collections.Counter()
    for command, name, own, _ in recorded:
        per_process[command[:100]] += own
        per_function[name] += own
    print(f"{len(recorded)} compiles, {sum(per_process.values()):.0f} s in {len(per_process)} processes")
    for command, seconds in per_process.most_common():
        print(f"{seconds:8.1f} s  {command}")
    print(f"parallel drivers: {sum(o for _, n, o, _ in recorded if n.endswith('_par')):.0f} s")
    strided = sum(own for *_, own, types in recorded if "'F'" in types or "'A'" in types)
    print(f"column-major or strided arrays: {strided:.0f} s")
    print(f"literal arguments: {sum(o for *_, o, a in recorded if 'Literal' in a):.0f} s, compiled again: "
          f"{literal_excess(recorded, False):.0f} s in the same process, {literal_excess(recorded, True):.0f} s in any")
    for name, seconds in per_function.most_common(args.top):
        print(f"{seconds:8.1f} s  {name}")


if __name__ == "__main__":
    main()
