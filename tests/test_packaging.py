"""What the wheel installs: one top-level name, ``krypenv``, with every package of the source folders in it."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def source_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under the mapped source folders, as its installed dotted name."""
    folders = {"krypenv": "krypenv", **{pkg: folder for pkg, folder in SETUPTOOLS["package-dir"].items()}}
    found = set()
    for package, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            if not any(part.startswith((".", "_")) for part in rel):
                found.add(".".join((package, *rel)))
    return found


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """A new package folder that pyproject's ``packages`` leaves out would be missing from the wheel."""
    listed = set(SETUPTOOLS["packages"])
    assert source_packages() - listed == set()
    assert {name.split(".")[0] for name in listed} == {"krypenv"}
    assert SETUPTOOLS["package-dir"] == {"krypenv.agents": "agents", "krypenv.eval": "eval",
                                         "krypenv.checkpoints": "checkpoints"}
    import krypenv  # the numba cache's hash reads the code folders a checkout keeps outside krypenv/

    assert {ROOT / "agents", ROOT / "eval"} <= set(krypenv.package_folders())


@pytest.mark.slow
def test_the_wheel_installs_only_krypenv(tmp_path: Path) -> None:
    """``pip wheel .``: the only top-level names are ``krypenv`` and its dist-info; agents, eval, checkpoints inside."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    (wheel,) = tmp_path.glob("krypenv-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"krypenv", wheel.name.split("-")[0] + "-" +
                                                wheel.name.split("-")[1] + ".dist-info"}
    for must in ("krypenv/agents/base.py", "krypenv/agents/krypkasino/pimc.py", "krypenv/eval/stats.py",
                 "krypenv/checkpoints/ppo-2p.zip", "krypenv/ui/static/index.html", "krypenv/games.py"):
        assert must in names, must


def test_the_test_extra_brings_the_build_backend_the_wheel_test_uses() -> None:
    """The wheel test builds without isolation, so the ``test`` extra requires [build-system]'s setuptools."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    backend = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    assert backend and set(backend) <= set(project["project"]["optional-dependencies"]["test"]), backend
