"""The device env's kernels in numba-cuda's disk cache: a second process loads what the first compiled (the cubin
under the key numba-cuda looks up on an H100), and the key changes with the code the kernels call.

The cross-process check runs tests/cuda/cache_check.py twice, in fresh processes sharing a ``NUMBA_CACHE_DIR``
(its docstring says what is real there: all but the GPU).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from krypenv.envs import cuda as C

ROOT = Path(__file__).resolve().parents[2]
needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed (pip install 'krypenv[cuda]')")
KERNELS = ("kungsholmskille.env.expert.seats", "kungsholmskille.engine", "util.pick")


def phase(name: str, cache: Path) -> subprocess.CompletedProcess:
    """One fresh process of tests/cuda/cache_check.py."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_ENABLE_CUDASIM": "0"}
    return subprocess.run([sys.executable, "-m", "tests.cuda.cache_check", name, *KERNELS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800, check=False)


@pytest.mark.slow
@needs_numba_cuda
def test_a_second_process_loads_the_kernels_from_the_disk_cache(tmp_path: Path) -> None:
    """The first process compiles and saves each kernel (a miss); the second finds it (a hit) and binds the saved
    cubin without linking anything: a policy's kernel, the engine's, a shared one."""
    first = phase("save", tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    second = phase("load", tmp_path)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    for name in KERNELS:
        assert f"save {name}: cache hits 0, misses 1, cubins loaded 1" in first.stdout
        assert f"load {name}: cache hits 1, misses 0, cubins loaded 1" in second.stdout
    saved = [line.rsplit("(", 1)[1] for line in first.stdout.splitlines() if line.startswith("save")]
    assert saved == [line.rsplit("(", 1)[1] for line in second.stdout.splitlines() if line.startswith("load")]


def test_cached_refuses_a_closure_that_pickles_differently_per_process() -> None:
    """A compiled function in a kernel's closure would give the cache key a random per-process id: refused."""
    from numba import njit

    helper = njit(lambda x: x)
    n = 3

    def plain(a):
        a[0] = n

    def holds_a_function(a):
        a[0] = helper(n)

    assert C.cached(plain) is not None
    with pytest.raises(ValueError, match="closure holds helper="):
        C.cached(holds_a_function)


def test_rebind_gives_a_copy_its_own_globals() -> None:
    """The copy calls the bound object; the original and its module are untouched."""
    def template():
        return C.SIMULATOR

    copy = C.rebind(template, C=type("C", (), {"SIMULATOR": "bound"}))
    assert copy() == "bound" and template() == C.SIMULATOR
    assert copy.__qualname__ == template.__qualname__ and copy.__code__ is template.__code__


def test_source_digest_changes_with_any_file_of_a_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Editing any file below a package (or a single module) gives another digest; the same files the same one."""
    pkg = tmp_path / "digestpkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "rules.py").write_text("X = 1\n")
    (tmp_path / "lone.py").write_text("Y = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = C.source_digest("digestpkg", "lone")
    assert before == C.source_digest("digestpkg", "lone") and 0 <= before < 2**62
    (pkg / "sub" / "rules.py").write_text("X = 2\n")
    after = C.source_digest("digestpkg", "lone")
    assert after != before
    (tmp_path / "lone.py").write_text("Y = 2\n")
    assert C.source_digest("digestpkg", "lone") != after
    assert C.source_digest("digestpkg") != C.source_digest("digestpkg", "lone")
    with pytest.raises(ValueError, match="no module 'nosuchmodule'"):
        C.source_digest("nosuchmodule")
