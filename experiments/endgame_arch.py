"""Is it the input or the architecture? A card-set attention network on the last round's exact labels.

    python experiments/endgame_arch.py runs/eg-labels --epochs 8 --threads 2

The move-scoring MLP (:mod:`krypenv.training.student`) loses about a third of a point per card decision in a
2-player last round, whatever the labels or its width (docs/research/expert-iteration.md, "The last round by the
million"). Its input is the observation plus each action's move features: one play ahead, averaged over the cards
not seen. In the last round of a 2-player deal the cards not seen are the other hand (K1, K7), and a best card depends
on the replies, up to 8 plies deep. This experiment gives a network the whole position as a set of cards instead,
so that attention can relate every card to every other (a reply is a pair of cards and the table):

* one token per card code in either hand or on the table: its copies in the mover's hand, the other hand and on the
  table, its table value one-hot (K3: an ace 1 on the table), its hand value / 14, its card points (K4), spade or not;
* one global token: the set-aside pile's card points and card count (K8, K15), who captured last (the mover, the other
  seat, nobody), the two hand sizes;
* with ``--move-features``, each card token of the mover's hand also carries the move features of its card action
  (:mod:`krypenv.agents.krypkasino.move_features`: the MLP student's per-action input), so that the network starts
  from what the MLP reads and can add what attention relates;
* a transformer encoder over the tokens; each card of the mover's hand gets a logit; the policy is their softmax over
  the legal card actions.

It trains on the card decisions of iteration 0 of a label set of ``experiments/endgame_labels.py`` (exact values of
every legal action) towards ``softmax(values / T)`` and reports, on iteration 1 (held-out games), what
``experiments/fit_by_kind.py`` reports for the MLPs: the mean gap in nats, how often the most probable card is not a
best one, and the exact value it loses, in points per card decision. Capture-choice decisions (about 3%) are left
out, as they are not card decisions. Research code: it ships no agent.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from fit_by_kind import gaps, lost_value
from torch import nn

from krypenv.krypkasino.cards import HAND_VALUE, POINTS
from krypenv.krypkasino.engine import kernels as K
from krypenv.threads import set_torch_threads
from krypenv.training.labels import LabelSet
from krypenv.training.student import policy_targets

N_CARD_FEATS = 3 + 13 + 3  # copies (mine, theirs, table), table value one-hot, hand value, points, spade
N_GLOBAL = 7
MAX_TOKENS = 24  # at most 8 hand cards and the table's distinct codes (a last round's table holds under 16)


def _card_facts() -> np.ndarray:
    """(52, 16) fixed facts per card code: table value one-hot (ace 1), hand value / 14, points / 3, spade."""
    facts = np.zeros((52, 16), np.float32)
    for c in range(52):
        facts[c, c % 13] = 1.0  # rank index = table value − 1
        facts[c, 13] = HAND_VALUE[c] / 14.0
        facts[c, 14] = POINTS[c] / 3.0
        facts[c, 15] = float(c // 13 == 3)
    return facts


FACTS = _card_facts()


def tokens(state: np.ndarray, seat: np.ndarray, players: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens (N, 1 + MAX_TOKENS, F), their padding mask (N, 1 + MAX_TOKENS) and card codes (N, MAX_TOKENS; −1 pad)."""
    n = len(state)
    st = state.astype(np.int64)
    rows = np.arange(n)
    mine = st[rows[:, None], K.HANDS + 52 * seat[:, None] + np.arange(52)]
    theirs = st[rows[:, None], K.HANDS + 52 * (1 - seat[:, None]) + np.arange(52)]
    table = st[:, K.TABLE:K.TABLE + 52]
    aside = st[:, K.ASIDE:K.ASIDE + 52]
    present = (mine + theirs + table) > 0
    counts = present.sum(axis=1)
    if counts.max() > MAX_TOKENS:
        raise ValueError(f"a position holds {counts.max()} card codes; MAX_TOKENS is {MAX_TOKENS}")
    f = N_CARD_FEATS
    tok = np.zeros((n, 1 + MAX_TOKENS, f), np.float32)
    codes = np.full((n, MAX_TOKENS), -1, np.int64)
    order = np.argsort(~present, axis=1, kind="stable")[:, :MAX_TOKENS]  # present codes first, in code order
    valid = np.take_along_axis(present, order, axis=1)
    codes[valid] = order[valid]
    c = np.where(valid, order, 0)
    tok[:, 1:, 0] = np.take_along_axis(mine, c, 1) * valid / 2.0
    tok[:, 1:, 1] = np.take_along_axis(theirs, c, 1) * valid / 2.0
    tok[:, 1:, 2] = np.take_along_axis(table, c, 1) * valid / 2.0
    tok[:, 1:, 3:] = FACTS[c] * valid[..., None]
    last = st[:, K.LAST_CAPTURER]
    tok[:, 0, 0] = (aside * POINTS[None, :]).sum(axis=1) / 10.0
    tok[:, 0, 1] = aside.sum(axis=1) / 10.0
    tok[:, 0, 2] = last == seat
    tok[:, 0, 3] = (last >= 0) & (last != seat)
    tok[:, 0, 4] = last < 0
    tok[:, 0, 5] = mine.sum(axis=1) / 4.0
    tok[:, 0, 6] = theirs.sum(axis=1) / 4.0
    pad = np.concatenate([np.zeros((n, 1), bool), ~valid], axis=1)
    return tok, pad, codes


class CardSetPolicy(nn.Module):
    """A transformer encoder over card tokens; each mover's card token scores the card action of its code."""

    def __init__(self, features: int, width: int = 96, layers: int = 3, heads: int = 4) -> None:
        super().__init__()
        self.embed = nn.Linear(features, width)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, tok: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """(N, MAX_TOKENS) logits of the card tokens (the global token dropped)."""
        h = self.encoder(self.embed(tok), src_key_padding_mask=pad)
        return self.head(h[:, 1:]).squeeze(-1)


def with_move_features(tok: np.ndarray, state: np.ndarray, codes: np.ndarray, chunk: int = 16384) -> np.ndarray:
    """The tokens with each mover's card token carrying its card action's move features (0 on the other tokens)."""
    from krypenv.training.krypkasino import distill_core, label_features

    core = distill_core(2, "standard", 1)
    n_feats = label_features(core, state[:1]).shape[2]
    out = np.zeros((*tok.shape[:2], tok.shape[2] + n_feats), np.float32)
    out[:, :, :tok.shape[2]] = tok
    c = np.where(codes >= 0, codes, 0)
    for lo in range(0, len(state), chunk):
        feats = label_features(core, state[lo:lo + chunk])[:, :52]  # card actions are the card codes 0–51
        mine = tok[lo:lo + chunk, 1:, 0:1] > 0
        out[lo:lo + chunk, 1:, tok.shape[2]:] = np.take_along_axis(feats, c[lo:lo + chunk, :, None], 1) * mine
    return out


def card_set(labels_dir: str, iteration: int, move_features: bool = False, limit: int = 0
             ) -> dict[str, np.ndarray]:
    """The card decisions of one iteration (the first ``limit``, if given): tokens, the legal actions and values
    gathered onto the tokens."""
    labels, _ = LabelSet(Path(labels_dir) / "labels").load([iteration])
    card = np.flatnonzero(labels.mask[:, 52:].sum(axis=1) == 0)  # a card decision: only card actions (0–51) legal
    card = card[:limit] if limit else card
    state, seat = labels.state[card], labels.seat[card].astype(np.int64)
    tok, pad, codes = tokens(state, seat)
    if move_features:
        tok = with_move_features(tok, state, codes)
    c = np.where(codes >= 0, codes, 0)
    legal = np.take_along_axis(labels.mask[card, :52], c, 1) & (codes >= 0)
    values = np.where(legal, np.take_along_axis(labels.values[card, :52], c, 1), np.nan).astype(np.float32)
    if not np.array_equal(legal.sum(axis=1), labels.mask[card, :52].sum(axis=1)):
        raise ValueError("a legal card is missing from the tokens")
    return {"tok": tok, "pad": pad, "legal": legal, "values": values}


def measure(model: CardSetPolicy, data: dict[str, np.ndarray], temperature: float) -> dict[str, float]:
    """Held-out gap (nats), share of non-best greedy cards and value lost (points per card decision)."""
    model.eval()
    logps = []
    with torch.no_grad():
        for lo in range(0, len(data["tok"]), 4096):
            sl = slice(lo, lo + 4096)
            logit = model(torch.from_numpy(data["tok"][sl]), torch.from_numpy(data["pad"][sl]))
            logit = logit.masked_fill(~torch.from_numpy(data["legal"][sl]), -1e9)
            logps.append(torch.log_softmax(logit, 1).numpy())
    logp = np.concatenate(logps)
    legal, values = data["legal"], data["values"]
    gap = gaps(policy_targets(values, legal, temperature), logp)
    lost = lost_value(values, legal, logp)  # the MLPs' measure (fit_by_kind.py), over the tokens
    model.train()
    return {"gap": float(gap.mean()), "not_best": float((lost > 1e-6).mean()), "lost": float(lost.mean())}


def main() -> None:
    """Train on iteration 0, measure on iteration 1 after every epoch; print one JSON line per epoch."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("labels")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--learning-rate", type=float, default=1e-3)
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--width", type=int, default=96)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", default="", help="write the trained weights (torch state dict) here")
    ap.add_argument("--move-features", action="store_true", help="the mover's card tokens carry their move features")
    ap.add_argument("--limit", type=int, default=0, help="train on the first LIMIT card decisions only")
    a = ap.parse_args()
    set_torch_threads(a.threads)
    torch.manual_seed(a.seed)
    train = card_set(a.labels, 0, a.move_features, a.limit)
    test = card_set(a.labels, 1, a.move_features)
    model = CardSetPolicy(train["tok"].shape[2], a.width, a.layers)
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({"train": len(train["tok"]), "test": len(test["tok"]), "parameters": params}), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=a.learning_rate, weight_decay=1e-4)
    steps = a.epochs * ((len(train["tok"]) + a.batch - 1) // a.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, a.learning_rate, total_steps=steps, pct_start=0.1)
    p_train = policy_targets(train["values"], train["legal"], a.temperature)
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    for epoch in range(a.epochs):
        order = rng.permutation(len(train["tok"]))
        for lo in range(0, len(order), a.batch):
            idx = order[lo:lo + a.batch]
            logit = model(torch.from_numpy(train["tok"][idx]), torch.from_numpy(train["pad"][idx]))
            logit = logit.masked_fill(~torch.from_numpy(train["legal"][idx]), -1e9)
            loss = -(torch.from_numpy(p_train[idx]) * torch.log_softmax(logit, 1)).sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        print(json.dumps({"epoch": epoch + 1, "seconds": round(time.perf_counter() - t0),
                          "test": measure(model, test, a.temperature)}), flush=True)
    if a.save:
        torch.save(model.state_dict(), Path(a.save))


if __name__ == "__main__":
    main()
