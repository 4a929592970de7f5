"""Play and watch: a person at the table, in the terminal (``krypenv play``) or the browser (``krypenv serve``).

The package is the top layer of the house, beside the CLI: it drives the games' engines and
loads agents by their spec strings, and nothing below imports it.

| module              | what it holds                                                                 |
|---------------------|-------------------------------------------------------------------------------|
| ``session.py``      | :class:`~krypenv.ui.session.Session`: a match in progress over one engine     |
|                     | deal, the human's seat, agents for the others, per-seat JSON states, records  |
| ``krypkasino.py``   | Krypkasino's adapter: legal (card, capture) moves listed once, table talk     |
| ``kungsholmskille.py`` | Kungsholmskille's adapter: calls, exchanges and tricks, money and the pot  |
|                     | (each game's adapter is the ``ui`` part of its :mod:`krypenv.games` entry)    |
| ``hints.py``        | what an agent would play and why: probabilities, or votes of repeated searches |
| ``replay.py``       | replay frames of game records (every seat's cards at every move), HTML export |
| ``terminal.py``     | ``krypenv play``: the terminal front end                                      |
| ``terminal_text.py``| colours (or plain text) and the seat table, shared by the games' terminal lines |
| ``server.py``       | ``krypenv serve``: the command, its arguments and the API's reference         |
| ``web.py``          | the web app on Starlette: the page (``static/``), the JSON API's routes       |
| ``live.py``         | live play over a WebSocket: each seat's move as it is made                    |
| ``serving.py``      | uvicorn's settings, the connection cap and request deadline it lacks          |
| ``guard.py``        | Host, Origin, method and body checks before the app; every limit (``Limits``) |
| ``api.py``          | the API behind the web layer: bodies checked, games, moves, hints, replays    |
| ``store.py``        | the games held (least recently used), the agents' pool, live watchers         |
| ``menu.py``         | the agents the server offers and accepts: names, bounded options              |
"""
