"""``krypenv play``: a person against agents in the terminal, or driven by a script through a pipe.

    krypenv play [--game GAME] [--players N] [--agents human,expert,...] [--seat S]
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

from krypenv.games import DEFAULT_GAME, GAMES, game, names
from krypenv.ui.session import InputError, Session
from krypenv.ui.terminal_text import BOLD, Style

PROMPT = "your move (number or short form; ? help, h hint, q quit): "


def render_events(events: list[dict[str, Any]], style: Style) -> list[str]:
    """What happened since the last prompt: one line per move, the table talk indented."""
    lines = []
    for e in events:
        if e["text"]:
            lines.append(e["text"])
        lines += [style.wrap(f"    {t}", BOLD) for t in e["talk"]]
    return lines


def render_state(st: dict[str, Any], style: Style) -> list[str]:
    """The table (or trick) as the person sees it: the game's own lines (seats, scores or money), then their hand."""
    ui = game(st["game"]).part("ui")
    return ui.terminal_state(st, style) + [f"your hand:  {style.cards(st['hand'], ui.red_card)}"]


def render_legal(st: dict[str, Any]) -> list[str]:
    """The numbered legal moves with their short forms."""
    return ["your moves:"] + [f"  {m['n']:>2}. {m['label']:<34} [{m['key']}]" for m in st["legal"]]


def render_end(session: Session, style: Style) -> list[str]:
    """The match's result: every deal's scores or money, the totals and the game's closing lines."""
    ui, names = game(session.game_name).part("ui"), session.names
    lines = [style.wrap(f"Match over: {ui.RESULT_NAME}", BOLD)]
    for k, res in enumerate(session.results):
        lines.append(f"  deal {k + 1}: " + ", ".join(f"{names[s]} {v}" for s, v in enumerate(res)))
    totals = session.game.totals()
    lines.append(f"  {ui.TOTAL_NAME}: " + ", ".join(f"{names[s]} {v}" for s, v in enumerate(totals)))
    return lines + ui.terminal_end(session.state(), names, totals)


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


def add_arguments(parser: Any) -> None:
    """The ``play`` sub-command's arguments; the games and their defaults from the registry (:mod:`krypenv.games`)."""
    players = ", ".join(f"{g.play_players} for {g.name}" for g in GAMES.values())
    opponents = ", ".join(f"{g.play_opponent} for {g.name}" for g in GAMES.values())
    parser.add_argument("--game", choices=names(), default=DEFAULT_GAME, help=f"which game (default {DEFAULT_GAME})")
    parser.add_argument("--players", type=int, default=None, choices=range(2, 7), metavar="{2..6}",
                        help=f"players at the table (default {players})")
    parser.add_argument("--agents", default=None, metavar="SPECS",
                        help="comma-separated agent specs: one per seat with one 'human' (human,expert,pimc), or "
                             f"the opponents only (default: {opponents})")
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
    """The game's preset (RULES.md K22, KILLE.md L22) and Krypkasino's rules options (K6, K8, K17, K18)."""
    parser.add_argument("--preset", default=None, metavar="NAME",
                        help="a named rule set of the game (default standard; tiny: Krypkasino, 2 players; "
                             "small: RULES.md K22, KILLE.md L22)")
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
    if getattr(args, "preset", None):
        opts["preset"] = args.preset
    return opts


def run(args: Any, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    """``krypenv play``: build the session from the arguments and play it."""
    import secrets

    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    declared = game(args.game)
    players = args.players or declared.play_players
    specs = (args.agents or declared.play_opponent).split(",")
    seed = secrets.randbelow(10**6) if args.seed is None else args.seed
    session = Session(args.game, players, specs, seat=args.seat, seed=seed, deals=args.deals,
                      options=rules_options(args), record=args.record)
    colour = out.isatty() and stdin.isatty() and not os.environ.get("NO_COLOR")
    print(f"{args.game}: {players} players, you are seat {session.human}; seed {seed}; "
          f"records go to {session.record_path}", file=out)
    return play(session, stdin, out, colour, args.hint)
