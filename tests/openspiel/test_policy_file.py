"""Tabular policy files and the ``tabular`` agent: the file contract as properties, sampling against exact oracles.

The contract is the docstrings of :mod:`krypenv.openspiel.policy` and :mod:`krypenv.agents.tabular`:
the JSON format (text or hashed keys, gzip for ``.gz``), 6 decimals with zero-probability
actions left out and each entry renormalised, every entry checked to be a distribution, a
missing information state refused, ``sample(infostate, u)`` the inverse distribution function
of the stored distribution, and the agent drawing from it with one uniform of the game's stream
per decision.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pyspiel = pytest.importorskip("pyspiel")
stats = pytest.importorskip("scipy.stats")

from krypenv.agents import tabular
from krypenv.agents.base import load
from krypenv.agents.checkpoint import SHIPPED

import krypenv.openspiel  # noqa: F401  (registers the games)
from krypenv.openspiel.krypkasino import information_state_text
from krypenv.openspiel.policy import FORMAT, HASHED, TabularPolicyFile, hashed_key
from tests.openspiel.helpers import KRYPKASINO, play_chance

MICRO_PARAMS = {"players": 2, "preset": "tiny", "ranks": "A-2-3", "hand": 2, "table": 2}

distributions = st.dictionaries(st.integers(0, 104), st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=6)
tables = st.dictionaries(st.text(min_size=1, max_size=12), distributions, min_size=1, max_size=5)


def normalised(dist: dict[int, float]) -> dict[int, float]:
    """What a saved entry holds, by the docstring: 6 decimals, zeros left out (all zero: the likeliest), renormalised
    to 6 decimals, and what renormalising rounded to 0 left out too."""
    kept = {a: round(p, 6) for a, p in dist.items() if round(p, 6) > 0}
    if not kept:
        kept = {max(dist, key=lambda a: dist[a]): 1.0}
    total = sum(kept.values())
    return {a: round(p / total, 6) for a, p in kept.items() if round(p / total, 6) > 0}


@settings(max_examples=40, deadline=None)
@given(table=tables, hashed=st.booleans(), gz=st.booleans(), meta=st.dictionaries(st.text(max_size=5), st.integers()))
@example(table={"0": {0: 1.0, 1: 1.0, 2: 9.3e-07}}, hashed=False, gz=False, meta={})  # 1e-6 halved rounds to 0
def test_save_then_load_keeps_every_entry(tmp_path_factory: pytest.TempPathFactory, table: dict, hashed: bool,
                                          gz: bool, meta: dict) -> None:
    """Any table round-trips through a file (text or hashed keys, plain or gzip): the game, meta and each entry's
    normalised distribution, looked up by the information state."""
    path = tmp_path_factory.mktemp("p") / ("policy.json.gz" if gz else "policy.json")
    TabularPolicyFile("g(x=1)", table, meta).save(path, hashed=hashed)
    raw = path.read_bytes()
    assert (raw[:2] == b"\x1f\x8b") == gz  # gzip exactly when the name ends in .gz
    data = json.loads(gzip.decompress(raw) if gz else raw)
    assert data["format"] == FORMAT and data["keys"] == (HASHED if hashed else "text")
    loaded = TabularPolicyFile.load(path)
    assert loaded.game == "g(x=1)" and loaded.meta == meta and loaded.hashed == hashed
    assert len(loaded.table) == len({hashed_key(k) if hashed else k for k in table})
    for key, dist in table.items():
        want = normalised(dist)
        assert loaded.probabilities(key) == pytest.approx(want, abs=1e-6)
        assert sum(loaded.probabilities(key).values()) == pytest.approx(1.0, abs=1e-4)
        assert all(p > 0 for p in loaded.probabilities(key).values())


def test_saved_files_are_reproducible_with_six_decimals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same table saved at two different times gives the same bytes (gzip without a time stamp); every
    probability in the file has at most 6 decimals."""
    import time

    table = TabularPolicyFile("g", {"s": {0: 1 / 3, 1: 2 / 3}, "t": {4: 1.0}})
    files = []
    for clock in (1e9, 2e9):
        monkeypatch.setattr(time, "time", lambda clock=clock: clock)
        files.append(tmp_path / f"p{int(clock)}.json.gz")
        table.save(files[-1])
    assert files[0].read_bytes() == files[1].read_bytes()
    data = json.loads(gzip.decompress(files[0].read_bytes()))
    assert data["policy"]["s"] == {"0": 0.333333, "1": 0.666667}


def test_a_hashed_table_cannot_be_written_with_text_keys(tmp_path: Path) -> None:
    """Hashes cannot be turned back into information states."""
    table = TabularPolicyFile("g", {hashed_key("s"): {1: 1.0}}, hashed=True)
    with pytest.raises(ValueError, match="^a table keyed by hashes cannot be written with text keys$"):
        table.save(tmp_path / "x.json", hashed=False)
    table.save(tmp_path / "y.json")  # hashed stays hashed, not hashed twice
    assert TabularPolicyFile.load(tmp_path / "y.json").probabilities("s") == {1: 1.0}


def test_hashed_key_is_sha1_16() -> None:
    """The key is the first 16 hex digits of the SHA-1 of the UTF-8 text (a known vector)."""
    assert hashed_key("abc") == "a9993e364706816a"
    assert hashed_key("å") != hashed_key("a") and len(hashed_key("x" * 1000)) == 16


FORMAT_ERROR = "format must be 'krypenv-tabular/1'"
NOT_A_DISTRIBUTION = "entry 's' is not a probability distribution"
NOT_AN_OBJECT = "entry 's' is not an action -> probability object"
BAD_FILES = [
    ("[]", FORMAT_ERROR),
    ('{"format": "krypenv-tabular/2", "game": "g", "policy": {}}', FORMAT_ERROR),
    ('{"format": "krypenv-tabular/1", "policy": {}}', "needs a game string and a policy object"),
    ('{"format": "krypenv-tabular/1", "game": 3, "policy": {}}', "needs a game string and a policy object"),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": []}', "needs a game string and a policy object"),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {"0": 0.5}}}', NOT_A_DISTRIBUTION),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {"0": 1.0002}}}', NOT_A_DISTRIBUTION),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {"0": 1.5, "1": -0.5}}}', NOT_A_DISTRIBUTION),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {}}}', NOT_A_DISTRIBUTION),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {"x": 1.0}}}', NOT_AN_OBJECT),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": {"0": "a"}}}', NOT_AN_OBJECT),
    ('{"format": "krypenv-tabular/1", "game": "g", "policy": {"s": [1]}}', NOT_AN_OBJECT),
    ('{"format": "krypenv-tabular/1", "game": "g", "keys": "md5", "policy": {"s": {"0": 1}}}',
     "keys must be 'text' or 'sha1-16', got 'md5'"),
    ("{not json", ("cannot read it as JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
                  "(char 1))")),
]


@pytest.mark.parametrize(("text", "complaint"), BAD_FILES)
def test_a_bad_file_is_one_value_error_naming_it(tmp_path: Path, text: str, complaint: str) -> None:
    """Every malformed file is one ValueError naming the file and what is wrong (never a bare traceback)."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError) as exc:
        TabularPolicyFile.load(path)
    assert str(exc.value) == f"tabular policy {path}: {complaint}"


def test_unreadable_files_are_value_errors(tmp_path: Path) -> None:
    """A missing file, a .gz that is no gzip, a corrupt deflate stream: ValueErrors naming the file."""
    for name, data in (("missing.json", None), ("plain.json.gz", b"{}"), ("corrupt.json.gz", b"\x1f\x8b\x08\x00" +
                                                                              b"\x00" * 6 + b"\xff" * 20)):
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(ValueError, match="cannot read it") as exc:
            TabularPolicyFile.load(path)
        assert str(path) in str(exc.value)


def test_tolerance_and_meta() -> None:
    """An entry summing to 1 within 1e-4 is accepted (and 1 ± 2e-4 is not); a meta that is no object reads as {}."""
    ok = {"format": FORMAT, "game": "g", "meta": [1], "policy": {"s": {"0": 0.49995, "1": 0.50004}}}
    table = TabularPolicyFile.from_json(json.dumps(ok), "mem")
    assert table.meta == {} and not table.hashed
    with pytest.raises(ValueError, match="not a probability"):
        TabularPolicyFile.from_json(json.dumps({**ok, "policy": {"s": {"0": 0.5, "1": 0.5002}}}), "mem")
    zero = TabularPolicyFile.from_json(json.dumps({**ok, "policy": {"s": {"0": 0.0, "1": 1.0}}}), "mem")
    assert zero.probabilities("s") == {0: 0.0, 1: 1.0}  # an explicit zero is a distribution too


def test_missing_state_is_named() -> None:
    """A state the table does not hold is a ValueError naming it and the game (text and hashed tables)."""
    for hashed in (False, True):
        table = TabularPolicyFile("g(y=2)", {hashed_key("s") if hashed else "s": {0: 1.0}}, hashed=hashed)
        assert table.probabilities("s") == {0: 1.0}
        with pytest.raises(ValueError) as exc:
            table.probabilities("t")
        assert str(exc.value) == ("tabular policy for g(y=2): no entry for information state 't' (the policy was "
                                  "solved for another game, preset or player count?)")


@settings(max_examples=60, deadline=None)
@given(dist=st.dictionaries(st.integers(0, 50), st.integers(0, 20), min_size=1, max_size=6).filter(
    lambda d: sum(d.values()) > 0), n=st.sampled_from([97, 256, 1000]))
def test_sample_is_the_inverse_distribution_function(dist: dict[int, int], n: int) -> None:
    """On the grid u = (k + ½)/n, ``sample`` returns each action a number of times within 1 of n·p (the exact
    oracle of inverse-CDF sampling), in ascending action order, never an action of probability 0; u=0 and u→1 give
    the first and last action of positive probability."""
    total = sum(dist.values())
    probs = {a: w / total for a, w in dist.items()}
    table = TabularPolicyFile("g", {"s": probs})
    picks = [table.sample("s", (k + 0.5) / n) for k in range(n)]
    assert picks == sorted(picks)
    counts = {a: picks.count(a) for a in probs}
    for a, p in probs.items():
        assert abs(counts[a] - n * p) <= 1.0 + 1e-9, (a, counts[a], n * p)
    positive = sorted(a for a, p in probs.items() if p > 0)
    assert table.sample("s", 0.0) == positive[0] and table.sample("s", 1 - 1e-12) == positive[-1]
    weights = TabularPolicyFile("g", {"s": {a: 2 * p for a, p in probs.items()}})  # scaled: the same draws
    assert [weights.sample("s", (k + 0.5) / n) for k in range(n)] == picks


def test_openspiel_policy_and_from_openspiel() -> None:
    """A table as an OpenSpiel policy gives the stored probabilities on the legal actions (0 for the others) and
    refuses another game; ``from_openspiel`` keeps the positive probabilities of OpenSpiel's TabularPolicy."""
    from open_spiel.python import policy as os_policy

    game = pyspiel.load_game(KRYPKASINO, MICRO_PARAMS)
    uniform = os_policy.TabularPolicy(game)
    table = TabularPolicyFile.from_openspiel(game, uniform, {"m": 1})
    assert table.game == str(game) and table.meta == {"m": 1} and len(table.table) == len(uniform.state_lookup)
    state = game.new_initial_state()
    play_chance(state, np.random.default_rng(0))
    key = state.information_state_string()
    legal = state.legal_actions()
    assert table.table[key] == pytest.approx({a: 1 / len(legal) for a in legal})
    table.table[key] = {legal[0]: 1.0}
    policy = table.openspiel_policy(game)
    assert policy.game is game and list(policy.player_ids) == [0, 1]
    probs = policy.action_probabilities(state)
    assert probs == {a: (1.0 if a == legal[0] else 0.0) for a in legal}
    with pytest.raises(ValueError, match="is for"):
        table.openspiel_policy(pyspiel.load_game(KRYPKASINO, {"players": 2, "preset": "tiny"}))


# --------------------------------------------------------------------------- the agent


def test_resolve_shipped_names_and_paths(tmp_path: Path) -> None:
    """A bare name is a shipped policy (.json.gz or .json), anything with a separator or suffix a path; a missing one
    names the shipped ones; an empty spec says what to give."""
    assert "cfr-tiny" in tabular.shipped()
    assert tabular.resolve("cfr-tiny") == SHIPPED / "cfr-tiny.json.gz"
    path = tmp_path / "mine.json"
    TabularPolicyFile("g", {"s": {0: 1.0}}).save(path)
    assert tabular.resolve(str(path)) == path
    with pytest.raises(ValueError) as exc:
        tabular.resolve("no-such-policy")
    assert str(exc.value) == ("tabular policy 'no-such-policy': no such file (shipped policies: "
                              f"{', '.join(tabular.shipped())})")
    with pytest.raises(ValueError) as exc:
        tabular.resolve("")
    assert str(exc.value) == "tabular agent needs a policy file: tabular:PATH (e.g. tabular:checkpoints/cfr-tiny.json)"
    escape = f"../{SHIPPED.name}/cfr-tiny"  # a name with a separator is a path, never looked up beside the shipped
    with pytest.raises(ValueError, match="no such file"):
        tabular.resolve(escape)
    with pytest.raises(ValueError, match="no such file"):
        tabular.resolve("cfr-tiny.json")  # a suffix makes it a path (relative to the working directory)


def test_a_uniform_table_plays_as_the_random_agent(tmp_path: Path) -> None:
    """One uniform of the game's stream per decision, picking by the stored distribution: a table uniform over the
    legal actions makes the random agent's choices (the ⌊u·n⌋-th legal action) at every step of seeded env games."""
    from krypenv import krypkasino_v0

    game = pyspiel.load_game(KRYPKASINO, MICRO_PARAMS)
    from open_spiel.python import policy as os_policy

    path = tmp_path / "uniform.json"
    TabularPolicyFile.from_openspiel(game, os_policy.TabularPolicy(game)).save(path)
    plays = []
    for spec in (f"tabular:{path}", "random"):
        agent = load(spec)
        env = krypkasino_v0.GymEnv(players=2, preset="tiny", ranks=("A", "2", "3"), hand=2, table=2, opponents=agent)
        for seed in range(6):
            obs, info = env.reset(seed=seed)
            done, moves = False, []
            while not done:
                obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
                moves.append(obs.tobytes())
            plays.append(moves)
    assert plays[:6] == plays[6:]


def test_the_agent_needs_openspiel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without the openspiel extra the agent is one ValueError saying what to install."""
    import sys

    path = tmp_path / "p.json"
    TabularPolicyFile("python_krypkasino(players=2)", {"s": {0: 1.0}}).save(path)
    monkeypatch.setitem(sys.modules, "krypenv.openspiel", None)
    with pytest.raises(ValueError, match=r"^tabular agent needs OpenSpiel: pip install 'krypenv\[openspiel\]'"):
        tabular.TabularAgent(path)


def test_no_shipped_policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without shipped policies the error says so; a missing folder lists none."""
    monkeypatch.setattr(tabular, "SHIPPED", tmp_path)
    assert tabular.shipped() == []
    with pytest.raises(ValueError) as exc:
        tabular.resolve("cfr-tiny")
    assert str(exc.value) == "tabular policy 'cfr-tiny': no such file (shipped policies: none)"
    monkeypatch.setattr(tabular, "SHIPPED", tmp_path / "absent")
    assert tabular.shipped() == []


def test_the_agent_refuses_an_unknown_game(tmp_path: Path) -> None:
    """A policy file of a game without OpenSpiel information states is refused, naming the game."""
    path = tmp_path / "other.json"
    TabularPolicyFile("python_nothing(players=2)", {"s": {0: 1.0}}).save(path)
    with pytest.raises(ValueError, match="unknown game 'python_nothing'"):
        load(f"tabular:{path}")


def random_policy(game: object, rng: np.random.Generator) -> TabularPolicyFile:
    """Every information state of ``game`` with a random distribution over its legal actions (Dirichlet)."""
    from open_spiel.python import policy as os_policy

    uniform = os_policy.TabularPolicy(game)
    table = TabularPolicyFile.from_openspiel(game, uniform)
    for dist in table.table.values():
        weights = rng.dirichlet(np.ones(len(dist)))
        for a, w in zip(sorted(dist), weights):
            dist[a] = float(w)
    return table


def test_the_agent_draws_from_the_table(tmp_path: Path) -> None:
    """At decisions of MICRO, 2000 copies of the decision with their own streams: the agent's actions follow the
    stored distribution (pooled chi-square, level 1e-3; its power against uniform play is asserted ≥ 0.99), and
    the information state it looks up is the OpenSpiel game's."""
    game = pyspiel.load_game(KRYPKASINO, MICRO_PARAMS)
    table = random_policy(game, np.random.default_rng(1))
    path = tmp_path / "micro.json"
    table.save(path)
    agent = load(f"tabular:{path}")
    stored = TabularPolicyFile.load(path)
    rng = np.random.default_rng(2)
    stat, df, nc, n = 0.0, 0, 0.0, 2000
    for _ in range(3):
        state = game.new_initial_state()
        play_chance(state, rng)
        while not state.is_terminal():
            batch = state.decisions(n, int(rng.integers(1 << 30)))
            key = state.information_state_string()
            assert information_state_text(batch.core, 0, int(batch.seats[0])) == key
            probs = stored.probabilities(key)
            actions = agent.act(batch)
            if len(probs) > 1:
                counts = np.array([(actions == a).sum() for a in sorted(probs)])
                expected = np.array([n * probs[a] for a in sorted(probs)])
                stat += float(((counts - expected) ** 2 / expected).sum())
                df += len(probs) - 1
                uniform = 1 / len(probs)
                nc += n * sum((uniform - probs[a]) ** 2 / probs[a] for a in probs)
            else:
                assert set(actions.tolist()) == set(probs)
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert df > 0 and stats.chi2.sf(stat, df) > 1e-3, (stat, df)
    assert stats.ncx2.sf(stats.chi2.isf(1e-3, df), df, nc) >= 0.99


def test_the_agent_is_seeded_by_the_game_stream(tmp_path: Path) -> None:
    """The same seeds give the same actions; other seeds other actions (a mixed policy, so the draw is random)."""
    game = pyspiel.load_game(KRYPKASINO, MICRO_PARAMS)
    path = tmp_path / "micro.json"
    random_policy(game, np.random.default_rng(3)).save(path)
    agent = load(f"tabular:{path}")
    state = game.new_initial_state()
    play_chance(state, np.random.default_rng(4))
    while len(state.legal_actions()) < 2:
        state.apply_action(state.legal_actions()[0])
    first = agent.act(state.decisions(64, 10))
    assert np.array_equal(first, agent.act(state.decisions(64, 10)))
    assert not np.array_equal(first, agent.act(state.decisions(64, 1000)))
    assert len(set(first.tolist())) > 1


@pytest.mark.slow
def test_the_docs_evaluation_of_cfr_tiny_is_reproduced_in_a_fresh_process(tmp_path: Path) -> None:
    """docs/OPENSPIEL.md: ``krypenv eval --preset tiny --agents tabular:cfr-tiny,random --players 2 --deals 100
    --seed 1`` gives 0.14 against 6.87 points per seat and deal, −6.73 [−8.05, −5.41] head to head."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "krypenv.cli", "eval", "--preset", "tiny", "--agents",
                          "tabular:cfr-tiny,random", "--players", "2", "--deals", "100", "--seed", "1", "--no-records",
                          "--no-progress", "--out", str(tmp_path / "eval")], capture_output=True, text=True, check=True,
                         timeout=600).stdout
    assert "tabular:cfr-tiny - random             -6.73  [-8.05, -5.41]  100 decks" in out, out
    assert "tabular:cfr-tiny        0.14" in out and "random                  6.87" in out, out
