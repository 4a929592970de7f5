"""The register report's own code, fast (krypenv.eval.ptxas): parsing recorded ``ptxas -v`` output, the command it
runs (a stand-in ptxas that records its arguments), the budgets table, the rows and the command line, and the kernel
signatures against the ones the device envs really launch with (recorded in numba's CUDA simulator).

tests/cuda/test_registers.py compiles and assembles the real kernels (slow); these need neither a GPU nor ptxas.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import stat
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from krypenv.eval import ptxas as B

ROOT = Path(__file__).resolve().parents[2]
LOGS = Path(__file__).with_name("ptxas_logs")  # ptxas 13.5's -v output for cuda_util.pick, recorded 2026-11-27


def log(name: str) -> str:
    """A recorded log: ``pick-free`` (assembled as is) or ``pick-24`` (with -maxrregcount=24)."""
    return (LOGS / f"{name}.log").read_text()


# ---------------------------------------------------------------------------------------------------- parsing
def test_parse_reads_recorded_ptxas_output() -> None:
    """The figures ptxas printed, read back: 30 registers and nothing spilled; squeezed into 24, 40 + 32 bytes
    spilled in a 16-byte frame (the line that overrides the register limit comes before the entry's)."""
    assert B.parse(log("pick-free")) == B.Resources(30, 0, 0, 0, 0.0)
    assert B.parse(log("pick-24")) == B.Resources(24, 16, 40, 32, 0.0)


def test_parse_takes_the_registers_of_the_entry_not_of_an_earlier_function() -> None:
    """A called function compiled before the entry reports its own registers and frame: the entry's count and frame
    are the ones after its ``Compiling entry function`` line, while every function's spills add up."""
    before = ("ptxas info    : Function properties for _Z6helperv\n"
              "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
              "ptxas info    : Used 99 registers\n")
    r = B.parse(before + log("pick-24"))
    assert (r.registers, r.stack_bytes, r.spill_stores, r.spill_loads) == (24, 16, 44, 36)


def test_parse_errors_quote_the_end_of_the_log() -> None:
    """An unreadable log is an error that quotes the log's last 2,000 characters (where ptxas writes its summary)."""
    tail = "Z" * 2000
    with pytest.raises(ValueError, match="no entry function") as e:
        B.parse("A" * 500 + tail)
    assert str(e.value).endswith("\n" + tail)
    with pytest.raises(ValueError, match="no registers or stack frame") as e:
        B.parse(log("pick-free").replace("bytes stack frame", "bytes frame") + tail)
    assert str(e.value).split("frame:\n", 1)[1] == tail


# ---------------------------------------------------------------------------------------------------- assembling
@pytest.fixture
def fake_ptxas(tmp_path: Path) -> Path:
    """A stand-in ptxas: records its arguments and the PTX it was given, prints a recorded log (``FAKE_LOG``) half to
    stdout, half to stderr, and exits with ``FAKE_RC``."""
    path = tmp_path / "ptxas"
    path.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, sys
        from pathlib import Path
        rec = Path(os.environ["FAKE_RECORD"])
        src = next(a for a in sys.argv[1:] if a.endswith(".ptx"))
        rec.write_text(json.dumps({{"argv": sys.argv[1:], "ptx": Path(src).read_text()}}))
        text = Path(os.environ["FAKE_LOG"]).read_text()
        lines = text.splitlines(keepends=True)
        sys.stdout.write("".join(lines[:2]))
        sys.stderr.write("".join(lines[2:]))
        sys.exit(int(os.environ.get("FAKE_RC", "0")))
        """))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run_fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str, rc: int = 0) -> Path:
    """Point the stand-in at recorded log ``name`` and exit status ``rc``; the file it records to."""
    monkeypatch.setenv("FAKE_RECORD", str(tmp_path / "record.json"))
    monkeypatch.setenv("FAKE_LOG", str(LOGS / f"{name}.log"))
    monkeypatch.setenv("FAKE_RC", str(rc))
    return tmp_path / "record.json"


def test_assemble_runs_ptxas_verbose_for_hopper_on_the_ptx(fake_ptxas: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``ptxas -v -arch=sm_90a KERNEL.ptx -o KERNEL.cubin`` on exactly the PTX given, no register cap unless asked;
    stdout and stderr are read together, and the wall time is measured."""
    record = run_fake(monkeypatch, tmp_path, "pick-24")
    r = B.assemble(".version 9.0\n// the kernel\n", ptxas=str(fake_ptxas))
    seen = json.loads(record.read_text())
    assert seen["ptx"] == ".version 9.0\n// the kernel\n"
    argv = seen["argv"]
    assert argv[:2] == ["-v", "-arch=sm_90a"] and len(argv) == 5
    assert argv[2].endswith("kernel.ptx") and argv[3] == "-o" and argv[4].endswith("kernel.cubin")
    assert Path(argv[2]).parent == Path(argv[4]).parent and not Path(argv[2]).parent.exists()  # a removed temp dir
    assert (r.registers, r.stack_bytes, r.spill_stores, r.spill_loads) == (24, 16, 40, 32)
    assert 0.0 < r.seconds < 60.0


def test_assemble_caps_the_registers_when_asked(fake_ptxas: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``max_registers`` is passed as ``-maxrregcount=N`` ahead of the other options; None and 0 pass no cap."""
    record = run_fake(monkeypatch, tmp_path, "pick-free")
    B.assemble("ptx", max_registers=96, ptxas=str(fake_ptxas))
    assert json.loads(record.read_text())["argv"][:3] == ["-maxrregcount=96", "-v", "-arch=sm_90a"]
    for none in (None, 0):
        B.assemble("ptx", max_registers=none, ptxas=str(fake_ptxas))
        assert not any(a.startswith("-maxrregcount") for a in json.loads(record.read_text())["argv"])


def test_assemble_reports_a_failed_ptxas_with_its_message(fake_ptxas: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """ptxas exiting non-zero is a RuntimeError with its status and the end of what it wrote to stderr."""
    run_fake(monkeypatch, tmp_path, "pick-24", rc=3)
    with pytest.raises(RuntimeError, match=r"ptxas failed \(3\)") as e:
        B.assemble("ptx", ptxas=str(fake_ptxas))
    assert "Used 24 registers" in str(e.value) and "Overriding maximum" not in str(e.value)  # stderr only
    long = tmp_path / "long.log"
    long.write_text("line 1\nline 2\n" + "E" * 2500)
    monkeypatch.setenv("FAKE_LOG", str(long))
    with pytest.raises(RuntimeError) as e:
        B.assemble("ptx", ptxas=str(fake_ptxas))
    assert str(e.value) == "ptxas failed (3): " + "E" * 2000  # the last 2,000 characters


def test_assemble_without_ptxas_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ptxas given and none installed: a FileNotFoundError naming the extra to install."""
    monkeypatch.setattr(B, "ptxas_path", lambda: None)
    with pytest.raises(FileNotFoundError, match=r"^ptxas is not installed: pip install 'krypenv\[ptxas\]'"):
        B.assemble("ptx")


def test_assemble_uses_the_installed_ptxas_by_default(fake_ptxas: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``ptxas=``, the one :func:`ptxas_path` finds runs."""
    record = run_fake(monkeypatch, tmp_path, "pick-free")
    monkeypatch.setattr(B, "ptxas_path", lambda: str(fake_ptxas))
    assert B.assemble("ptx").registers == 30 and record.exists()


class FakeDist:
    """A stand-in for an installed distribution's metadata: its files, located under ``root``."""

    def __init__(self, root: Path, names: list[str]) -> None:
        self.root = root
        self.files = [Path("nvidia/cu13/bin") / n for n in names]

    def locate_file(self, f: Path) -> Path:
        """Where file ``f`` of the distribution lies."""
        return self.root / f


def test_ptxas_path_finds_the_wheels_ptxas_only_when_it_exists(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``nvidia-cuda-nvcc`` distribution's file named exactly ``ptxas``, if it is on disk; else None."""
    asked: list[str] = []

    def dist(name: str, files: list[str]) -> Any:
        asked.append(name)
        return FakeDist(tmp_path, files)

    monkeypatch.setattr(importlib.metadata, "distribution", lambda n: dist(n, ["ptxas.exe.bak", "ptxas"]))
    assert B.ptxas_path() is None  # listed, not on disk
    exe = tmp_path / "nvidia/cu13/bin/ptxas"
    exe.parent.mkdir(parents=True)
    exe.write_text("")
    assert B.ptxas_path() == str(exe)
    assert asked[-1] == "nvidia-cuda-nvcc"
    monkeypatch.setattr(importlib.metadata, "distribution", lambda n: dist(n, ["nvdisasm"]))
    assert B.ptxas_path() is None  # the wheel without ptxas

    def missing(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    assert B.ptxas_path() is None


# ---------------------------------------------------------------------------------------------------- budgets
def test_the_budgets_are_each_games_stated_budgets_and_cuda_utils() -> None:
    """:data:`KERNELS` is every game's ``bench.REGISTER_BUDGETS`` under ``game.what`` (the kind before the first dot),
    then cuda_util's two kernels at 32 registers, nothing spilled."""
    from krypenv.games import GAMES

    want = {}
    for game in GAMES:
        for what, (policy, part, registers, spilled) in GAMES[game].part("bench").REGISTER_BUDGETS.items():
            want[f"{game}.{what}"] = B.Kernel(game, what.split(".")[0], policy, part, registers, spilled)
    want["util.check"] = B.Kernel(None, "util", "check", None, 32, 0)
    want["util.pick"] = B.Kernel(None, "util", "pick", None, 32, 0)
    assert B._kernels() == B.KERNELS == want
    assert list(B.KERNELS)[-2:] == ["util.check", "util.pick"]


# ---------------------------------------------------------------------------------------------------- the stand-ins
def test_host_arrays_are_column_major_zeros() -> None:
    """The stand-ins are zeros of the shape and dtype asked, column-major (as the device's arrays), on the CPU."""
    h = B.HostArrays()
    a = h.empty((3, 5), np.int16)
    assert a.shape == (3, 5) and a.dtype == np.int16 and a.flags.f_contiguous and not a.flags.c_contiguous
    assert not a.any() and h.device == "cpu"
    c = np.arange(6).reshape(2, 3)
    f = h.to_device(c)
    assert f.flags.f_contiguous and np.array_equal(f, c)


def test_types_are_column_major_for_every_array_of_two_or_more_dimensions() -> None:
    """2-D (and more) arrays are typed column-major ('F', as numba-cuda sees the device arrays), 1-D as they are,
    scalars by value; the signature returns void."""
    from numba.core import types as nt

    sig = B._types([np.zeros((2, 3), np.int8), np.zeros(4, np.uint64), 7, True, np.zeros((2, 2, 2))])
    assert sig.return_type == nt.void
    assert list(sig.args) == [nt.Array(nt.int8, 2, "F"), nt.Array(nt.uint64, 1, "C"), nt.int64, nt.boolean,
                              nt.Array(nt.float64, 3, "F")]


def test_hopper_answers_compute_capability_9_0_and_restores_the_device_query() -> None:
    """Inside, numba-cuda's dispatcher is told the device is 9.0; afterwards (even after an error) the real query
    is back."""
    pytest.importorskip("numba_cuda")
    from numba.cuda import dispatcher

    original = dispatcher.get_current_device
    with B._hopper():
        assert dispatcher.get_current_device().compute_capability == (9, 0)
    assert dispatcher.get_current_device is original
    with pytest.raises(KeyError), B._hopper():
        raise KeyError("x")
    assert dispatcher.get_current_device is original


def test_compile_ptx_targets_sm_90a_and_times_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda_util's pick compiles to PTX for sm_90a (no GPU), and the seconds returned are the compile's (a clock
    that ticks one second per reading gives exactly 1)."""
    pytest.importorskip("numba_cuda")
    ticks = iter(range(1000, 2000))
    monkeypatch.setattr(B, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    ptx, seconds = B.compile_ptx("util.pick")
    assert ".target sm_90a" in ptx and ".entry" in ptx
    assert seconds == 1.0


# ---------------------------------------------------------------------------------------------------- rows, CLI
def fake_measure_parts(monkeypatch: pytest.MonkeyPatch, resources: B.Resources, own_cap: int | None = None
                       ) -> list[Any]:
    """Replace the compile and the assembler with stand-ins; the (ptx, max_registers) of every assemble call."""
    calls: list[Any] = []

    def assemble(ptx: str, max_registers: int | None = None) -> B.Resources:
        calls.append((ptx, max_registers))
        return resources

    class Kernel:
        targetoptions = {"max_registers": own_cap} if own_cap else {}

    def kernel_and_signature(name: str) -> tuple[Any, None]:
        assert name in B.KERNELS, name
        return Kernel(), None

    monkeypatch.setattr(B, "assemble", assemble)
    monkeypatch.setattr(B, "kernel_and_signature", kernel_and_signature)
    return calls


def test_measure_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row holds the assembler's figures, the occupancy they allow, the budget, the PTX's size in KiB and both
    stages' seconds rounded to 0.01."""
    calls = fake_measure_parts(monkeypatch, B.Resources(200, 64, 8, 12, 3.14159))
    row = B.measure("krypkasino.env.seats", ptx_of=lambda n: ("x" * 7168 if n == "krypkasino.env.seats" else "",
                                                              12.3456))
    spec = B.KERNELS["krypkasino.env.seats"]
    assert row == {"kernel": "krypkasino.env.seats", "registers": 200, "stack_bytes": 64, "spill_stores": 8,
                   "spill_loads": 12, "threads_per_sm": 256, "budget_registers": spec.registers,
                   "budget_spilled": spec.spilled, "ptx_kib": 7, "ptx_seconds": 12.35, "ptxas_seconds": 3.14,
                   "within_budget": False}
    assert calls == [("x" * 7168, None)]


def test_measure_caps_with_the_option_else_the_kernels_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The register cap passed is ``max_registers`` if given, else the kernel's own ``max_registers``."""
    calls = fake_measure_parts(monkeypatch, B.Resources(32, 0, 0, 0, 0.0), own_cap=64)
    B.measure("util.pick", ptx_of=lambda n: ("p", 0.0))
    B.measure("util.pick", ptx_of=lambda n: ("p", 0.0), max_registers=40)
    assert [c[1] for c in calls] == [64, 40]
    assert B.measure("util.pick", ptx_of=lambda n: ("p", 0.0))["within_budget"] is True


def fake_rows(monkeypatch: pytest.MonkeyPatch, over: set[str]) -> list[Any]:
    """Replace :func:`measure` with one that makes each named kernel's row (over budget where named in ``over``)."""
    calls: list[Any] = []

    def measure(name: str, max_registers: int | None = None) -> dict[str, Any]:
        calls.append((name, max_registers))
        return {"kernel": name, "registers": 40, "stack_bytes": 16, "spill_stores": 8, "spill_loads": 24,
                "threads_per_sm": 1536, "budget_registers": 32, "budget_spilled": 0, "ptx_kib": 20,
                "ptx_seconds": 0.71, "ptxas_seconds": 0.06, "within_budget": name not in over}

    monkeypatch.setattr(B, "measure", measure)
    return calls


def test_main_prints_a_table_and_exits_0_within_budget(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The table: a header, then one fixed-width row per kernel asked, in order; exit status 0."""
    calls = fake_rows(monkeypatch, set())
    assert B.main(["util.pick", "util.check"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["kernel", "regs", "stack", "B", "spill", "st/ld", "B", "thr/SM", "budget", "PTX",
                                "s", "ptxas", "s"]
    assert lines[1] == f"{'util.pick':28}    40       16      8/24         1536    32/0       0.7     0.1"
    assert lines[2].startswith("util.check ") and len(lines) == 3
    assert calls == [("util.pick", None), ("util.check", None)]


def test_main_marks_a_kernel_over_budget_and_exits_1(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel over its budget is marked in its row and the exit status is 1; every kernel by default."""
    calls = fake_rows(monkeypatch, {"util.check"})
    assert B.main(["--max-registers", "64"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [c[0] for c in calls] == list(B.KERNELS) and {c[1] for c in calls} == {64}
    marked = [line.split()[0] for line in out if line.endswith("  OVER BUDGET")]
    assert marked == ["util.check"]


def test_main_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``--json``: one object with the architecture, the ptxas used and the rows; no table."""
    fake_rows(monkeypatch, set())
    monkeypatch.setattr(B, "ptxas_path", lambda: "/opt/ptxas")
    assert B.main(["--json", "util.pick"]) == 0
    text = capsys.readouterr().out
    assert text.startswith('{\n "arch": "sm_90a",\n')  # indented by one
    got = json.loads(text)
    assert got["arch"] == "sm_90a" and got["ptxas"] == "/opt/ptxas"
    assert [r["kernel"] for r in got["kernels"]] == ["util.pick"]


@pytest.mark.parametrize("bad", [["--max-registers", "many"], ["util.pick", "util.pik"]])
def test_main_rejects_bad_arguments_before_measuring(bad: list[str], monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A register cap that is not a number, or a misspelt kernel among good ones, is a usage error and nothing is
    measured."""
    calls = fake_rows(monkeypatch, set())
    with pytest.raises(SystemExit) as e:
        B.main(bad)
    assert e.value.code == 2 and calls == []
    assert "python -m krypenv.eval.ptxas" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------- signatures
@pytest.fixture(scope="module")
def launched() -> dict[str, str]:
    """The signatures the device envs launch their kernels with, recorded in the simulator (tests/cuda/
    launch_signatures.py, a subprocess: the simulator is chosen when numba.cuda is first imported)."""
    out = subprocess.run([sys.executable, "-m", "tests.cuda.launch_signatures"], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=False, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", [n for n, k in B.KERNELS.items() if k.what == "env" or n == "util.check"])
def test_the_report_compiles_each_kernel_for_the_types_the_env_launches_it_with(name: str,
                                                                                launched: dict[str, str]) -> None:
    """Each env kernel part, and the action check, is measured for exactly the argument types a device env passes
    it (the compiled expert's parts in an env whose opponents are the expert), so the registers reported are those
    of the kernel that runs."""
    spec = B.KERNELS[name]
    game = spec.game or "krypkasino"
    part = spec.part if spec.what == "env" else f"util.{spec.policy}"
    kernel, sig = B.kernel_and_signature(name)
    assert str(sig) == launched[f"{game} {spec.policy if spec.what == 'env' and spec.policy else 'none'} {part}"]
    assert len(sig.args) == kernel.py_func.__code__.co_argcount


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="numba-cuda is not installed")
def test_the_report_compiles_pimcs_kernel_for_the_types_device_cuda_launches_it_with() -> None:
    """pimc's search kernel is measured for the argument types its ``device=cuda`` launch passes (the decisions of a
    real batch gathered by ``launch_args``, then the thread count), so the registers reported are those that run."""
    from krypenv.agents.krypkasino import pimc_cuda
    from numba import typeof

    from krypenv import agents
    from tests.agents.krypkasino.test_heuristics import decisions_of

    agent = agents.load("pimc")
    core, batch = next(decisions_of(3, 5, n=4))
    game, u, envs, _ = agent._inputs(batch)
    args = (*pimc_cuda.launch_args(core.deals.state, core.choice, envs, game, agent.opts, agent.z, agent.weights,
                                   agent.later_kinds, agent.later_sizes, u), 4)
    kernel, sig = B.kernel_and_signature("krypkasino.search.pimc")
    assert [typeof(a) for a in args] == list(sig.args)
    assert len(sig.args) == kernel.py_func.__code__.co_argcount


def test_main_help_names_the_kernels_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help``: the program's name, the docstring's first line, every kernel and what each option does."""
    with pytest.raises(SystemExit) as e:
        B.main(["--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("usage: python -m krypenv.eval.ptxas [-h] [--json] [--max-registers N] [names ...]")
    assert " ".join(B.__doc__.splitlines()[0].split()) in out
    assert f"kernels (default: all of {', '.join(B.KERNELS)})" in out
    assert "--json one JSON object" in out
    assert "--max-registers N assemble with -maxrregcount=N (what a register cap would cost in spills)" in out


def test_main_lists_the_known_kernels_for_a_misspelt_one(capsys: pytest.CaptureFixture[str]) -> None:
    """The usage error for an unknown kernel lists every known one, comma-separated."""
    with pytest.raises(SystemExit):
        B.main(["util.pik"])
    assert f"unknown kernel 'util.pik'; known: {', '.join(B.KERNELS)}" in " ".join(capsys.readouterr().err.split())


def test_the_random_pick_is_measured_as_the_device_benchmark_launches_it() -> None:
    """``util.pick`` takes (masks, uniforms, actions) as krypenv.bench_device launches it: int8 masks column-major,
    float64 uniforms, int64 actions; ``util.check`` (masks, actions, the flag) is the env's (the test above)."""
    from numba.core import types as nt

    kernel, sig = B.kernel_and_signature("util.pick")
    assert kernel.py_func.__name__ == "pick"
    assert list(sig.args) == [nt.Array(nt.int8, 2, "F"), nt.Array(nt.float64, 1, "C"), nt.Array(nt.int64, 1, "C")]


@pytest.mark.parametrize("game", ["krypkasino", "kungsholmskille"])
def test_each_engine_kernel_is_measured_with_the_benchmarks_own_arguments(game: str) -> None:
    """A game's engine kernel is the one its GPU benchmark launches (``engine_play``), typed from the arguments the
    benchmark's own setup builds for its table's player count."""
    pytest.importorskip("numba_cuda")
    from krypenv.games import GAMES

    bench = GAMES[game].part("bench")
    kernel, sig = B.kernel_and_signature(f"{game}.engine")
    assert kernel is GAMES[game].part("cuda_kernels").engine_play()
    launch = bench.gpu_engine_setup(B.HostArrays(), 4, bench.GPU_PLAYERS, 4)[0]["launch"]
    assert sig == B._types(list(launch(1)))
    assert len(sig.args) == kernel.py_func.__code__.co_argcount


@pytest.mark.parametrize("name", [n for n, k in B.KERNELS.items() if k.what == "env"])
def test_each_env_kernel_measured_is_the_part_the_env_builds(name: str) -> None:
    """The kernel measured is the env's own part for its policy: the compiled expert's ``seats`` for an expert row,
    the shared no-policy part otherwise (the same types either way, so only the kernel itself tells them apart)."""
    pytest.importorskip("numba_cuda")
    from krypenv import agents
    from krypenv.games import GAMES

    spec = B.KERNELS[name]
    module = GAMES[spec.game].part("cuda_kernels")
    env = GAMES[spec.game].part("device").DeviceVecEnv(2, device="cpu")
    key = agents.load(spec.policy, game=spec.game).device_policy(env.core.rules).build_key if spec.policy else None
    kernel, _ = B.kernel_and_signature(name)
    assert kernel is module.build(key).parts[spec.part]
    assert (kernel is module.build(None).parts[spec.part]) == (spec.policy is None)
