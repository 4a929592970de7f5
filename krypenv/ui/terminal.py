"""``krypenv play``: a person against agents in the terminal, or driven by a script through a pipe.

    krypenv play [--game krypkasino|kungsholmskille] [--players N] [--agents human,expert,...] [--seat S]
                 [--seed S] [--deals K] [--record FILE] [--hint SPEC] [rules options]

Each turn prints what the others just did (with the table talk of the rule texts: "tabbe på
9", "TABBE!", "sistan!", "knackar!"), the table or the trick, every seat's hand size and
score or money, your hand and a numbered list of your legal moves in readable form
(Krypkasino: ``8H takes 6C 2D``, each capture of a card its own line).  Answer with:

| input            | meaning                                                        |
|------------------|----------------------------------------------------------------|
| ``3``            | move number 3                                                  |
| ``8h 6c 2d``     | the short form (Krypkasino: card, then the cards it takes;     |
|                  | Kungsholmskille: ``knacka``, ``7 gok``, ``gok``)               |
| ``?``            | help                                                           |
| ``h``            | a hint: what ``--hint SPEC`` (default the strongest shipped    |
|                  | agent) would play and why, with its top moves                  |
| ``q``            | quit (the partial record is saved)                             |

Bad input is asked again with the reason.  End of input (Ctrl-D, or the end of a piped
script) and Ctrl-C end cleanly and save the partial record.  On a terminal cards are in
colour (hearts and diamonds red); with a pipe, or with ``NO_COLOR`` set, output is plain
text without any colour or screen control, so ``yes 1 | krypenv play`` plays a whole deal
and prints the final scores (exit status 0).  Every deal is saved as a game record (JSON
Lines, ``--record FILE``, default ``games/<game>-<time>-s<seed>.jsonl``), checked by
``krypenv replay``.  Exit status: 0 at the end of the match, on ``q`` and at the end of
input; 130 on Ctrl-C; 1 for a bad agent spec or option (one line on stderr).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, TextIO

from krypenv.ui.session import InputError, Session

RED, BOLD, DIM, RESET = "\x1b[31m", "\x1b[1m", "\x1b[2m", "\x1b[0m"
PROMPT = "your move (number or short form; ? help, h hint, q quit): "


class Style:
    """Colours on a terminal, plain text otherwise."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def wrap(self, text: str, code: str) -> str:
        """``text`` in a colour or weight, or as it is without colour."""
        return f"{code}{text}{RESET}" if self.colour else text

    def card(self, name: str, game: str) -> str:
        """A card name, red for hearts and diamonds in Krypkasino."""
        if game == "krypkasino" and name[-1:] in ("H", "D"):
            return self.wrap(name, RED)
        return name

    def cards(self, names: list[str] | None, game: str) -> str:
        """Card names separated by spaces, or ``-``."""
        return " ".join(self.card(n, game) for n in names or []) or "-"


def render_events(events: list[dict[str, Any]], style: Style) -> list[str]:
    """What happened since the last prompt: one line per move, the table talk indented."""
    lines = []
    for e in events:
        if e["text"]:
            lines.append(e["text"])
        lines += [style.wrap(f"    {t}", BOLD) for t in e["talk"]]
    return lines


def _seat_rows(st: dict[str, Any], columns: list[tuple[str, list[Any]]]) -> list[str]:
    names = [n + (" *" if s == st["to_act"] else "") for s, n in enumerate(st["names"])]
    width = max(len(n) for n in names) + 2
    head = f"{'seat':<{width}}" + "".join(f"{c:>8}" for c, _ in columns)
    return [head] + [f"{names[s]:<{width}}" + "".join(f"{v[s]!s:>8}" for _, v in columns)
                     for s in range(st["players"])]


def render_state(st: dict[str, Any], style: Style) -> list[str]:
    """The table (or trick) as the person sees it: seats, scores or money, their hand."""
    g = st["game"]
    if g == "krypkasino":
        sistan = " (sistan)" if st["sistan"] else ""
        lines = [style.wrap(f"Krypkasino, deal {st['deal_no'] + 1}/{st['deals']}, round {st['round']}/{st['rounds']}"
                            f"{sistan}, deck {st['deck_left']} cards, dealer seat {st['dealer']}", BOLD),
                 f"table:      {style.cards(st['table'], g)}" + (f"    ({st['call']})" if st["call"] else ""),
                 f"set aside:  {style.cards(st['aside'], g)}"]
        lines += _seat_rows(st, [("hand", st["hand_sizes"]), ("pile", st["pile_sizes"]),
                                 ("points", st["card_points"]), ("tabbes", st["tabbes"]), ("score", st["scores"]),
                                 ("match", [t + s for t, s in zip(st["totals"], st["scores"])])])
    else:
        lines = [style.wrap(f"Kungsholmskille, deal {st['deal_no'] + 1}/{st['deals']}, {st['phase']}, pot "
                            f"{st['pot']}, talon {st['talon']}, dealer seat {st['dealer']}, forehand seat "
                            f"{st['forehand']}", BOLD)]
        said = [" ".join(c[-2:]) or "-" for c in st["calls"]]
        lines += _seat_rows(st, [("cards", st["hand_sizes"]), ("money", st["money"])])
        lines = lines[:2] + [row + f"   {said[s]}" + ("  (folded)" if st["folded"][s] else "")
                             for s, row in enumerate(lines[2:])]
        for t, trick in enumerate(st["tricks"]):
            cards = ", ".join(f"seat {s} {c}" for s, c in enumerate(trick["cards"]) if c is not None)
            won = f" -> seat {trick['winner']}" if trick["winner"] is not None else ""
            lines.append(f"trick {t + 1}: {cards}{won}")
    lines.append(f"your hand:  {style.cards(st['hand'], g)}")
    return lines


def render_legal(st: dict[str, Any]) -> list[str]:
    """The numbered legal moves with their short forms."""
    return ["your moves:"] + [f"  {m['n']:>2}. {m['label']:<34} [{m['key']}]" for m in st["legal"]]


def render_end(session: Session, style: Style) -> list[str]:
    """The match's result: every deal's scores or money and the totals."""
    g, names = session.game_name, session.names
    what = "score (the lowest wins)" if g == "krypkasino" else "money won (kronor)"
    lines = [style.wrap(f"Match over: {what}", BOLD)]
    for k, res in enumerate(session.results):
        lines.append(f"  deal {k + 1}: " + ", ".join(f"{names[s]} {v}" for s, v in enumerate(res)))
    totals = session.game.totals()
    label = "total" if g == "krypkasino" else "net money"
    lines.append(f"  {label}: " + ", ".join(f"{names[s]} {v}" for s, v in enumerate(totals)))
    if g == "krypkasino":
        st = session.state()
        teams, sides = st["teams"], st["team_totals"]  # K18: a team scores the sum of its seats
        if teams:
            lines.append("  teams: " + ", ".join(" + ".join(names[s] for s in team) + f" {v}"
                                                 for team, v in zip(teams, sides)))
        else:
            teams, sides = [(s,) for s in range(len(totals))], totals
        best = min(sides)
        lines.append("  winner: " + " and ".join(" + ".join(names[s] for s in team)
                                                for team, v in zip(teams, sides) if v == best))
    return lines


def hint_lines(session: Session, spec: str | None) -> list[str]:
    """A hint's lines, computed on a thread so that Ctrl-C gives it up at once (after the search step it is in).

    The prompt comes back as soon as the step running when Ctrl-C came has ended; a second
    Ctrl-C stops the game as at the prompt (the record is saved).
    """
    from krypenv.ui.hints import HintCancelled, hint

    stop = threading.Event()
    result: list[Any] = []

    def work() -> None:
        try:
            result.append(hint(session, spec, stop=stop.is_set).lines())
        except (ValueError, HintCancelled) as exc:
            result.append([f"no hint: {exc}"])
        except Exception as exc:  # noqa: BLE001 - shown at the prompt, the game goes on
            result.append([f"no hint: {type(exc).__name__}: {exc}"])

    worker = threading.Thread(target=work, name="krypenv-hint", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except KeyboardInterrupt:
        stop.set()
        worker.join()  # the step in progress ends; a second Ctrl-C lands in play()'s handler
        return ["hint interrupted"]
    return result[0]


def play(session: Session, stdin: TextIO, out: TextIO, colour: bool, hint_spec: str | None = None) -> int:
    """Run the prompt loop until the match ends, ``q`` or the end of input; the exit status."""
    style = Style(colour)
    shown = 0
    warned: str | None = None

    def say(lines: list[str]) -> None:
        print("\n".join(lines), file=out, flush=True)

    try:
        while True:
            st = session.state(events_from=shown)
            shown = st["n_events"]
            say(render_events(st["events"], style))
            if session.record_error and session.record_error != warned:  # a deal's record could not be written
                warned = session.record_error
                say([f"warning: {warned}; the game goes on"])
            if session.over:
                path = session.save()
                say(render_end(session, style) + [f"record saved to {path}"])
                return 0
            say([""] + render_state(st, style) + render_legal(st))
            while True:
                print(PROMPT, end="", file=out, flush=True)
                line = stdin.readline()
                if not line:
                    path = session.save()
                    say(["", f"end of input: the game stops here; partial record saved to {path}"])
                    return 0
                text = line.strip()
                if not colour:
                    print(text, file=out)  # echo a piped answer so the transcript reads like a session
                if text in ("q", "quit", "exit"):
                    path = session.save()
                    say([f"quit: record saved to {path}"])
                    return 0
                if text in ("?", "help"):
                    say([session.game.help_text(), "commands: ? this help, h a hint, q quit (the record is saved)"]
                        + render_legal(st))
                    continue
                if text in ("h", "hint"):
                    say(hint_lines(session, hint_spec))
                    continue
                try:
                    session.play(session.parse(text))
                    break
                except InputError as exc:
                    say([f"{exc}"])
    except KeyboardInterrupt:
        path = session.save()
        say(["", f"interrupted: partial record saved to {path}"])
        return 130


def add_arguments(parser: Any, games: tuple[str, ...]) -> None:
    """The ``play`` sub-command's arguments."""
    parser.add_argument("--game", choices=games, default="krypkasino", help="which game (default krypkasino)")
    parser.add_argument("--players", type=int, default=None, choices=range(2, 7), metavar="{2..6}",
                        help="players at the table (default 3 for krypkasino, 4 for kungsholmskille)")
    parser.add_argument("--agents", default=None, metavar="SPECS",
                        help="comma-separated agent specs: one per seat with one 'human' (human,expert,pimc), or "
                             "the opponents only (default: expert for krypkasino, random for kungsholmskille)")
    parser.add_argument("--seat", type=int, default=None, help="your seat when --agents names only opponents "
                                                                "(default 0)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the decks and agents (default: a fresh one, "
                                                                "printed)")
    parser.add_argument("--deals", type=int, default=1, help="deals in the match (default 1)")
    parser.add_argument("--record", default=None, metavar="FILE",
                        help="where to save the game records (default games/<game>-<time>-s<seed>.jsonl)")
    parser.add_argument("--hint", default=None, metavar="SPEC", help="the agent that gives hints (default: the "
                                                                      "strongest shipped one, e.g. pimc)")
    add_rules_arguments(parser)


def add_rules_arguments(parser: Any) -> None:
    """Krypkasino's rules options (K6, K8, K17, K18)."""
    parser.add_argument("--two-player-deal", choices=("6+4", "5+6"), default=None, help="K6 variant for 2 players")
    parser.add_argument("--set-aside", choices=("court", "spades"), default=None, help="K8 variant")
    parser.add_argument("--last-capture-point", action="store_true", default=None, help="K17 variant")
    parser.add_argument("--teams", default=None, metavar="T",
                        help="K18 teams: none (default), a number of teams (2: seats alternate; 3: six players in "
                             "three teams) or seat lists such as 0,2/1,3")


def rules_options(args: Any) -> dict[str, Any]:
    """The rules options given on the command line, as record rules keys; teams as their text, which the game's
    adapter parses (none, a number of teams or seat lists)."""
    opts: dict[str, Any] = {}
    if args.two_player_deal:
        opts["two_player_deal"] = args.two_player_deal
    if args.set_aside:
        opts["set_aside"] = args.set_aside
    if args.last_capture_point:
        opts["last_capture_point"] = True
    if args.teams:
        opts["teams"] = args.teams
    return opts


def run(args: Any, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    """``krypenv play``: build the session from the arguments and play it."""
    import secrets

    from krypenv.ui.games import DEFAULT_OPPONENT, DEFAULT_PLAYERS

    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    players = args.players or DEFAULT_PLAYERS[args.game]
    default = DEFAULT_OPPONENT[args.game]
    specs = (args.agents or default).split(",")
    seed = secrets.randbelow(10**6) if args.seed is None else args.seed
    session = Session(args.game, players, specs, seat=args.seat, seed=seed, deals=args.deals,
                      options=rules_options(args), record=args.record)
    colour = out.isatty() and stdin.isatty() and not os.environ.get("NO_COLOR")
    print(f"{args.game}: {players} players, you are seat {session.human}; seed {seed}; "
          f"records go to {session.record_path}", file=out)
    return play(session, stdin, out, colour, args.hint)
