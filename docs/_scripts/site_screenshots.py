"""Screenshots of the built site in headless Chromium: the home page and Krypkasino's environment page.

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python docs/_scripts/site_screenshots.py [--site docs/_build/html] [--out docs/img]

writes ``site-home.png`` and ``site-environment.png`` (1280 px wide, the first 1600 px of the page) into
``--out``. Needs the ``ui`` extra (Playwright) and a Chromium at ``/usr/bin/chromium`` (or ``KRYPENV_CHROMIUM``);
nothing is downloaded, and the pages are opened from disk.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

PAGES = {"site-home.png": "index.html", "site-environment.png": "generated/krypkasino-environments.html"}


def main(argv: list[str] | None = None) -> list[Path]:
    """Open each page from the built site and save its screenshot; returns the files written."""
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", default="docs/_build/html", help="the built site (default docs/_build/html)")
    parser.add_argument("--out", default="docs/img", help="folder for the PNGs (default docs/img)")
    args = parser.parse_args(argv)
    site, out = Path(args.site).resolve(), Path(args.out)
    missing = [page for page in PAGES.values() if not (site / page).exists()]
    if missing:
        raise SystemExit(f"the site is not built (missing {', '.join(missing)}); build it with sphinx first")
    out.mkdir(parents=True, exist_ok=True)
    chromium = os.environ.get("KRYPENV_CHROMIUM", "/usr/bin/chromium")
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1600})
        for name, path in PAGES.items():
            page.goto((site / path).as_uri())
            page.screenshot(path=str(out / name))
            written.append(out / name)
        browser.close()
    for path in written:
        print(f"wrote {path}")
    return written


if __name__ == "__main__":
    main()
