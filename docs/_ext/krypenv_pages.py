"""Sphinx extension: the pages and tables of the site that are generated from the code at build time.

For every game of the registry (:data:`krypenv.games.GAMES`) it writes, before Sphinx reads the
sources, into ``docs/generated/`` (ignored by git):

* ``<game>-environments.md``: the game's entry module as one page, PettingZoo style: a table at the
  top computed from the live env objects (import, agents, action and observation spaces of the AEC,
  Gymnasium and VecEnv interfaces for every player count), then the module docstrings of the AEC,
  Gymnasium and VecEnv classes, the observation layout and the action table, and the version history;
  its "Spaces per preset" section builds an env for every preset of the game's rules (``PRESETS``) and
  every player count the preset allows, so the spaces stated per preset come from the code;
* ``<game>-presets.md``: the table of the game's presets (rule keys, deck, deal, rounds or deals per pot,
  total points, observation and action sizes), included by the research pages;
* ``<game>-agents.md``: the spec table of the game's agents, from the agent registry
  (:func:`krypenv.agents.base.known`, :func:`~krypenv.agents.base.find_entry`);
* ``games.md``: the registry of games itself (one row per :class:`krypenv.games.Game`).

The hand-written overview page of each game (``docs/games/<game>.md``) is checked the same way.

Every space a docstring states by hand (``Discrete(105)``, ``(325 + 7P + 5,)``, ``Box(int16, ...)``) is
checked against the live env for every player count; a mismatch is a Sphinx warning, so the ``-W``
build fails rather than publish a wrong page.  Module docstrings are written in Markdown with
reST inline roles; :func:`myst_text` turns those roles into MyST's.  For the API reference, a module
docstring in Markdown is rendered on its game's environment page; autodoc shows a link there instead
(:func:`skip_markdown_docstring`).
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import numpy as np
from sphinx.application import Sphinx
from sphinx.util import logging

LOG = logging.getLogger(__name__)
DOCS = Path(__file__).resolve().parents[1]
ROLE = re.compile(r":(mod|class|func|data|meth|attr|exc|obj):`~?([^`]+)`")
MARKDOWN_DOCSTRING = re.compile(r"^\s*(#+ |\|[-|]+\|\s*$)", re.MULTILINE)  # a Markdown heading or table rule
MARKDOWN_MODULES: dict[str, str] = {}  # module name -> the generated page that renders its docstring


def myst_text(doc: str, shift: int = 0) -> str:
    """A module docstring as MyST Markdown: reST roles and ````code```` made Markdown, headings ``shift`` deeper."""
    doc = ROLE.sub(lambda m: f"{{py:{m.group(1)}}}`{m.group(2)}`", doc)
    doc = re.sub(r"``([^`]+?)``", r"`\1`", doc)
    if shift:
        doc = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + shift) + " ", doc, flags=re.MULTILINE)
    return doc


def body(doc: str) -> str:
    """A docstring without its first line when that line is a ``# title``."""
    lines = doc.strip("\n").splitlines()
    return "\n".join(lines[1:]).strip("\n") if lines and lines[0].startswith("# ") else "\n".join(lines)


def after_summary(doc: str) -> str:
    """A docstring without its one-line summary (the shell modules' docstrings, under a game's heading)."""
    return "\n".join(doc.strip("\n").splitlines()[1:]).strip("\n")


def split_history(doc: str) -> tuple[str, str]:
    """(the docstring without its ``### Version History`` section, that section's text)."""
    head, sep, tail = doc.partition("### Version History")
    return (head.rstrip(), tail.strip()) if sep else (doc, "")


def drop_first_table(doc: str) -> str:
    """The docstring without its first Markdown table (the card the generated table at the top replaces)."""
    lines, out, state = doc.splitlines(), [], "before"
    for line in lines:
        if state == "before" and line.startswith("|"):
            state = "in"
            continue
        if state == "in":
            if line.startswith("|"):
                continue
            state = "after"
        out.append(line)
    return "\n".join(out)


def space_text(space: Any) -> str:
    """A Gymnasium space as a short string: ``Discrete(105)``, ``Box(int8, (349,))``, or a Dict's members."""
    kind = type(space).__name__
    if kind == "Discrete":
        return f"Discrete({int(space.n)})"
    if kind == "Box":
        return f"Box({np.dtype(space.dtype).name}, {tuple(space.shape)})"
    if kind == "Dict":
        return "Dict(" + ", ".join(f"{k}: {space_text(v)}" for k, v in space.spaces.items()) + ")"
    return str(space)


def stated_space_errors(where: str, doc: str, actions: int, shapes: dict[int, int], dtype: str) -> list[str]:
    """What a docstring states of the action space, observation size or dtype that the live env does not have."""
    errors = []
    for n in re.findall(r"Discrete\((\d+)\)", doc):
        if int(n) != actions:
            errors.append(f"{where} states Discrete({n}); the live env has Discrete({actions})")
    formulas = re.findall(r"\((\d+(?: \+ \d*P)+(?: \+ \d+)?),\)", doc)  # a shape: (325 + 7P + 5,)
    formulas += re.findall(r"`(\d+(?: \+ \d*P)+(?: \+ \d+)?)`", doc)  # a size in prose: `75 + 23P`
    for formula in formulas:
        for players, size in shapes.items():
            value = sum(int(term[:-1] or 1) * players if term.endswith("P") else int(term)
                        for term in formula.split(" + "))
            if value != size:
                errors.append(f"{where} states ({formula},): {value} for {players} players; the live env has {size}")
    for stated in re.findall(r"Box\((int\d+|float\d+),", doc):
        if stated != dtype:
            errors.append(f"{where} states Box({stated}, ...); the live observation dtype is {dtype}")
    return errors


def rules_module(game: Any) -> Any:
    """The module of the game's rules (``<game package>.rules``: ``Rules`` and ``PRESETS``)."""
    return importlib.import_module(f"{game.part('entry').__name__.rsplit('_v', 1)[0]}.rules")


def preset_players(game: Any) -> dict[str, tuple[int, ...]]:
    """Each preset of the game's rules -> the player counts it allows (those ``Rules.from_preset`` accepts)."""
    rules = rules_module(game)
    allowed: dict[str, tuple[int, ...]] = {}
    for name in rules.PRESETS:
        counts = []
        for players in game.players:
            try:
                rules.Rules.from_preset(name, players=players)
            except ValueError:
                continue
            counts.append(players)
        allowed[name] = tuple(counts)
    return allowed


def field_highs(game: Any, players: int, high: np.ndarray) -> dict[str, int]:
    """The largest high of each named field of the observation layout (``<game package>.observation.layout``)."""
    obs_module = importlib.import_module(f"{game.part('entry').__name__.rsplit('_v', 1)[0]}.observation")
    return {field: int(high[where].max()) for field, where in obs_module.layout(players).items()
            if high[where].size}


def preset_spaces(game: Any) -> list[str]:
    """Rows of the spaces table per preset: every preset and allowed player count, built as live envs."""
    entry = game.part("entry")
    rows, standard_highs = [], {}
    allowed = preset_players(game)
    reference = "standard" if "standard" in allowed else next(iter(allowed))  # the default game's preset
    for name, counts in sorted(allowed.items(), key=lambda item: item[0] != reference):
        for players in counts:
            aec = entry.raw_env(players=players, preset=name)
            agent = aec.possible_agents[0]
            obs = aec.observation_space(agent)["observation"]
            gym_env = entry.GymEnv(players=players, preset=name)
            highs = field_highs(game, players, np.asarray(obs.high))
            if name == reference:
                standard_highs[players] = highs
            base = standard_highs.get(players, {})
            changed = ", ".join(f"`{field}` ≤ {value}" for field, value in highs.items()
                                if base and base.get(field) != value) or ("—" if base else "(the reference)")
            rows.append(f"| `{name}` | {players} | `{space_text(obs)}` | `{space_text(gym_env.observation_space)}` "
                        f"| `{space_text(aec.action_space(agent))}` | {changed} |")
            aec.close()
            gym_env.close()
    return rows


def presets_table(game: Any) -> str:
    """The table of the game's presets, from the code; a value that depends on the player count is a list
    ``a / b / …`` in the order of the preset's player counts."""
    rules, entry = rules_module(game), game.part("entry")
    columns = [(label, attr) for label, attr in (
        ("deck", "deck_size"), ("hand", "hand_size"), ("table", "table_size"), ("talon", "talon_size"),
        ("rounds", "rounds"), ("deals per pot", "max_deals"), ("total points", "total_points"))
        if hasattr(rules.Rules, attr)]
    lines = ["| preset | rule keys | players | " + " | ".join(label for label, _ in columns)
             + " | observation | actions |", "|---" * (5 + len(columns)) + "|"]
    for name, counts in preset_players(game).items():
        keys = ", ".join(f"`{k}={'-'.join(v) if isinstance(v, tuple) else 'all' if v is None else v}`"
                         for k, v in rules.PRESETS[name].items())
        cells: list[str] = []
        for _, attr in columns:
            values = [getattr(rules.Rules.from_preset(name, players=p), attr) for p in counts]
            shown = ["unbounded" if v is None else str(v) for v in values]
            cells.append(shown[0] if len(set(shown)) == 1 else " / ".join(shown))  # in the order of the players
        sizes, actions = [], set()
        for players in counts:
            aec = entry.raw_env(players=players, preset=name)
            agent = aec.possible_agents[0]
            sizes.append(str(aec.observation_space(agent)["observation"].shape[0]))
            actions.add(int(aec.action_space(agent).n))
            aec.close()
        lines.append(f"| `{name}` | {keys or '(none: the standard game)'} | {', '.join(map(str, counts))} | "
                     + " | ".join(cells) + f" | {' / '.join(sizes)} | {', '.join(map(str, sorted(actions)))} |")
    return "\n".join(lines) + "\n"


def environments_page(game: Any) -> str:
    """The generated environment page of one game: live table at the top, then the docstrings."""
    entry = game.part("entry")
    aec_module = importlib.import_module(entry.raw_env.__module__)
    gym_cls, vec_cls, dev_cls = entry.GymEnv, entry.VecEnv, entry.DeviceVecEnv
    gym_module, vec_module = importlib.import_module(gym_cls.__module__), importlib.import_module(vec_cls.__module__)
    dev_module = importlib.import_module(dev_cls.__module__)
    shell_module = importlib.import_module("krypenv.envs.gym")  # every game's Gymnasium env's shell
    pkg = entry.__name__.rsplit("_v", 1)[0]
    obs_module = importlib.import_module(f"{pkg}.observation")
    act_module = importlib.import_module(f"{pkg}.actions")
    rows, shapes, default = [], {}, None
    default_players = inspect.signature(aec_module.raw_env).parameters["players"].default
    for players in game.players:
        aec = entry.raw_env(players=players)
        agent = aec.possible_agents[0]
        gym_env = gym_cls(players=players)
        vec = vec_cls(2, players=players, seed=0)
        obs_space = aec.observation_space(agent)
        shapes[players] = int(obs_space["observation"].shape[0])
        dtype = np.dtype(obs_space["observation"].dtype).name
        actions = int(aec.action_space(agent).n)
        assert space_text(gym_env.observation_space) == space_text(vec.observation_space)
        assert space_text(gym_env.action_space) == space_text(vec.action_space) == space_text(aec.action_space(agent))
        cells = (space_text(obs_space["observation"]), space_text(gym_env.observation_space),
                 space_text(vec.observation_space), tuple(vec.action_masks().shape))
        rows.append(f"| {players} | " + " | ".join(f"`{cell}`" for cell in cells) + " |")
        if default is None or players == default_players:
            default = (players, aec, gym_env, vec)
        vec.close()
    players, aec, gym_env, vec = default
    agent = aec.possible_agents[0]
    name = aec.metadata["name"]
    dev = dev_cls(2, device="cpu", players=players, seed=0)
    assert space_text(dev.single_observation_space) == space_text(gym_env.observation_space)
    for where, mod in (("the AEC docstring", aec_module), ("the Gymnasium docstring", gym_module),
                       ("the VecEnv docstring", vec_module), ("the device env docstring", dev_module),
                       ("the observation docstring", obs_module)):
        for error in stated_space_errors(f"{mod.__name__} ({where})", mod.__doc__ or "", actions, shapes, dtype):
            LOG.warning(error)  # the -W build fails
    overview = DOCS / "games" / f"{game.name}.md"  # the game's hand-written overview page
    if overview.exists():
        for error in stated_space_errors(f"docs/games/{game.name}.md", overview.read_text(encoding="utf-8"), actions,
                                         shapes, dtype):
            LOG.warning(error)
    short = entry.__name__.rsplit(".", 1)[1]
    aec_doc, history = split_history(drop_first_table(body(aec_module.__doc__ or "")))
    for mod in (entry, aec_module, gym_module, vec_module, dev_module, obs_module, act_module):
        MARKDOWN_MODULES[mod.__name__] = f"{game.name}-environments"
    lines = [
        f"# {game.title} environments (`{entry.__name__}`)",
        "",
        ("```{note}\nThis page is generated when the site is built (`docs/_ext/krypenv_pages.py`): the tables "
         "are computed from the live env objects, and the text is the modules' docstrings. A space a docstring "
         "states that the env does not have fails the build.\n```"),
        "",
        "| | |",
        "|---|---|",
        f"| Import | `from krypenv import {short}` |",
        f"| PettingZoo AEC | `{short}.env(players={players})`, `{short}.raw_env(...)`; name `{name}` |",
        (f"| Gymnasium | `gymnasium.make(\"{game.gym_id}\")` or `{short}.GymEnv(...)` "
         f"(`{gym_cls.__module__}.{gym_cls.__name__}`) |"),
        f"| VecEnv (SB3) | `{short}.VecEnv(num_envs, ...)` (`{vec_cls.__module__}.{vec_cls.__name__}`) |",
        (f"| Device env (tensors, GPU or CPU) | `{short}.DeviceVecEnv(num_envs, device=\"cuda\", ...)` "
         f"(`{dev_cls.__module__}.{dev_cls.__name__}`, {{doc}}`/api/envs` `krypenv.envs.device`) |"),
        f"| Agents | `{aec.possible_agents}` ({players} players, the default) |",
        f"| Number of agents | {', '.join(map(str, game.players))} (`players`) |",
        f"| Action space | `{space_text(aec.action_space(agent))}` (every interface, every player count) |",
        f"| Observation space (AEC, {players} players) | `{space_text(aec.observation_space(agent))}` |",
        f"| Observation space (Gymnasium, {players} players) | `{space_text(gym_env.observation_space)}` |",
        f"| Rules | {{doc}}`/{Path(game.rules_doc).stem}` (`{game.rules_doc}`, rule ids {game.rule_prefix}1, …) |",
        "",
        ("Observation and mask per player count (the AEC env's `observation` member; the Gymnasium and VecEnv "
         "observation spaces; the VecEnv's `action_masks()` for 2 games):"),
        "",
        "| players | AEC `observation` | Gymnasium | VecEnv (per game) | VecEnv masks (2 games) |",
        "|---:|---|---|---|---|",
        *rows,
        "",
        "## Spaces per preset",
        "",
        (f"Every preset of the rules ({{doc}}`/{Path(game.rules_doc).stem}`, `Rules.from_preset`) with every "
         "player count it allows, built as live envs (`preset=...`): the observation layout and the action space "
         "are those of the standard game; only the Box highs follow the deck, and the last column names the "
         "fields whose highest value differs from the standard preset's for the same player count."),
        "",
        "| preset | players | AEC `observation` | Gymnasium | actions | highs that differ from `standard` |",
        "|---|---:|---|---|---|---|",
        *preset_spaces(game),
        "",
        "## Entry module",
        "",
        myst_text(entry.__doc__ or "").strip(),
        "",
        f"## PettingZoo AEC (`{aec_module.__name__}`)",
        "",
        myst_text(aec_doc, shift=0).strip(),
        "",
        f"## Gymnasium (`{gym_module.__name__}`)",
        "",
        myst_text(body(gym_module.__doc__ or ""), shift=1).strip(),
        "",
        f"### What every game's Gymnasium env does (`{shell_module.__name__}`)",
        "",
        myst_text(after_summary(shell_module.__doc__ or ""), shift=1).strip(),
        "",
        f"## VecEnv (`{vec_module.__name__}`)",
        "",
        myst_text(body(vec_module.__doc__ or ""), shift=1).strip(),
        "",
        f"## Device env (`{dev_module.__name__}`)",
        "",
        myst_text(body(dev_module.__doc__ or ""), shift=1).strip(),
        "",
        f"## Observation layout (`{obs_module.__name__}`)",
        "",
        myst_text(obs_module.__doc__ or "").strip(),
        "",
        f"## Action table (`{act_module.__name__}`)",
        "",
        myst_text(act_module.__doc__ or "").strip(),
        "",
        "## Version history",
        "",
        myst_text(history).strip() or "(none stated)",
        "",
    ]
    aec.close()
    gym_env.close()
    return "\n".join(lines)


def agents_table(game: Any) -> str:
    """The spec table of one game's agents, from the agent registry."""
    from krypenv.agents import base

    game.part("agents")  # registers the game's specs
    lines = ["| spec | idea | options a request may set (`krypenv serve`) |", "|---|---|---|"]
    for spec, summary in base.known(game.name).items():
        entry = base.find_entry(spec, game.name)
        shown = f"{spec}:{entry.argument}" if entry.takes_path else spec
        options = "; ".join(f"`{k}`: {lim.describe()}" for k, lim in sorted(entry.limits.items())) or ""
        lines.append(f"| `{shown}` | {summary.replace('|', '/')} | {options} |")
    lines.append("| `module:attr` | your own agent: `attr` of an importable module, a class or an agent object | |")
    return "\n".join(lines) + "\n"


def games_table() -> str:
    """The registry of games as a table."""
    from krypenv.games import GAMES, PARTS

    lines = ["| game | title | rules | players | Gymnasium id | " + " | ".join(PARTS) + " |",
             "|---" * (5 + len(PARTS)) + "|"]
    for g in GAMES.values():
        parts = " | ".join(f"`{getattr(g, p)}`" for p in PARTS)
        lines.append(f"| `{g.name}` | {g.title} | `{g.rules_doc}` ({g.rule_prefix}) | "
                     f"{', '.join(map(str, g.players))} | `{g.gym_id}` | {parts} |")
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds it already (so Sphinx rebuilds only what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app: Sphinx) -> None:
    """Write every generated page and table into ``docs/generated/``."""
    from krypenv.games import GAMES

    out = Path(app.srcdir) / "generated"
    for game in GAMES.values():
        write_if_changed(out / f"{game.name}-environments.md", environments_page(game))
        write_if_changed(out / f"{game.name}-agents.md", agents_table(game))
        write_if_changed(out / f"{game.name}-presets.md", presets_table(game))
    write_if_changed(out / "games.md", games_table())


def skip_markdown_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """A module docstring in Markdown (rendered on its environment page) becomes a link to that page."""
    if what == "module" and MARKDOWN_DOCSTRING.search("\n".join(lines)):
        page = MARKDOWN_MODULES.get(name)
        first = lines[0].lstrip("# ") if lines else name
        lines[:] = [first, "", f"The module's documentation is rendered on :doc:`/generated/{page}`." if page else
                    "The module's documentation (Markdown) is in its source."]


NOT_PLAIN = re.compile(r"^(\.\.|[*+|:-] |#\. |\d+\. |>>>)")  # a paragraph that opens a directive, list, table, field
COMMAND = re.compile(r"^\s*(krypenv|python|pip|cd|ws)\b")  # a block of shell commands (or URLs), not Python code


def literal_blocks(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """An indented block after a plain paragraph (a docstring's commands) becomes a literal block.

    reST reads such a block as a quotation: set in the body font, its ``--`` turned into dashes, so a command copied
    from the page fails. A ``::`` paragraph before it (which reST drops) makes it literal, as ``paragraph::`` would,
    without touching the docstring that ``--help`` prints; a block of commands is set as plain text instead (Python's
    highlighting would colour their words ``eval``, ``in`` and ``and``).
    """
    out: list[str] = []
    start = 0  # the first line of the current top-level paragraph
    for k, line in enumerate(lines):
        if line.startswith("    ") and k >= 2 and not lines[k - 1].strip():
            prev = lines[k - 2]
            if prev.strip() and not prev.startswith(" ") and not prev.rstrip().endswith("::") \
                    and not NOT_PLAIN.match(lines[start]):
                out += [".. code-block:: text" if COMMAND.match(line) else "::", ""]
        if line.strip() and not line.startswith(" ") and (k == 0 or not lines[k - 1].strip()):
            start = k
        out.append(line)
    lines[:] = out


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the generator and the autodoc hooks."""
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", skip_markdown_docstring)
    app.connect("autodoc-process-docstring", literal_blocks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
