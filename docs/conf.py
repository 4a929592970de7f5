"""Sphinx configuration of the krypenv site: MyST Markdown pages, the furo theme, autodoc; built offline.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (the ``docs`` extra).  The
extension ``_ext/krypenv_pages.py`` writes the generated pages (environments, agent tables, the registry
of games) into ``docs/generated/`` before the sources are read.  Nothing is fetched from the network
(no intersphinx).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
if str(ROOT) not in sys.path:
    sys.path.insert(1, str(ROOT))  # a checkout without the editable install still documents its own source

project = "krypenv"
author = "the krypenv authors"
copyright = "2026, the krypenv authors"
release = "0.1.0"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode", "krypenv_pages"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# fragments, included by pages; OPENSPIEL.md is included by the research pages (one copy, also read on GitHub)
exclude_patterns = ["_build", "generated/*-agents.md", "generated/*-presets.md", "generated/games.md", "OPENSPIEL.md"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # signatures carry the hints; forward references need not resolve
suppress_warnings: list[str] = []

html_theme = "furo"
html_title = "krypenv"
html_static_path: list[str] = []
