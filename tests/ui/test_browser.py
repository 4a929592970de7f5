"""``krypenv serve``'s page in a real headless Chromium: whole deals played by clicking, replays, hidden hands.

Needs the ``playwright`` package (``pip install -e ".[ui]"``) and a Chromium at ``/usr/bin/chromium``
(``$KRYPENV_CHROMIUM`` overrides; ``.ci/run`` installs Debian's); the tests skip saying which is
missing.  Screenshots of every view go to ``tests/ui/artifacts/`` (ignored by git) and, when
``KRYPENV_SCREENSHOTS`` names a folder (``docs/img``), there too, for the docs (docs/guides/play.md).

The tests wait on the page with Playwright's ``wait_for_function``, which polls with ``eval`` in
the page: their pages bypass its Content-Security-Policy (no ``eval``), which
:func:`test_the_page_plays_under_its_content_security_policy` holds on a page of its own; that
page's waits ask from outside (:func:`poll`).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krypenv.ui.guard import Limits
from krypenv.ui.server import make_server

CHROMIUM = os.environ.get("KRYPENV_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).with_name("artifacts")
LAPTOP = {"width": 1200, "height": 860}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path(os.environ["KRYPENV_SCREENSHOTS"]).resolve() if os.environ.get("KRYPENV_SCREENSHOTS") else None

pytest.importorskip("uvicorn", reason="the server needs the extra serve (pip install -e '.[serve]')")
sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed "
                               "(pip install -e '.[ui]'); the browser tests need it")
if not Path(CHROMIUM).is_file():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set KRYPENV_CHROMIUM); "
                "the browser tests need one", allow_module_level=True)


def shot(page: Any, name: str) -> None:
    """Save a screenshot as a test artifact, and for the docs where KRYPENV_SCREENSHOTS names a folder."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if SCREENSHOTS is not None:  # resolved at import, before the server's fixture changes the directory
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SCREENSHOTS / path.name)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on a free localhost port, its records written under a temporary folder."""
    old = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("browser"))
    server = make_server("127.0.0.1", 0).start()
    yield server.url
    server.stop()
    os.chdir(old)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (the system's, never a download)."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def api_state(base: str, gid: str) -> dict[str, Any]:
    """The server's state of a game, as the person's seat sees it."""
    with urllib.request.urlopen(f"{base}/api/games/{gid}", timeout=60) as resp:
        return json.loads(resp.read())["state"]


def start(page: Any, base: str, game: str, players: int, seed: int, view: str = "", agents: str = "random") -> str:
    """Fill the setup form and start a game against ``agents``; the game's id."""
    page.goto(f"{base}/#play")
    page.select_option("#f-game", game)
    page.fill("#f-players", str(players))
    page.select_option("#f-agents", agents)
    page.fill("#f-seed", str(seed))
    page.select_option("#f-speed", "0")
    shot(page, f"{view}setup-{game}")
    page.click("#start")
    poll(page, "document.body.dataset.events !== undefined && location.hash.startsWith('#play/')")
    return page.evaluate("location.hash").split("/")[1]


def poll(page: Any, condition: str, timeout_s: float = 60.0) -> None:
    """Wait until the JavaScript ``condition`` holds, asked from here (DevTools' evaluate, which a page's
    Content-Security-Policy allows; ``wait_for_function`` polls with ``eval`` inside the page, which it forbids)."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(condition):
        assert time.monotonic() < deadline, f"the page never reached {condition}"
        page.wait_for_timeout(50)


def wait_drawn(page: Any, base: str, gid: str) -> dict[str, Any]:
    """Wait until the agents have played (the page gets their moves live) and the page has drawn the server's latest
    state; that state."""
    st = api_state(base, gid)
    while st["thinking"]:
        page.wait_for_timeout(50)
        st = api_state(base, gid)
    page.wait_for_function(f"document.body.dataset.events === '{st['n_events']}'")
    return st


def click_move(page: Any, game: str, move: dict[str, Any]) -> None:
    """Make ``move`` (from the server's legal list) by clicking cards where the page offers that."""
    if game == "krypkasino":
        page.locator(f"#play-hand .card[data-card='{move['card']}']").first.click()
        if not move["capture"]:  # a creep is played by its card alone
            return
        for card in move["capture"]:
            page.locator(f"#play-table .card[data-card='{card}']:not(.selected)").first.click()
        page.click("#play-selected")
    elif move["card"]:
        page.locator(f"#play-hand .card[data-card='{move['card']}']").first.click()
    elif move["capture"]:
        for card in move["capture"]:
            page.locator(f"#play-hand .card[data-card='{card}']:not(.selected)").first.click()
        page.click("#play-selected")
    else:
        page.click(f"#legal .move[data-n='{move['n']}']")


def pick(legal: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """A legal move that keeps the person in the deal and exercises the clicks: exchanges, calls that stay in."""
    stay = [m for m in legal if m["capture"]] or [m for m in legal if m["key"] in ("bud", "stay", "show")]
    return (stay or legal)[k % len(stay or legal)]


def illegal_click_changes_nothing(page: Any, base: str, gid: str, game: str) -> bool:
    """Click something the server's legal list rules out; True when the page offered such a thing to click."""
    before = api_state(base, gid)
    if game == "krypkasino":
        targets = page.locator("#play-table .card.disabled")  # a table card with no hand card chosen
    else:
        targets = page.locator("#play-hand .card.disabled")  # a card during the calls
    if targets.count() == 0:
        return False
    targets.first.click(force=True)
    page.wait_for_timeout(300)
    assert api_state(base, gid) == before
    assert page.locator("#play-status").inner_text() == "Your move."
    return True


def check_replay(page: Any, game: str, players: int) -> None:
    """Open the replay of the game just played; hidden hands stay hidden until "show hands"; step through it."""
    page.click("#replay-link")
    page.wait_for_selector("#r-pos")
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('0 /')")
    total = int(page.inner_text("#r-pos").split("/")[1])
    assert total > 0
    seats = page.locator("#replay-board .seat")
    assert seats.count() == players
    assert page.locator("#replay-board .seat .card.face").count() == 0  # hidden
    assert page.locator("#replay-board .seat .card.back").count() > 0
    shot(page, f"replay-{game}-hidden")
    page.check("#r-show")
    assert page.locator("#replay-board .seat .card.face").count() > 0
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    assert page.inner_text("#r-pos").startswith("3 /") and page.evaluate("location.hash").endswith("/0/3")
    page.click("#r-prev")
    assert page.inner_text("#r-pos").startswith("2 /")
    page.fill("#r-slider", str(total // 2))
    page.dispatch_event("#r-slider", "input")
    assert page.inner_text("#r-pos").startswith(f"{total // 2} /")
    shot(page, f"replay-{game}")
    page.keyboard.press("End")
    assert page.inner_text("#r-pos") == f"{total} / {total}" and "final" in page.inner_text("#r-move")
    url = page.url.split("#")[0] + f"#replay/{page.evaluate('location.hash').split('/')[1]}/0/5"
    page.goto("about:blank")
    page.goto(url)  # the URL restores the deal and the move
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('5 /')")


@pytest.mark.slow
@pytest.mark.parametrize("game,players,seed", [("krypkasino", 2, 11), ("kungsholmskille", 3, 9)])
def test_play_a_whole_deal_by_clicking_then_replay(browser: Any, base: str, game: str, players: int, seed: int) -> None:
    """Start from the form, play every move by clicking, an illegal click changes nothing, then watch the replay."""
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    gid = start(page, base, game, players, seed)
    tried_illegal, moves = False, 0
    while True:
        st = wait_drawn(page, base, gid)
        if st["over"]:
            break
        assert st["your_turn"] and page.locator("#play-hand .card.face").count() == len(st["hand"])
        assert page.locator(".seat .card.face").count() == 0  # no other seat's cards on the page
        if not tried_illegal:
            tried_illegal = illegal_click_changes_nothing(page, base, gid, game)
        if moves == 1:
            shot(page, f"play-{game}")
        move = pick(st["legal"], moves)
        click_move(page, game, move)
        page.wait_for_function(f"document.body.dataset.events !== '{st['n_events']}'")
        moves += 1
    assert tried_illegal and moves > 2, (tried_illegal, moves)
    page.wait_for_selector("#end:not([hidden])")
    assert page.locator("#end table.scores tr").count() == players + 1
    shot(page, f"end-{game}")
    check_replay(page, game, players)
    assert errors == []
    page.close()


def test_phone_sized_window_does_not_overflow(browser: Any, base: str) -> None:
    """At 390×844 the play and replay views fit the width (no sideways scrolling)."""
    page = browser.new_page(viewport=PHONE, bypass_csp=True)
    for game, players in (("kungsholmskille", 4), ("krypkasino", 3)):
        gid = start(page, base, game, players, 2, view="phone-")
        wait_drawn(page, base, gid)
        shot(page, f"phone-play-{game}")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    while not api_state(base, gid)["over"]:  # finish the deal through the API, then watch it
        body = json.dumps({"n": 1, "move_index": api_state(base, gid)["move_index"]}).encode()
        req = urllib.request.Request(f"{base}/api/games/{gid}/move", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=60).close()
    page.goto(f"{base}/#replay/game-{gid}/0/4")
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('4 /')")
    page.check("#r-show")
    shot(page, "phone-replay-krypkasino")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.close()


def test_bad_hash_shows_a_clear_error(browser: Any, base: str) -> None:
    """An unknown replay id in the URL shows the server's error on the page; the page keeps working."""
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    page.goto(f"{base}/#replay/nope/0/0")
    page.wait_for_selector("#error:not([hidden])")
    assert "unknown replay id" in page.inner_text("#error")
    page.click("#nav-play")
    page.wait_for_selector("#setup:not([hidden])")
    page.close()


def test_replay_html_file_opens_without_a_server(browser: Any, tmp_path: Path) -> None:
    """``krypenv replay --html``'s page from file://: both deals, stepping, hidden hands, the URL's position."""
    from krypenv.ui.replay import write_html
    from tests.ui.test_replay_html import records_file

    out = tmp_path / "share.html"
    assert write_html([str(records_file(tmp_path))], out) == (2, [])
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.goto(out.as_uri())
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('0 /')")
    assert page.locator("#r-deal option").count() == 2 and page.locator("#nav-play").is_hidden()
    assert page.locator("#replay-board .seat .card.face").count() == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#r-pos").startswith("2 /")
    page.select_option("#r-deal", "1")
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('0 /')")
    page.check("#r-show")
    page.keyboard.press("End")
    assert page.locator("#replay-board .seat .card.face").count() > 0 and "final money" in page.inner_text("#r-move")
    shot(page, "replay-html-kungsholmskille")
    page.goto(out.as_uri() + "#replay/inline/0/7")
    page.reload()
    page.wait_for_function("document.querySelector('#r-pos').textContent.startsWith('7 /')")
    assert errors == [] and all(u.startswith("file://") for u in requests), requests
    page.close()


def setup_teams(page: Any, base: str, players: int, seed: int, view: str = "") -> None:
    """Fill the setup form for a Krypkasino team game (K18: 2 teams, seats alternate) against greedy agents."""
    page.goto(f"{base}/#play")
    page.wait_for_selector("#f-teams")
    page.select_option("#f-game", "krypkasino")
    page.fill("#f-players", "3")
    assert page.locator("#f-teams").is_disabled() and page.locator("#f-two_player_deal").is_disabled()
    page.fill("#f-players", "6")  # six players: two teams of three or three pairs (K18)
    assert page.locator("#f-teams option").all_inner_texts() == ["none", "2 teams: 0+2+4 v 1+3+5",
                                                                 "3 teams: 0+3 v 1+4 v 2+5"]
    page.fill("#f-players", str(players))
    page.select_option("#f-agents", "greedy")
    page.fill("#f-seed", str(seed))
    page.select_option("#f-speed", "0")
    page.select_option("#f-teams", label="2 teams: 0+2 v 1+3")
    assert page.locator("#f-two_player_deal").is_disabled() and not page.locator("#f-set_aside").is_disabled()
    assert "your partner: seat 2" in page.inner_text("#rules-help")
    shot(page, f"{view}setup-krypkasino-teams")
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


@pytest.mark.slow
def test_team_game_from_the_form_to_the_team_totals(browser: Any, base: str) -> None:
    """A 2v2 Krypkasino game (K18) set up through the form, played by clicking: partners are marked during play,
    and the end shows both team totals (the sums of the seats' scores) and the winning team, as in the record."""
    seed = 5417
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    setup_teams(page, base, 4, seed)
    page.click("#start")
    page.wait_for_function("document.body.dataset.events !== undefined")
    page.wait_for_function("location.hash.startsWith('#play/')")
    gid = page.evaluate("location.hash").split("/")[1]
    assert api_state(base, gid)["teams"] == [[0, 2], [1, 3]]
    assert "teams 0+2 v 1+3" in page.inner_text("#play-info")
    assert page.locator("#play-board .seat[data-seat='2'] .tag.partner").count() == 1
    assert page.locator("#play-board .seat .tag.partner").count() == 1  # seats 1 and 3 are opponents
    moves = 0
    while True:
        st = wait_drawn(page, base, gid)
        if st["over"]:
            break
        if moves == 2:
            shot(page, "play-krypkasino-teams")
        click_move(page, "krypkasino", pick(st["legal"], moves))
        page.wait_for_function(f"document.body.dataset.events !== '{st['n_events']}'")
        moves += 1
    assert moves >= 20, moves  # 25 cards for each of four seats (K6, K7)
    page.wait_for_selector("#end:not([hidden])")
    [path] = Path("games").glob(f"web-krypkasino-*-s{seed}-*.jsonl")  # the game record (the fixture's folder)
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["rules"]["teams"] == [[0, 2], [1, 3]]
    scores, names = record["result"]["scores"], st["names"]
    sides = {(0, 2): scores[0] + scores[2], (1, 3): scores[1] + scores[3]}  # K18
    best = min(sides.values())
    for team, total in sides.items():
        row = page.locator(f"#end-teams tr[data-team='{team[0]},{team[1]}']")
        assert row.locator("td").last.inner_text() == str(total)
        assert row.locator(".tag.win").count() == (total == best)
    winners = " and ".join(f"{names[a]} + {names[b]}" for (a, b), v in sides.items() if v == best)
    assert page.inner_text("#end-winner") == f"Winner: {winners} ({best})"
    assert page.locator("#end-seats tr").count() == 5
    page.locator("#end").scroll_into_view_if_needed()
    shot(page, "end-krypkasino-teams")
    assert errors == []
    page.close()

    phone = browser.new_page(viewport=PHONE, bypass_csp=True)
    phone.on("pageerror", lambda exc: errors.append(str(exc)))
    setup_teams(phone, base, 4, seed, view="phone-")
    phone.goto(f"{base}/#play/{gid}")  # the finished game, on a phone
    phone.wait_for_selector("#end:not([hidden])")
    assert phone.inner_text("#end-winner") == f"Winner: {winners} ({best})"
    shot(phone, "phone-end-krypkasino-teams")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert errors == []
    phone.close()


EVIL_PAGE = """<!doctype html><html><body><form id="f" method="POST" enctype="text/plain" action="TARGET/api/games">
<input name='{"game": "krypkasino", "players": 2, "agents": ["ppo:EVIL"], "x": "' value='"}'></form>
<script>
const target = "TARGET", body = JSON.stringify({game: "krypkasino", players: 2, agents: ["ppo:EVIL"]});
window.results = [];
async function attack() {
  for (const [mode, type] of [["no-cors", "text/plain"], ["cors", "application/json"], ["cors", "text/plain"]]) {
    try {
      const r = await fetch(target + "/api/games", {method: "POST", mode, headers: {"Content-Type": type}, body});
      window.results.push(mode + " " + type + ": " + r.status + " " + (mode === "cors" ? await r.text() : "opaque"));
    } catch (e) { window.results.push(mode + " " + type + ": blocked " + e); }
  }
  try { const r = await fetch(target + "/api/meta"); window.results.push("read meta: " + r.status); }
  catch (e) { window.results.push("read meta: blocked " + e); }
  window.done = true;
}
attack();
</script></body></html>"""


def test_a_page_of_another_origin_cannot_use_the_server(browser: Any, tmp_path: Path) -> None:
    """A page served from another origin (another port) POSTs to the app as a simple request, with JSON (needing a
    preflight) and through a form: no game is made, the crafted checkpoint is never opened, and it reads nothing."""
    import http.server
    from functools import partial

    from tests.ui.test_server_hostile import crafted_checkpoint

    marker = tmp_path / "pwned"
    evil_zip = crafted_checkpoint(tmp_path, marker)
    server = make_server("127.0.0.1", 0, games=tmp_path / "games").start()
    target = server.url
    site = tmp_path / "site"
    site.mkdir()
    (site / "evil.html").write_text(EVIL_PAGE.replace("TARGET", target).replace("EVIL", str(evil_zip)))
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(http.server.SimpleHTTPRequestHandler,
                                                                      directory=str(site)))
    threading.Thread(target=other.serve_forever, daemon=True).start()
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    try:
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/evil.html")
        page.wait_for_function("window.done === true", timeout=60_000)
        results = page.evaluate("window.results")
        assert any(r.startswith("no-cors text/plain") for r in results)
        assert all("200" not in r for r in results), results  # the CORS ones are blocked or answered 403
        with page.expect_navigation():  # a form POST navigates to the server's answer
            page.evaluate("document.getElementById('f').submit()")
        assert "are refused" in page.content()
        shot(page, "security-cross-origin-form")
        assert server.app.store.tables == {} and not marker.exists()
    finally:
        page.close()
        other.shutdown()
        other.server_close()
        server.stop()


def test_a_dns_rebinding_page_reads_nothing(browser: Any, tmp_path: Path) -> None:
    """A name that resolves to 127.0.0.1 (Chromium told so, as a rebinding attacker's DNS would) gets the server's
    refusal for the page and the API: the Host does not name the server."""
    server = make_server("127.0.0.1", 0, games=tmp_path / "games").start()
    port = server.port
    try:
        rules = "--host-resolver-rules=MAP rebind.test 127.0.0.1"
        b = browser.browser_type.launch(executable_path=CHROMIUM, args=[*ARGS, rules])
        page = b.new_page(viewport=LAPTOP)
        page.goto(f"http://rebind.test:{port}/api/meta")
        assert "does not name this server" in page.content() and "krypkasino" not in page.content()
        page.goto(f"http://localhost:{port}/api/meta")  # the same server by its own name answers
        assert "krypkasino" in page.content()
        b.close()
    finally:
        server.stop()


def test_opponents_are_picked_from_the_servers_offer(browser: Any, base: str) -> None:
    """The Opponents field is a list of what /api/meta offers for the game and player count (a name and its line
    each), never free text: 4 Krypkasino players add the 4-player checkpoints, Kungsholmskille lists its own."""
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    page.goto(f"{base}/#play")
    page.wait_for_selector("#f-agents option", state="attached")
    assert page.evaluate("document.getElementById('f-agents').tagName") == "SELECT"
    page.select_option("#f-game", "krypkasino")
    page.fill("#f-players", "4")
    offered = page.eval_on_selector_all("#f-agents option", "os => os.map((o) => o.value)")
    assert "ppo:ppo-4p" in offered and "ppo:ppo-2p" not in offered and "expert" in offered
    page.select_option("#f-agents", "ppo:ppo-4p")
    assert "checkpoint ppo-4p" in page.inner_text("#agents-help")
    labels = page.eval_on_selector_all("#f-agents option", "os => os.map((o) => o.textContent)")
    assert all(" — " in label for label in labels)  # the name and its line
    page.select_option("#f-game", "kungsholmskille")
    offered = page.eval_on_selector_all("#f-agents option", "os => os.map((o) => o.value)")
    assert "timid" in offered and "greedy" not in offered
    page.close()


def test_tabular_policy_is_offered_at_its_preset_and_plays(browser: Any, base: str) -> None:
    """Issue 26: with the tiny preset (2 players) the Opponents list offers ``tabular:cfr-tiny``; picked, it plays a
    deal clicked to its end; with the standard preset or 3 players it is not offered (nor ``ppo:ppo-2p`` at tiny)."""
    pytest.importorskip("pyspiel", reason="the tabular policies need the extra openspiel")
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base}/#play")
    page.wait_for_selector("#f-agents option", state="attached")
    page.select_option("#f-game", "krypkasino")
    page.fill("#f-players", "2")
    specs = "os => os.map((o) => o.value)"
    page.select_option("#f-preset", "standard")
    offered = page.eval_on_selector_all("#f-agents option", specs)
    assert "tabular:cfr-tiny" not in offered and "ppo:ppo-2p" in offered
    assert page.is_enabled("#f-two_player_deal")
    page.select_option("#f-preset", "tiny")
    offered = page.eval_on_selector_all("#f-agents option", specs)
    assert "tabular:cfr-tiny" in offered and "ppo:ppo-2p" not in offered and "champion" not in offered
    assert not page.is_enabled("#f-two_player_deal")  # K6's deal patterns are the standard deck's (K21)
    page.select_option("#f-agents", "tabular:cfr-tiny")
    assert "tabular policy cfr-tiny" in page.inner_text("#agents-help")
    page.fill("#f-seed", "26")
    page.select_option("#f-speed", "0")
    shot(page, "setup-tabular-tiny")
    page.click("#start")
    page.wait_for_function("location.hash.startsWith('#play/')")
    gid, moves = page.evaluate("location.hash").split("/")[1], 0
    while not (st := wait_drawn(page, base, gid))["over"]:
        assert st["names"][1] == "seat 1 (tabular:cfr-tiny)" and st["agent_error"] is None
        click_move(page, "krypkasino", pick(st["legal"], moves))
        page.wait_for_function(f"document.body.dataset.events !== '{st['n_events']}'")
        moves += 1
    page.wait_for_selector("#end:not([hidden])")
    assert moves == 3 and sum(st["totals"]) == 7  # the tiny deal: 3 cards each, 7 points (K20, K22)
    shot(page, "end-tabular-tiny")
    page.click("#new-btn")
    page.wait_for_selector("#setup:not([hidden])")
    page.select_option("#f-preset", "tiny")
    page.fill("#f-players", "3")
    assert "tabular:cfr-tiny" not in page.eval_on_selector_all("#f-agents option", specs)
    assert errors == []
    page.close()


@pytest.mark.slow
def test_the_page_gets_every_agent_move_live(browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the agents think (here every agent move takes 0.2 s and the server answers a new game at once), the page
    gets each of their moves over its WebSocket as it is made, one message per move, and never polls: a whole
    3-player deal against pimc is played by clicking, every agent move shown once."""
    from krypenv.ui.session import Session

    advance = Session.advance

    def slow_advance(self: Session, max_moves: int | None = None) -> None:
        time.sleep(0.2)  # every agent move takes a while: the agents are thinking when the page asks
        advance(self, max_moves)

    monkeypatch.setattr(Session, "advance", slow_advance)
    server = make_server("127.0.0.1", 0, games=tmp_path / "games", limits=Limits(move_wait=0.0))
    server.start()
    base = server.url
    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    polls: list[str] = []
    page.on("request", lambda req: polls.append(req.url) if "?since=" in req.url else None)
    received: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda data: received.append(json.loads(data))))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        gid = start(page, base, "krypkasino", 3, 21, view="live-", agents="pimc")
        moves = 0
        while True:
            st = api_state(base, gid)
            while st["thinking"]:
                page.wait_for_timeout(100)
                st = api_state(base, gid)
            page.wait_for_function(f"document.body.dataset.events === '{st['n_events']}'")
            if st["over"]:
                break
            assert st["your_turn"]
            page.wait_for_selector("#legal .move")  # the page's last message has the person's turn, not "thinking"
            click_move(page, "krypkasino", pick(st["legal"], moves))
            page.wait_for_function(f"document.body.dataset.events !== '{st['n_events']}'")
            moves += 1
        page.wait_for_selector("#end:not([hidden])")
        agent_moves = [[e for e in m["state"]["events"] if e["seat"] not in (-1, st["human"])] for m in received]
        assert moves > 5 and not polls, (moves, polls)  # the page never asked: the agents' moves came to it
        assert sum(map(len, agent_moves)) >= 2 * moves and max(map(len, agent_moves)) == 1  # each in its own message
        assert page.locator("#log li").count() == st["n_events"] and errors == []
    finally:
        page.close()
        server.stop()


def test_hint_button_and_records_upload(browser: Any, base: str, tmp_path: Path) -> None:
    """The hint button shows the server's advice and marks its move; a records file uploaded from the replay view
    (sent as JSON) opens at its first deal, and a file of no record shows the server's error."""
    from krypenv.ui.session import Session

    page = browser.new_page(viewport=LAPTOP, bypass_csp=True)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    start(page, base, "krypkasino", 2, 31)
    page.wait_for_selector("#legal .move")
    page.click("#hint-btn")
    page.wait_for_selector("#hint:not([hidden])")
    assert page.inner_text("#hint").startswith("hint from champion")
    assert page.locator("#legal .move.hinted").count() == 1
    s = Session("krypkasino", 2, ["random"], seed=3, record=tmp_path / "mine.jsonl")
    while not s.over:
        s.play(0)
    page.goto(f"{base}/#replay")
    page.set_input_files("#r-upload", str(tmp_path / "mine.jsonl"))
    page.wait_for_function("document.querySelector('#r-pos') && document.querySelector('#r-pos').textContent"
                           ".startsWith('0 /')")
    assert page.locator("#replay-board .seat").count() == 2 and page.evaluate("location.hash").endswith("/0/0")
    (tmp_path / "junk.jsonl").write_text("not json\n" * 50)
    page.set_input_files("#r-upload", str(tmp_path / "junk.jsonl"))
    page.wait_for_selector("#error:not([hidden])")
    assert "no game record in junk.jsonl parses" in page.inner_text("#error")
    assert errors == []
    page.close()


def test_the_page_plays_under_its_content_security_policy(browser: Any, base: str) -> None:
    """The page as served, its Content-Security-Policy enforced (``default-src 'self'``: nothing from the network, no
    inline script, no eval): the setup, a game started, its live WebSocket, moves clicked and the agents' answers
    drawn, a hint; the browser reports no violation."""
    page = browser.new_page(viewport=LAPTOP)
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    response = page.goto(f"{base}/#play")
    assert "default-src 'self'" in response.headers["content-security-policy"]
    start(page, base, "krypkasino", 2, 7, view="csp-")
    for _ in range(3):
        page.wait_for_selector("#legal .move")  # the person's turn, drawn from the live socket's state
        logged = page.locator("#log li").count()
        page.locator("#legal .move").first.click()
        deadline = time.monotonic() + 60
        while page.locator("#log li").count() < logged + 2:  # the person's move and the agent's answer
            assert time.monotonic() < deadline, console
            page.wait_for_timeout(50)
    page.click("#hint-btn")
    page.wait_for_selector("#hint:not([hidden])")
    assert sockets and all(u.startswith(base.replace("http://", "ws://") + "/api/games/") for u in sockets), sockets
    assert not [m for m in console if "Content Security Policy" in m] and errors == [], (console, errors)
    page.close()


@pytest.mark.parametrize(("hash_", "shown"), [("#replay", "replay"), ("#play", "setup")])
def test_a_live_update_never_takes_the_person_back_to_the_table(browser: Any, base: str, hash_: str,
                                                                 shown: str) -> None:
    """After the person leaves a game in progress for the replays or a new game's setup, the game's live updates
    (here a move made through the API, which the server pushes to the page) are drawn on the hidden table, and the
    view the person chose stays."""
    page = browser.new_page(bypass_csp=True)
    gid = start(page, base, "krypkasino", 3, 5)
    st = wait_drawn(page, base, gid)
    page.goto(f"{base}/{hash_}")
    page.wait_for_selector(f"#{shown}:not([hidden])")
    body = json.dumps({"n": st["n_events"], "move_index": st["move_index"]}).encode()
    req = urllib.request.Request(f"{base}/api/games/{gid}/move", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).close()
    wait_drawn(page, base, gid)  # the update reached the page and was drawn
    assert page.evaluate(f"document.querySelector('#{shown}').hidden") is False
    assert page.evaluate("document.querySelector('#play').hidden") is True
    page.close()
