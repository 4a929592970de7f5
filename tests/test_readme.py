"""The README's Python example runs as printed (tests/test_cli.py checks its commands)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """Every ```python block of the README executes without error (the env example plays a whole deal)."""
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert blocks, "the README has no Python example"
    printed = ""
    for code in blocks:
        namespace: dict[str, object] = {}
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
        if "kungsholmskille_v0" in code:  # the Kungsholmskille example plays one pot
            printed += capsys.readouterr().out
            assert "pot over" in printed
            continue
        assert namespace["masks"].shape == (4096, 105)
    assert "end of the deal" in printed + capsys.readouterr().out



def test_every_path_the_readme_names_exists() -> None:
    """Every repository file the README names in backticks (``agents/league.py``, ``docs/RULES.md`` ...) exists."""
    folders = "agents|eval|krypenv|tests|docs|experiments|examples|checkpoints"
    named = set(re.findall(rf"`((?:{folders})/[\w./-]+\.(?:py|md|zip|json|csv|png))`", README))
    assert named, "the README names no file"
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert not missing, missing
