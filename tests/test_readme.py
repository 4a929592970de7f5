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



def docs_pages() -> list[Path]:
    """The README and every Markdown page of the docs site (the generated ones are not in the tree)."""
    return [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]


def test_every_path_the_readme_and_the_docs_name_exists() -> None:
    """Every repository file the README or a docs page names in backticks (``agents/league.py``, ``docs/RULES.md``
    ...) exists; the layout table and the guides moved from the README to the docs are checked there."""
    folders = "agents|eval|krypenv|tests|docs|experiments|examples|checkpoints"
    missing, named_in = [], {}
    for page in docs_pages():
        named = set(re.findall(rf"`((?:{folders})/[\w./+-]+\.(?:py|md|zip|json|csv|png))`", page.read_text("utf-8")))
        named_in[page.relative_to(ROOT).as_posix()] = named
        missing += [f"{page.relative_to(ROOT)}: {path}" for path in sorted(named) if not (ROOT / path).exists()]
    assert named_in["docs/architecture.md"] and named_in["docs/guides/ray.md"], "the layout and Ray guide name no file"
    assert not missing, missing


def test_every_link_of_the_readme_resolves() -> None:
    """The README's relative links (into the docs site's sources, CONTRIBUTING.md, CITATION.cff) name existing files."""
    links = [t for t in re.findall(r"\]\(([^)#]+)\)", README) if not t.startswith(("http://", "https://"))]
    assert any(t.startswith("docs/") for t in links), "the README links into no docs page"
    missing = sorted(t for t in links if not (ROOT / t).exists())
    assert not missing, missing


def test_the_readme_is_short() -> None:
    """The README stays a front page of at most 250 lines (issue 27); the details live on the docs site."""
    assert len(README.splitlines()) <= 250
