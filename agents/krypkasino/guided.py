"""``pimc:policy=ppo:PATH`` and ``pimc:policy=mlp:PATH``: determinized search whose rollouts are a learned policy.

The ``pimc`` search (:mod:`krypenv.agents.krypkasino.pimc`) with the policy of a ``ppo:PATH``
checkpoint (:mod:`krypenv.agents.krypkasino.ppo`) or an ``mlp:PATH`` file (:mod:`krypenv.agents.mlp`,
numpy, no pickle: what :mod:`krypenv.training.distill` writes; networks in
:mod:`krypenv.agents.krypkasino.policy_nets`) as the rollout policy of every seat *and* as the
baseline move (the SPARTA / policy-guided PIMC route).  For each decision: sample ``samples``
worlds with pimc's own determinization (the same worlds as ``pimc`` for the same game seed:
voids, splitmix64 stream from ``batch.uniforms``), apply every legal action in every world, and
play all worlds × actions of all decisions of the batch on **in lockstep**: one batched state
of rows, stepped together, with one network call per ply for every live row.  Actions are
compared by their paired differences to the policy's own choice exactly as in pimc: the best
mean replaces it only when ``z`` standard errors below it.

| option   | default | meaning                                                                       |
|----------|---------|-------------------------------------------------------------------------------|
| policy   | —       | ``ppo:PATH`` or ``mlp:PATH``, the policy (trained for the table's players)    |
| samples  | 32      | sampled worlds per decision, ≥ 1                                              |
| rounds   | 1       | stop a rollout when this many round ends have passed; 0 = the deal's end      |
| horizon  | 0       | also stop after this many plies after the move; 0 = no ply limit              |
| z        | 2.0     | leave the policy's move only for one below −z standard errors (0: argmin)     |
| voids    | true    | sampled hands respect the values a seat is known not to hold (K13)            |
| value    | own     | a rollout's value: ``own``, the mover's side score (as pimc); ``relative``,   |
|          |         | that minus the mean of the other sides' (what they take is not ours to take)  |
| critic   | false   | at a stop before the deal's end, add a ``ppo`` checkpoint's critic estimate   |
|          |         | of the mover's points still to come (else they count for nobody, as in pimc)  |
| weights  | 0       | world weighting: weigh each world by (likelihood of the opponents' moves of   |
|          |         | this round under the policy, replayed in that world) to this power; 0 = off   |
| sample   | false   | rollouts sample from the policy's distribution instead of its argmax          |
| rollout  | policy  | who plays the rollouts: ``policy``; ``expert`` (pimc's rollouts, the policy's |
|          |         | move as baseline); ``both``: every world × move rolled out once each way, its |
|          |         | value the mean of the two (an ensemble of two evaluators on the same worlds)  |
| rows     | 4096    | rollout rows per lockstep batch (memory; decisions are never split)           |
| threads  | 1       | threads of the network calls, torch's (``ppo``) or numpy's BLAS (``mlp``,     |
|          |         | with threadpoolctl); the process's setting is restored after each call: these |
|          |         | small batches gain nothing from more, and lose much when the cores are busy   |

**Defaults.** Chosen by measurement (docs/results/krypkasino-search.md): against
``pimc`` on 200 duplicate decks every ingredient (``critic``, ``weights``, ``value=relative``,
more worlds, deeper rollouts) scored within the noise of the plain search (about ±3.5 points
per deal), so the defaults are the plain search, the cheapest.  With 2 players ``critic``
orders moves alike for both ``value`` settings (a deal's points are fixed).

**Moves.** The candidates are the decision's legal *actions* (:mod:`krypenv.krypkasino.actions`):
a card whose capture is still to be chosen is played on by the policy's own choice inside the
rollout, and at the choice itself the search runs again over the table-card actions.

**Rollouts.** A row stops at the deal's end, when round ``ROUND + rounds`` is dealt, or after
``horizon`` plies.  Its value is the mover's side score then (K16, K17 at the end; K18 teams),
with ``value=relative`` minus the mean of the other sides' scores: at the deal's end the two
order moves alike (the points of a deal are fixed, tabbes cancel out), at an earlier stop
``relative`` also counts what the others took.  With ``critic`` a row that reached a
``rounds``/``horizon`` stop plays on to its mover's next decision and adds the critic's
estimate there: training rewarded minus each score change times ``reward_scale`` with
``gamma`` 1 (the checkpoint's ``args``), so the points still to come to the mover's side are
``x = −V / reward_scale`` (a checkpoint trained with another gamma is refused); with
``relative`` the other sides share the rest of the untaken points.

**World weights.** For ``weights > 0`` the current round is rebuilt in each world: the deal is
replayed from its public history (played cards and logged captures) to the round's start,
every hidden hand is replaced by the world's hand plus the cards that seat played since, and
each opponent decision of the round is observed as that opponent saw it.  A world's weight
is the product of the policy's probabilities of the cards they played, to the power
``weights`` (a capture choice counts its card only); means and standard errors are weighted
(effective sample size ``(Σw)² / Σw²``).  Worlds of earlier rounds are not re-weighted: the
hands of finished rounds are all public.

**Cost and randomness.** One uniform per decision seeds everything, so results are
reproducible from the game seed and independent of how decisions are batched (argmax
rollouts use no random numbers; ``sample=true`` draws from each row's stream, the same for
every action of a world).  Per ply the rows are observed and their move features computed
(numba, :mod:`krypenv.agents.krypkasino.move_features`), then one forward pass of the network (torch
on the CPU, ``threads`` threads).  Two shortcuts leave every value and action as they were: a row
with one legal action plays it without the network, and rows whose seat to act sees the same thing
(worlds that differ only in the cards it cannot see: :func:`krypenv.agents.krypkasino.lockstep.same_views`)
are scored once, their logits shared (``stats["forced"]`` and ``stats["shared"]`` count them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from krypenv.agents.checkpoint import check_table, game_of
from krypenv.agents.krypkasino import lockstep as L
from krypenv.agents.krypkasino import tactics as T
from krypenv.agents.krypkasino.heuristics import act_batch, expert_weights
from krypenv.agents.krypkasino.move_features import legal_features
from krypenv.agents.krypkasino.pimc import LEARNED, MAX_SAMPLES, game_vector
from krypenv.agents.krypkasino.policy_nets import MLPNet, PolicyNet, load_ppo
from krypenv.agents.krypkasino.ppo import GAME, check_deck
from krypenv.agents.mlp import policy_draw

from krypenv.agent_api import DecisionBatch
from krypenv.krypkasino.actions import N_ACTIONS
from krypenv.krypkasino.config import C_E0
from krypenv.krypkasino.engine import kernels
from krypenv.krypkasino.env_kernels import k_observe_seats

DEFAULTS: dict[str, Any] = {"samples": 32, "rounds": 1, "horizon": 0, "z": 2.0, "voids": True, "value": "own",
                            "critic": False, "weights": 0.0, "sample": False, "rollout": "policy", "rows": 4096,
                            "threads": 1}
VALUES = ("own", "relative")
ROLLOUTS = ("policy", "expert", "both")


def _int(name: str, value: object, least: int, most: int) -> int:
    """An integer option in [least, most]; ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
        raise ValueError(f"pimc option {name} must be an integer from {least} to {most}, got {value!r}")
    return int(value)


def _number(name: str, value: object) -> float:
    """A finite number option >= 0; ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
        raise ValueError(f"pimc option {name} must be a number >= 0, got {value!r}")
    return float(value)


def _flag(name: str, value: object) -> bool:
    """A true/false option; ValueError naming it."""
    if not isinstance(value, bool):
        raise ValueError(f"pimc option {name} must be true or false, got {value!r}")
    return value


class GuidedPIMC:
    """``pimc:policy=ppo:PATH``: pimc with a learned rollout policy, lockstep rollouts (see the module docstring)."""

    name = "pimc:policy=ppo"

    def __init__(self, path: str, kind: str = "ppo", **options: object) -> None:
        unknown = sorted(set(options) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"unknown pimc option(s) {unknown} with policy={kind}:PATH; options are policy, "
                             f"{', '.join(DEFAULTS)}")
        self.name = f"pimc:policy={kind}"
        o = DEFAULTS | options
        self.samples = _int("samples", o["samples"], 1, MAX_SAMPLES)
        self.rounds = _int("rounds", o["rounds"], 0, 12)
        self.horizon = _int("horizon", o["horizon"], 0, 1000)
        self.rows = _int("rows", o["rows"], 1, 1 << 22)
        self.threads = _int("threads", o["threads"], 1, 256)
        self.z = _number("z", o["z"])
        self.weights = _number("weights", o["weights"])
        self.voids, self.critic, self.sample = (_flag(k, o[k]) for k in ("voids", "critic", "sample"))
        if o["value"] not in VALUES:
            raise ValueError(f"pimc option value must be one of {', '.join(VALUES)}, got {o['value']!r}")
        self.value = str(o["value"])
        if o["rollout"] not in ROLLOUTS:
            raise ValueError(f"pimc option rollout must be one of {', '.join(ROLLOUTS)}, got {o['rollout']!r}")
        self.rollout = str(o["rollout"])
        self.expert_w = expert_weights()
        self.path, self.kind = path, kind
        self.scale = 1.0
        if kind == "mlp":
            if self.critic:
                raise ValueError("pimc option critic needs a train.py checkpoint (policy=ppo:PATH): an mlp file's "
                                 "value head estimates another quantity (its card's value_unit)")
            self.net: PolicyNet | MLPNet = MLPNet(path, self.threads)
            self.meta, self.obs_dim = self.net.meta(), self.net.obs_dim
        else:
            self.ppo = load_ppo(path)
            self.meta, self.obs_dim = self.ppo.meta, self.ppo.obs_dim
        if self.critic:
            args = self.meta.get("args") or {}
            if args.get("gamma", None) != 1.0 or not args.get("reward_scale"):
                raise ValueError(f"pimc option critic needs a checkpoint trained with gamma 1 and a recorded "
                                 f"reward_scale; {path} has gamma {args.get('gamma')!r}, "
                                 f"reward_scale {args.get('reward_scale')!r}")
            self.scale = float(args["reward_scale"])
        if kind == "ppo":
            self.net = PolicyNet(self.ppo, self.threads)
        self.scr = np.stack([T.new_scratch()])
        self.stats = {"decisions": 0, "searched": 0, "rows": 0, "steps": 0, "calls": 0, "forced": 0,
                      "shared": 0}

    # ------------------------------------------------------------------ network on rows
    def _observe(self, st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, rows: np.ndarray,
                 seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(observations, masks) of ``seats`` in ``rows`` of a state array."""
        obs = np.empty((rows.shape[0], self.obs_dim), np.int8)
        masks = np.empty((rows.shape[0], N_ACTIONS), np.int8)
        k_observe_seats(st, ints, cfg, rows, seats, obs, masks, self.scr)
        return obs, masks

    def _logits(self, st: np.ndarray, cfg: np.ndarray, rules: Any, rows: np.ndarray, obs: np.ndarray,
                masks: np.ndarray) -> np.ndarray:
        """The network's logits of observed ``rows``: the legal actions' move features (numba), one network call."""
        feats = None
        if self.net.moves:
            feats = legal_features(st, st[:, cfg[C_E0]:cfg[C_E0] + 53], rows, masks, rules.players, rules.hand_size,
                                   rules.set_aside == "spades")
        return self.net.logits(obs, feats, masks)

    def _policy_logits(self, st: np.ndarray, ints: np.ndarray, cfg: np.ndarray, rules: Any, rows: np.ndarray,
                       seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits, masks) of ``seats`` in ``rows`` of a state array: observe, move features, one network call."""
        obs, masks = self._observe(st, ints, cfg, rows, seats)
        return self._logits(st, cfg, rules, rows, obs, masks), masks

    def _shared_views(self, rs: np.ndarray, ri: np.ndarray, rows: np.ndarray,
                      players: int) -> tuple[np.ndarray, np.ndarray]:
        """(rep, at): the positions in ``rows`` of one row per distinct view of its seat to act
        (:func:`krypenv.agents.krypkasino.lockstep.same_views`), and for every row its view's index in ``rep``: the
        network scores each view once (same observation, features and logits), ``[at]`` hands them back to every row."""
        width = -(-rs.shape[1] // 8) * 8
        view = np.empty((rows.shape[0], width), np.int8)
        first = np.empty(rows.shape[0], np.int64)
        L.same_views(rs, ri, rows, players, view, view.view(np.uint64), first)
        rep = np.flatnonzero(first == np.arange(rows.shape[0]))
        return rep, np.searchsorted(rep, first)

    def _pick(self, logits: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """The rollout actions: argmax, or with ``sample`` a draw from the softmax by the uniforms ``u``."""
        if u is None:
            return logits.argmax(axis=1).astype(np.int64)
        return policy_draw(np.exp(logits - logits.max(axis=1, keepdims=True)), u).astype(np.int64)

    def _rollout_actions(self, rs: np.ndarray, ri: np.ndarray, cfg: np.ndarray, rules: Any, rows: np.ndarray,
                         rng: np.ndarray, expert_from: int) -> np.ndarray:
        """One rollout ply's actions of ``rows``: the policy's below row ``expert_from``, the expert's from there.

        A row with one legal action plays it without the network (the policy's argmax or draw could be nothing
        else); with ``sample`` its stream still advances by one draw, so every row's later draws are as before."""
        acts = np.empty(rows.shape[0], np.int64)
        pol = rows < expert_from
        if pol.any():
            p = rows[pol]
            obs, masks = self._observe(rs, ri, cfg, p, rs[p, kernels.TURN].astype(np.int64))
            u = None
            if self.sample:
                u = np.empty(p.shape[0], np.float64)
                L.draw(rng, p, u)
            out = masks.argmax(axis=1).astype(np.int64)  # the one legal action of a forced row
            free = np.flatnonzero(np.count_nonzero(masks, axis=1) > 1)
            if free.size:
                rep, at = self._shared_views(rs, ri, p[free], rules.players)
                logits = self._logits(rs, cfg, rules, p[free][rep], obs[free][rep], masks[free][rep])[at]
                out[free] = self._pick(logits, None if u is None else u[free])
                self.stats["shared"] += free.shape[0] - rep.shape[0]
            self.stats["forced"] += p.shape[0] - free.shape[0]
            acts[pol] = out
        if not pol.all():
            e = rows[~pol]
            u = np.empty(e.shape[0], np.float64)
            L.draw(rng, e, u)  # the expert's tie-breaks, from each row's own stream
            out = np.empty(e.shape[0], np.int64)
            act_batch(rs, rs[:, cfg[C_E0]:cfg[C_E0] + 53], e, rules.players, rules.hand_size,
                        rules.set_aside == "spades", T.EXPERT, self.expert_w, u, out)
            acts[~pol] = out
        return acts

    # ------------------------------------------------------------------ acting
    def act(self, batch: DecisionBatch) -> np.ndarray:
        """The next action of each decision: the policy's, or a searched action shown better in the worlds."""
        return self._run(batch, None)

    def values(self, batch: DecisionBatch) -> tuple[np.ndarray, np.ndarray]:
        """The search as a teacher: ((B, 105) every legal action's value to the mover, (B,) the action :meth:`act`
        plays).  An action's value is minus its mean rollout value over the worlds (the mover's side score at the
        stop, as ``value``, ``critic`` and ``weights`` make it; higher is better); NaN at illegal actions and at a
        decision with one legal action (not searched).  The same uniform per decision as ``act``."""
        values = np.full(batch.mask.shape, np.nan)
        return values, self._run(batch, values)

    def _run(self, batch: DecisionBatch, values: np.ndarray | None) -> np.ndarray:
        """The actions of the batch; with ``values`` also fill in every searched decision's action values."""
        where = f"pimc:policy={self.kind}:{self.path}"
        check_table(where, self.meta, GAME, batch.rules.players, game_of(batch.core))
        check_deck(where, self.meta, batch.rules)  # K22: the policy's deck and deal
        n = len(batch)
        if n == 0:
            return np.zeros(0, np.int64)
        u = batch.uniforms(1)[:, 0]
        core = batch.core
        envs = np.asarray(batch.envs, np.int64)
        seats = core.state[envs, kernels.TURN].astype(np.int64)
        root, _ = self._policy_logits(core.state, core.ints, core.packed, batch.rules, envs, seats)
        out = root.argmax(axis=1).astype(np.int64)
        self.stats["decisions"] += n
        cands = [np.flatnonzero(batch.mask[k]) for k in range(n)]
        todo = [k for k in range(n) if cands[k].shape[0] > 1]
        group: list[int] = []
        size = 0
        for k in todo + [-1]:
            need = self.samples * cands[k].shape[0] if k >= 0 else 0
            if group and (k < 0 or size + need > self.rows):
                means: list[np.ndarray] | None = [] if values is not None else None
                out[group] = self._search(core, batch.rules, envs[group], u[group], [cands[g] for g in group],
                                          out[group], means)
                if values is not None and means is not None:
                    for g, m in zip(group, means):
                        values[g, cands[g]] = -m
                group, size = [], 0
            if k >= 0:
                group.append(k)
                size += need
        return out

    def _search(self, core: Any, rules: Any, envs: np.ndarray, u: np.ndarray, cands: list[np.ndarray],
                base: np.ndarray, means: list[np.ndarray] | None = None) -> np.ndarray:
        """The searched actions of one lockstep group of decisions (each with ≥ 2 candidates); ``means`` gets each
        decision's (weighted) mean rollout value per candidate."""
        S, P, cfg = self.samples, rules.players, core.packed
        lo = np.zeros(len(cands) + 1, np.int64)
        lo[1:] = np.cumsum([c.shape[0] for c in cands])
        acts = np.concatenate(cands).astype(np.int64)
        R = S * int(lo[-1])
        rs = np.empty((R, core.state.shape[1]), np.int8)
        ri = np.empty((R, core.ints.shape[1]), np.int64)
        rng = np.empty(R, np.uint64)
        plies, stop_round, mover = (np.empty(R, np.int64) for _ in range(3))
        replay = self.weights > 0
        q_max = len(cands) * S * P * rules.hand_size if replay else 1
        wrows = np.empty((q_max, core.state.shape[1]), np.int8)
        wacts = np.empty(q_max, np.int64)
        wlo = np.zeros(len(cands) * S + 1, np.int64)
        L.setup_rows(core.state, core.ints, cfg, envs, u, S, acts, lo, self.voids, rules.hand_size, self.rounds, replay,
                     rs, ri, rng, plies, stop_round, mover, wrows, wacts, wlo, self.scr[0])
        expert_from = {"policy": R, "expert": 0, "both": R}[self.rollout]  # rows from here on roll out with expert
        if self.rollout == "both":  # the same worlds and moves again, for the expert's rollouts
            rs, ri, rng, plies, stop_round, mover = (np.concatenate([a, a]) for a in (rs, ri, rng, plies, stop_round,
                                                                                       mover))
        live = np.empty(rs.shape[0], np.int64)
        n = L.live_rows(rs, cfg, plies, stop_round, self.horizon, mover, self.critic, live)
        steps = 0
        while n:
            rows = live[:n].copy()
            n = L.step_rows(rs, ri, cfg, rows, self._rollout_actions(rs, ri, cfg, rules, rows, rng, expert_from),
                            plies, stop_round, self.horizon, mover, self.critic, self.scr[0], live)
            steps += 1
        vals, left = np.empty(rs.shape[0], np.float64), np.empty(rs.shape[0], np.float64)
        L.row_values(rs, game_vector(rules), mover, self.value == "relative", vals, left)
        if self.critic:
            cut = np.flatnonzero(rs[:, kernels.DONE] == 0).astype(np.int64)
            if cut.size:
                obs = np.empty((cut.size, self.obs_dim), np.int8)
                masks = np.empty((cut.size, N_ACTIONS), np.int8)
                k_observe_seats(rs, ri, cfg, cut, mover[cut], obs, masks, self.scr)
                own = -self.net.values(obs) / self.scale  # the mover's side's points still to come
                vals[cut] += own
                if self.value == "relative" and rules.n_teams > 1:  # the other sides share the rest
                    vals[cut] -= (left[cut] - own) / (rules.n_teams - 1)
        if self.rollout == "both":
            vals = (vals[:R] + vals[R:]) / 2
        logw = self._world_logweights(wrows, wacts, wlo, core.ints[np.repeat(envs, S)], cfg, rules) if replay else None
        self.stats["searched"] += len(cands)
        self.stats["rows"] += R
        self.stats["steps"] += steps
        self.stats["calls"] = self.net.calls
        out = base.copy()
        for k, c in enumerate(cands):
            v = vals[S * lo[k]:S * lo[k + 1]].reshape(S, c.shape[0])
            w = None if logw is None else logw[k * S:(k + 1) * S]
            out[k] = c[self._choose(v, int(np.flatnonzero(c == base[k])[0]), w)]
            if means is not None:
                means.append(self._weights(w) @ v / self._weights(w).sum())
        return out

    def _world_logweights(self, wrows: np.ndarray, wacts: np.ndarray, wlo: np.ndarray, ints: np.ndarray,
                          cfg: np.ndarray, rules: Any) -> np.ndarray:
        """Per world, log of the policy's likelihood of the opponents' replayed moves (one network call);
        ``ints`` holds each world's match integers."""
        q = int(wlo[-1])
        logw = np.zeros(wlo.shape[0] - 1, np.float64)
        if q == 0:
            return logw
        rows = np.arange(q, dtype=np.int64)
        world = np.searchsorted(wlo, rows, side="right") - 1
        logits, _ = self._policy_logits(wrows, ints[world], cfg, rules, rows, wrows[:q, kernels.TURN].astype(np.int64))
        top = logits.max(axis=1)
        with np.errstate(invalid="ignore"):
            logp = logits[rows, wacts[:q]] - top - np.log(np.exp(logits - top[:, None]).sum(axis=1))
        np.add.at(logw, world, logp)
        return logw

    def _weights(self, logw: np.ndarray | None, worlds: int = 0) -> np.ndarray:
        """Each world's weight ``exp(weights · logw)`` (scaled to the largest finite one); ones without ``logw``."""
        if logw is None or not np.isfinite(logw).any():
            return np.ones(worlds or self.samples)
        return np.exp(self.weights * (logw - logw[np.isfinite(logw)].max()))

    def _choose(self, v: np.ndarray, e: int, logw: np.ndarray | None) -> int:
        """pimc's rule on the (samples, moves) values ``v`` with baseline ``e``, weighted by ``exp(weights·logw)``."""
        d = v - v[:, e:e + 1]
        w = self._weights(logw, v.shape[0])
        total = w.sum()
        mean = (w @ d) / total
        best, best_mean = e, 0.0
        for m in range(v.shape[1]):
            if mean[m] < best_mean - 1e-9:
                best, best_mean = m, float(mean[m])
        if best != e and self.z > 0:
            n_eff = total * total / float((w * w).sum())
            spread = float(w @ (d[:, best] - best_mean) ** 2) / total
            var = spread * n_eff / (n_eff - 1) if n_eff > 1 + 1e-9 else 0.0
            if best_mean > -self.z * np.sqrt(max(var, 0.0) / n_eff):
                best = e
        return best


def load(path: str, **options: object) -> GuidedPIMC:
    """``pimc:policy=ppo:PATH,...``: the policy-guided search of a checkpoint."""
    return GuidedPIMC(path, **options)


def load_mlp(path: str, **options: object) -> GuidedPIMC:
    """``pimc:policy=mlp:PATH,...``: the policy-guided search of an ``mlp`` checkpoint (numpy, no pickle)."""
    return GuidedPIMC(path, kind="mlp", **options)


LEARNED["ppo"] = load
LEARNED["mlp"] = load_mlp
