"""The documentation site (``docs/``) cannot drift from the code: what its generator computes, and what its pages pin.

CI builds the whole site with ``-W`` (``.ci/run``); these tests check the generator's pieces quickly: the
environment pages hold the live spaces, a docstring that states a wrong space is caught, the agent tables
list the registry's agents, and the hand-written tables match ``pyproject.toml``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from krypenv.games import GAMES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
pages = pytest.importorskip("krypenv_pages", reason="the docs extra (sphinx) is not installed")


@pytest.mark.parametrize("name", list(GAMES))
def test_environment_page_shows_the_live_spaces(name: str) -> None:
    """The generated page states each player count's observation size and the action space, as the env has them."""
    game = GAMES[name]
    text = pages.environments_page(game)
    entry = game.part("entry")
    for players in game.players:
        aec = entry.raw_env(players=players)
        space = aec.observation_space(aec.possible_agents[0])["observation"]
        assert f"| {players} | `Box({space.dtype.name}, ({space.shape[0]},))`" in text
    assert f"| Action space | `Discrete({int(aec.action_space(aec.possible_agents[0]).n)})`" in text
    for section in ("## Spaces per preset", "## PettingZoo AEC", "## Gymnasium", "## VecEnv", "## Observation layout",
                    "## Action table",
                    "## Version history", "Checkers:"):
        assert section in text, section


@pytest.mark.parametrize("name", list(GAMES))
def test_spaces_and_presets_tables_cover_every_preset(name: str) -> None:
    """Every preset of the game's rules, with every player count it allows, has a row built from a live env."""
    game = GAMES[name]
    entry, rules = game.part("entry"), pages.rules_module(game)
    allowed = pages.preset_players(game)
    assert list(allowed) == list(rules.PRESETS) and all(allowed.values())
    rows, table = "\n".join(pages.preset_spaces(game)), pages.presets_table(game)
    for preset, counts in allowed.items():
        sizes = []
        for players in counts:
            aec = entry.raw_env(players=players, preset=preset)
            sizes.append(str(aec.observation_space(aec.possible_agents[0])["observation"].shape[0]))
        cell = " / ".join(sizes)  # in the order of the players column
        assert re.search(rf"^\| `{preset}` \| .* \| {', '.join(map(str, counts))} \| .* \| {cell} \| \d+ \|$", table,
                         re.MULTILINE), (preset, cell)
        for players in counts:
            aec = entry.raw_env(players=players, preset=preset)
            space = aec.observation_space(aec.possible_agents[0])["observation"]
            assert f"| `{preset}` | {players} | `Box({space.dtype.name}, ({space.shape[0]},))`" in rows
    for players in game.players:  # a preset that does not allow a player count has no row for it
        for preset, counts in allowed.items():
            if players not in counts:
                with pytest.raises(ValueError):
                    rules.Rules.from_preset(preset, players=players)
                assert f"| `{preset}` | {players} |" not in rows


def test_a_wrong_space_in_a_docstring_is_an_error() -> None:
    """The generator flags a docstring whose stated spaces differ from the live env (the -W build then fails)."""
    shapes = {2: 344, 3: 351}
    assert pages.stated_space_errors("ok", "Discrete(105), (325 + 7P + 5,), Box(int8, ...)", 105, shapes, "int8") == []
    errors = pages.stated_space_errors("bad", "Discrete(4) and (325 + 8P + 5,) as Box(int16, x)", 105, shapes, "int8")
    assert len(errors) == 4 and "Discrete(4)" in errors[0] and "346 for 2 players" in errors[1]
    assert pages.stated_space_errors("prose", "a vector of `325 + 7P + 6` entries", 105, shapes, "int8")


@pytest.mark.parametrize("name", list(GAMES))
def test_the_game_overview_pages_state_the_live_spaces(name: str) -> None:
    """The hand-written overview page of each game states the action space and observation size the env has."""
    game = GAMES[name]
    entry = game.part("entry")
    shapes, actions, dtype = {}, 0, ""
    for players in game.players:
        aec = entry.raw_env(players=players)
        space = aec.observation_space(aec.possible_agents[0])["observation"]
        shapes[players], dtype = int(space.shape[0]), space.dtype.name
        actions = int(aec.action_space(aec.possible_agents[0]).n)
    text = (DOCS / "games" / f"{name}.md").read_text(encoding="utf-8")
    assert f"Discrete({actions})" in text
    assert pages.stated_space_errors(name, text, actions, shapes, dtype) == []


@pytest.mark.parametrize("name", list(GAMES))
def test_agent_table_lists_the_registry(name: str) -> None:
    """The generated agent table has one row per registered agent of the game, with its summary."""
    from krypenv.agents import base

    table = pages.agents_table(GAMES[name])
    for spec, summary in base.known(name).items():
        entry = base.find_entry(spec, name)
        shown = f"{spec}:{entry.argument}" if entry.takes_path else spec  # endgame:SPEC, mlp:PATH
        assert re.search(rf"^\| `{re.escape(shown)}` \| {re.escape(summary.replace('|', '/'))} \|", table,
                         re.MULTILINE), spec
    if name == "krypkasino":
        assert "| `endgame:SPEC` |" in table and "| `mlp:PATH` |" in table and "| `pimc` |" in table


def test_the_extras_table_matches_pyproject() -> None:
    """The quick start page's table of extras names exactly pyproject's extras; `all` holds all but `ray`."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\w+)` \|", page, re.MULTILINE)
    assert sorted(listed) == sorted(extras)
    assert extras["all"] == ["krypenv[" + ",".join(sorted(set(extras) - {"all", "ray"}, key=listed.index)) + "]"]


def test_the_site_is_offline_and_big_enough() -> None:
    """No intersphinx (the build fetches nothing); at least 20 pages, one environment page per game."""
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert "sphinx.ext.intersphinx" not in conf and "krypenv_pages" in conf
    sources = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "generated" not in p.parts]
    assert len(sources) + 2 * len(GAMES) >= 20
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in GAMES:
        assert f"generated/{name}-environments" in index


def test_the_nash_conv_table_on_tiny_is_the_measured_csv() -> None:
    """docs/research/results.md's NashConv table holds the rows of docs/exploit-tiny.csv (4 decimals), no more."""
    import csv

    with open(DOCS / "exploit-tiny.csv", newline="") as f:
        measured = {row["agent"]: row for row in csv.DictReader(f)}
    page = (DOCS / "research" / "results.md").read_text(encoding="utf-8")
    section = page.split("## NashConv on tiny")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([^`]+)`[^|]* \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", section, re.MULTILINE)
    assert {agent for agent, *_ in rows} == set(measured)
    for agent, nash_conv, gain0, gain1 in rows:
        row = measured[agent]
        for shown, key in ((nash_conv, "nash_conv"), (gain0, "improvement_seat0"), (gain1, "improvement_seat1")):
            assert shown == f"{float(row[key]):.4f}", (agent, key, shown, row[key])


def test_the_readme_nash_conv_headline_is_the_measured_csv() -> None:
    """The README's NashConv-on-tiny table holds docs/exploit-tiny.csv's values (4 decimals) for the agents it names."""
    import csv

    with open(DOCS / "exploit-tiny.csv", newline="") as f:
        measured = {row["agent"]: float(row["nash_conv"]) for row in csv.DictReader(f)}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    values = re.search(r"^\| NashConv on tiny \|(.*)\|$", readme, re.MULTILINE)
    header = readme[:values.start()].rstrip("\n").splitlines()[-2] if values else ""
    agents = [re.search(r"`([^`]+)`", cell).group(1) if "`" in cell else cell.strip()
              for cell in header.strip("|").split("|")[1:]]
    shown = [cell.strip().strip("*") for cell in values.group(1).split("|")] if values else []
    assert agents and len(agents) == len(shown)
    for agent, value in zip(agents, shown):
        assert value == f"{measured[agent]:.4f}", (agent, value)


def test_the_self_play_nash_conv_table_is_the_measured_csv() -> None:
    """docs/research/selfplay.md's NashConv table holds the rows of docs/research/mmd-tiny.csv (4 decimals), no more."""
    import csv
    from pathlib import PurePosixPath

    with open(DOCS / "research" / "mmd-tiny.csv", newline="") as f:
        measured = {(PurePosixPath(r["checkpoint"]).parent.name, r["iteration"]): r for r in csv.DictReader(f)}
    page = (DOCS / "research" / "selfplay.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \| ([\d,]+) \| (\d+) \| ([\d.]+) \|", page, re.MULTILINE)
    assert {(run, it) for run, it, *_ in rows} == set(measured)
    for run, iteration, decisions, seconds, nash_conv in rows:
        row = measured[run, iteration]
        assert (decisions, seconds, nash_conv) == (f"{int(row['decisions']):,}", f"{float(row['train_seconds']):.0f}",
                                                   f"{float(row['nash_conv']):.4f}"), (run, iteration)


def test_the_tries_table_on_tiny_is_the_measured_csv() -> None:
    """docs/research/learners.md's table of tries holds the rows of docs/research/tries-tiny.csv, no more."""
    import csv

    with open(DOCS / "research" / "tries-tiny.csv", newline="") as f:
        measured = {r["run"]: r for r in csv.DictReader(f)}
    page = (DOCS / "research" / "learners.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w-]+)` \| ([^|]+) \| (\d+) \| ([\d,]*) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$",
                      page, re.MULTILINE)
    assert sorted(run for run, *_ in rows) == sorted(measured)
    for run, learner, iterations, decisions, seconds, last, best, best_seconds in rows:
        r = measured[run]
        want = (r["learner"], r["iterations"], f"{int(r['decisions']):,}" if r["decisions"] else "", r["seconds"],
                r["last_nash_conv"], r["best_nash_conv"], r["best_seconds"])
        assert (learner.strip(), iterations, decisions, seconds, last, best, best_seconds) == want, run


def quickstart_rows() -> list[dict[str, str]]:
    """docs/results/quickstart-seeds.csv: one row per training seed of the quick start's defaults."""
    import csv

    with open(DOCS / "results" / "quickstart-seeds.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_the_readme_headline_is_the_quickstart_distribution() -> None:
    """The README's headline table shows, per baseline, the median and range over the CSV's seeds (2 decimals), and
    says how many seeds' intervals against expert lie below 0."""
    import statistics

    rows = quickstart_rows()
    assert len(rows) >= 5  # issue 43: at least five training seeds
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme.split("## Headline result")[1].split("\n## ")[0]
    shown = {m[0]: m[1:] for m in re.findall(
        r"^\| (\w+) \| \**(−?[\d.]+)\** \| \**\[(−?[\d.]+), (−?[\d.]+)\]\** \|$", head, re.MULTILINE)}
    assert set(shown) == {"random", "greedy", "creeper", "expert"}
    for name, (median, low, high) in shown.items():
        values = [float(r[f"vs_{name}"]) for r in rows]
        want = (statistics.median(values), min(values), max(values))
        assert tuple(float(x.replace("−", "-")) for x in (median, low, high)) == tuple(round(v, 2) for v in want), name
    below = sum(float(r["expert_high"]) < 0 for r in rows)
    assert f"{below} of {len(rows)} seeds" in head
    assert f"over {len(rows)} training seeds" in head


def test_the_quickstart_seed_table_is_the_csv() -> None:
    """docs/results/krypkasino-training.md's table of the quick start over seeds holds the CSV's rows, no more."""
    rows = {r["seed"]: r for r in quickstart_rows()}
    page = (DOCS / "results" / "krypkasino-training.md").read_text(encoding="utf-8")
    section = page.split("## The quick start over seeds")[1].split("\n## ")[0]
    found = re.findall(r"^\| (\d+) \| ([\d.]+) \| (−?[\d.]+) \| \[(−?[\d.]+), (−?[\d.]+)\] \| (−?[\d.]+) \| "
                       r"(−?[\d.]+) \| (−?[\d.]+) \|", section, re.MULTILINE)
    assert {f[0] for f in found} == set(rows)
    for seed, minutes, diff, low, high, creeper, greedy, rand in found:
        r = rows[seed]
        want = (f"{float(r['train_min']):.1f}", *(f"{float(r[k]):.2f}" for k in (
            "vs_expert", "expert_low", "expert_high", "vs_creeper", "vs_greedy", "vs_random")))
        assert (minutes, *(x.replace("−", "-") for x in (diff, low, high, creeper, greedy, rand))) == want, seed


def _exit_matches() -> dict[tuple[str, ...], dict[str, str]]:
    """exit-matches.csv's rows by (game, players, a, b, decks, seed)."""
    import csv

    with open(DOCS / "research" / "exit-matches.csv", newline="") as f:
        return {(r["game"], r["players"], r["a"], r["b"], r["decks"], r["seed"]): r for r in csv.DictReader(f)}


def _checked_match_rows(section: str, matches: dict[tuple[str, ...], dict[str, str]]) -> list[tuple[str, ...]]:
    """The keys of a markdown table of matches, each row's figures asserted equal to its CSV row (2 decimals)."""
    rows = re.findall(r"^\| (\w+) \| (\d) \| `([^`]+)` \| `([^`]+)` \| ([\d,]+) \| (\d+) \| \**(−?[\d.]+)\** \| "
                      r"\[(−?[\d.]+), (−?[\d.]+)\] \|", section, re.MULTILINE)
    keys = []
    for g, p, a, b, decks, seed, diff, low, high in rows:
        key = (g, p, a, b, decks.replace(",", ""), seed)
        assert key in matches, key
        want = tuple(f"{float(matches[key][k]):.2f}" for k in ("a_minus_b", "ci_low", "ci_high"))
        assert tuple(x.replace("−", "-") for x in (diff, low, high)) == want, (a, b)
        keys.append(key)
    return keys


def test_the_readme_expert_iteration_table_is_the_measured_csv() -> None:
    """The README's expert-iteration rows are rows of exit-matches.csv: each a student against `expert` or its
    search against `pimc`, over 1,000 decks, on the right side of 0 (a claim the README makes of every row)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Expert iteration at the larger tables**")[1].split("\n## ")[0]
    matches = _exit_matches()
    keys = _checked_match_rows(section, matches)
    assert len(keys) == 6
    for key in keys:
        game, _, a, b, decks, _ = key
        r = matches[key]
        assert decks == "1000" and b == ("expert" if a.startswith("mlp:") else "pimc"), key
        better = -1 if game == "krypkasino" else 1  # Krypkasino: fewer points is better; Kungsholmskille: money
        assert better * float(r["ci_low"]) > 0 and better * float(r["ci_high"]) > 0, key


def test_the_readme_two_player_search_rows_are_the_measured_csv() -> None:
    """The README's 2-player expert-iteration rows are rows of exit-matches.csv, each over 1,000 decks with its
    interval below 0 (the search better: the README's claim), the search against `pimc` and against `champion`
    on two deck sets."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("**Expert iteration at 2 players**")[1].split("**Expert iteration at the larger tables**")[0]
    matches = _exit_matches()
    keys = _checked_match_rows(section, matches)
    assert {(b, seed) for *_, b, _, seed in keys} == {("pimc", "4711"), ("champion", "4711"), ("champion", "9200")}
    for key in keys:
        assert key[1] == "2" and key[4] == "1000" and float(matches[key]["ci_high"]) < 0, key


def test_the_expert_iteration_tables_are_the_measured_csvs() -> None:
    """docs/research/expert-iteration.md's tables hold the rows of exit-curve.csv, exit-matches.csv and
    exit-exploit.csv, no more."""
    import csv

    page = (DOCS / "research" / "expert-iteration.md").read_text(encoding="utf-8")
    with open(DOCS / "research" / "exit-curve.csv", newline="") as f:
        curve = {(r["run"], r["iteration"]): r for r in csv.DictReader(f)}
    section = page.split("## Strength by iteration")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([\w-]+)` \| (\d+) \| (\d+) \| ([\d,]+) \| ([\d.]+) \| (−?[\d.]+) \| \[(−?[\d.]+), "
                      r"(−?[\d.]+)\] \|", section, re.MULTILINE)
    assert {(run, it) for run, _, it, *_ in rows} == set(curve)
    for run, seed, it, labels, hours, diff, low, high in rows:
        r = curve[run, it]
        want = (r["seed"], f"{int(r['labels']):,}", f"{float(r['hours']):.2f}",
                *(f"{float(r[k]):.2f}" for k in ("vs_opponent", "ci_low", "ci_high")))
        assert (seed, labels, hours, *(x.replace("−", "-") for x in (diff, low, high))) == want, (run, it)
    matches = _exit_matches()
    section = page.split("## Head to head")[1].split("\n## ")[0]
    assert set(_checked_match_rows(section, matches)) == set(matches)
    with open(DOCS / "research" / "exit-exploit.csv", newline="") as f:
        gains = {(r["agent"], r["seed"]): r for r in csv.DictReader(f)}
    section = page.split("## Against a best response")[1].split("\n## ")[0]
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| ([\d,]+) \| ([\d,]+) \| (−?[\d.]+) \| \[(−?[\d.]+), (−?[\d.]+)\] \|",
                      section, re.MULTILINE)
    assert {(agent, seed) for agent, seed, *_ in rows} == set(gains)
    for agent, seed, steps, decks, gain, low, high in rows:
        r = gains[agent, seed]
        want = (f"{int(r['budget_steps']):,}", f"{int(r['deals']):,}",
                *(f"{float(r[k]):.2f}" for k in ("gain", "ci_low", "ci_high")))
        assert (steps, decks, *(x.replace("−", "-") for x in (gain, low, high))) == want, (agent, seed)


def fence_faults(text: str) -> list[str]:
    """Code fences that do not close: a fence left open at the end, or a closing fence with text after it
    (CommonMark then reads it as content, and the block runs on to the next fence or the end)."""
    faults: list[str] = []
    opened: tuple[str, int] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r" {0,3}(`{3,}|~{3,})(.*)$", line)
        if not m:
            continue
        fence, rest = m.group(1), m.group(2)
        if opened is None:
            opened = (fence, n)
        elif fence[0] == opened[0][0] and len(fence) >= len(opened[0]):
            if rest.strip():
                faults.append(f"line {n}: text after a closing fence")
            else:
                opened = None
    if opened is not None:
        faults.append(f"line {opened[1]}: a fence never closed")
    return faults


def test_fence_faults_finds_both_kinds() -> None:
    """The checker below: a clean page passes, a botched close and an open end are both found."""
    assert fence_faults("a\n```bash\nx\n```\n\n````\n```\n````\nb\n") == []
    assert fence_faults("```bash\nx\n``` more text\ny\n") == ["line 3: text after a closing fence",
                                                             "line 1: a fence never closed"]
    assert fence_faults("~~~\nx\n") == ["line 1: a fence never closed"]


def test_every_page_closes_its_code_fences() -> None:
    """Every Markdown file of the project (the site, the README, the checkpoints' cards) closes each code block."""
    skip = {".git", "_build", "build", "runs", "node_modules", ".venv"}
    pages = [p for p in ROOT.rglob("*.md") if not skip & set(p.relative_to(ROOT).parts)]
    assert ROOT / "README.md" in pages and DOCS / "research" / "expert-iteration.md" in pages
    bad = {str(p.relative_to(ROOT)): f for p in pages if (f := fence_faults(p.read_text(encoding="utf-8")))}
    assert not bad, bad


@pytest.mark.parametrize("lines, want", [
    (["Summary.", "", "    python -m x --flag", "    python -m x --other", "", "More."],
     ["Summary.", "", ".. code-block:: text", "", "    python -m x --flag", "    python -m x --other", "", "More."]),
    (["Summary.", "", "A paragraph", "over two lines.", "", "    krypenv eval --a", "", "    krypenv play --b"],
     ["Summary.", "", "A paragraph", "over two lines.", "", ".. code-block:: text", "", "    krypenv eval --a", "",
      "    krypenv play --b"]),
    (["Summary.", "", "    from krypenv import x", "    x.run()"],
     ["Summary.", "", "::", "", "    from krypenv import x", "    x.run()"]),                    # Python: highlighted
    (["Its card::", "", "    {\"format\": 1}"], ["Its card::", "", "    {\"format\": 1}"]),           # literal already
    (["* an item", "", "    its continuation"], ["* an item", "", "    its continuation"]),          # a list's own
    (["- an item", "", "    its continuation"], ["- an item", "", "    its continuation"]),
    (["3. an item", "", "    its continuation"], ["3. an item", "", "    its continuation"]),
    ([".. note::", "", "    a directive's body"], [".. note::", "", "    a directive's body"]),
    (["| a | table |", "", "    x"], ["| a | table |", "", "    x"]),
    (["Summary.", "    an indented line without a blank before"],
     ["Summary.", "    an indented line without a blank before"]),
    (["Summary.", "", "A paragraph,", "its last line", "    then a definition (no blank line before)"],
     ["Summary.", "", "A paragraph,", "its last line", "    then a definition (no blank line before)"]),
])
def test_commands_in_docstrings_render_as_literal_blocks(lines: list[str], want: list[str]) -> None:
    """An indented block after a plain paragraph becomes literal (not a quotation whose ``--`` would become dashes):
    plain text for commands, ``::`` (Python's highlighting) for code; blocks after ``::``, list items, directives and
    tables, and lines without a blank, stay as they are."""
    got = list(lines)
    pages.literal_blocks(None, "module", "m", None, None, got)
    assert got == want
