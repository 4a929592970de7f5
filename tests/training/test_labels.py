"""Label shards on disk (krypenv.training.labels): round trip, refusals naming the file, and a real kill mid-write.

The kill test runs the labelling in a child process, SIGKILLs it while a shard is being written
(a slowed writer holds the temporary open), starts it again, and compares the set with one
written without interruption: every shard once, byte for byte the same arrays.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from krypenv.training.labels import ARRAYS, FORMAT, Labels, LabelSet, card_for

CARD = {"game": "krypkasino", "players": 2, "preset": "standard", "obs_size": 5, "n_actions": 4, "state_size": 3}
ROOT = Path(__file__).resolve().parents[2]


def labels(n: int, seed: int = 0) -> Labels:
    """``n`` random labels of :data:`CARD`'s shapes (every label with 2–4 legal actions)."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n, 4)) < 0.7
    mask[:, :2] = True
    values = np.where(mask, rng.normal(0, 3, (n, 4)), np.nan).astype(np.float32)
    teacher = np.array([rng.choice(np.flatnonzero(m)) for m in mask], np.int16)
    return Labels(obs=rng.integers(0, 9, (n, 5)).astype(np.int8), mask=mask, values=values, teacher=teacher,
                  played=teacher.copy(), by_teacher=rng.random(n) < 0.5, seat=rng.integers(0, 2, n).astype(np.int8),
                  seed=rng.integers(0, 2**62, n), state=rng.integers(-3, 9, (n, 3)).astype(np.int8))


def same(a: Labels, b: Labels) -> bool:
    """Every array equal (NaN where NaN)."""
    return all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=k == "values") for k in ARRAYS)


def test_round_trip_and_card(tmp_path: Path) -> None:
    s = LabelSet(tmp_path / "set", CARD)
    lab = labels(50)
    path = s.write(0, 3, lab, {"teacher": "pimc", "beta": 0.5})
    assert path.name == "it000-00003.npz" and s.shards() == [path]
    back, card = s.read(path)
    assert same(lab, back)
    assert card["labels"] == 50 and card["iteration"] == 0 and card["shard"] == 3 and card["teacher"] == "pimc"
    assert card["format"] == FORMAT and card["game"] == "krypkasino"
    s.write(1, 0, labels(7, 1), {})
    joined, cards = LabelSet(tmp_path / "set").load()
    assert len(joined) == 57 and [c["iteration"] for c in cards] == [0, 1]
    assert len(s.load([1])[0]) == 7
    with pytest.raises(ValueError, match="no shards of iterations"):
        s.load([5])
    assert json.loads((tmp_path / "set" / "card.json").read_text())["format"] == FORMAT


def test_refusals_name_the_file(tmp_path: Path) -> None:
    s = LabelSet(tmp_path / "set", CARD)
    good = s.write(0, 0, labels(40), {})
    raw = good.read_bytes()
    for cut in (10, len(raw) // 2, len(raw) - 3):  # truncated: a kill or a broken copy
        bad = tmp_path / "set" / "it000-00001.npz"
        bad.write_bytes(raw[:cut])
        with pytest.raises(ValueError, match=r"label shard .*it000-00001\.npz: truncated or corrupt"):
            s.read(bad)
    flipped = bytearray(raw)
    flipped[len(raw) // 3] ^= 0xFF  # a bit flip inside a member: its CRC fails
    bad.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match=r"it000-00001\.npz"):
        s.read(bad)
    with pytest.raises(ValueError, match="holds other labels \\(players differ\\)"):
        LabelSet(tmp_path / "set", {**CARD, "players": 3})
    with pytest.raises(ValueError, match="no card.json"):
        LabelSet(tmp_path / "nothing")
    (tmp_path / "set2").mkdir()
    (tmp_path / "set2" / "card.json").write_text("{not json")
    with pytest.raises(ValueError, match="set2/card.json: not readable JSON"):
        LabelSet(tmp_path / "set2")


def rewrite(path: Path, **changes: object) -> None:
    """Rewrite a shard with some arrays or card fields changed (``card`` as a dict)."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    card = json.loads(str(arrays["card"]))
    card.update(changes.pop("card", {}))
    arrays.update(changes)
    arrays["card"] = np.array(json.dumps(card))
    for k in [k for k, v in changes.items() if v is None]:
        del arrays[k]
    np.savez(path, **arrays)


@pytest.mark.parametrize("change, match", [
    ({"card": {"game": "kungsholmskille"}}, "of game 'kungsholmskille'"),
    ({"card": {"format": "other/1"}}, "format 'other/1'"),
    ({"card": {"labels": 39}}, "40 labels, its card says 39"),
    ({"card": {"labels": -1}}, "-1 labels"),
    ({"obs": np.zeros((40, 6), np.int8)}, "array obs has shape"),
    ({"state": None}, "missing arrays state"),
    ({"values": np.zeros((40, 4), np.float32)}, "numbers exactly at the legal actions"),
    ({"teacher": np.full(40, 4, np.int16)}, "teacher action that is not legal"),
    ({"played": np.full(40, -1, np.int16)}, "played action that is not legal"),
    ({"teacher": np.full(40, 3, np.int16), "mask": np.tile([True, True, True, False], (40, 1)),
      "values": np.tile(np.float32([1, 2, 3, np.nan]), (40, 1))}, "teacher action that is not legal"),
    ({"mask": np.eye(4, dtype=bool)[np.zeros(40, int)]}, "fewer than two legal actions"),
])
def test_a_shard_that_does_not_fit_is_refused(tmp_path: Path, change: dict, match: str) -> None:
    s = LabelSet(tmp_path / "set", CARD)
    path = s.write(0, 0, labels(40), {})
    rewrite(path, **change)
    with pytest.raises(ValueError, match=match):
        s.read(path)


def test_writing_refuses_bad_labels_and_numbers(tmp_path: Path) -> None:
    s = LabelSet(tmp_path / "set", CARD)
    bad = labels(5)
    bad.values[0, 0] = np.nan
    with pytest.raises(ValueError, match="being written"):
        s.write(0, 0, bad, {})
    for it, k in ((-1, 0), (1000, 0), (0, 100_000)):
        with pytest.raises(ValueError, match="shard numbers out of range"):
            s.shard_path(it, k)
    assert s.shard_path(999, 99_999).name == "it999-99999.npz"
    assert not s.shards()


WRITER = """
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from tests.training.test_labels import CARD, labels
from krypenv.training import labels as L

slow = int(sys.argv[2])
real = np.savez_compressed
def slowed(fh, **arrays):  # shard `slow` stalls half way: the kill comes while its temporary is open
    real(fh, **arrays)
    if json.loads(arrays["card"].item())["shard"] == slow:
        fh.flush()
        print("stalled", flush=True)
        time.sleep(60)
L.np.savez_compressed = slowed
s = L.LabelSet(sys.argv[1], CARD)
s.clean()
for k in range(4):
    if not s.shard_path(0, k).exists():
        s.write(0, k, labels(30 + k, seed=k), {{"k": k}})
"""


def test_killed_mid_write_and_resumed_loses_and_repeats_nothing(tmp_path: Path) -> None:
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(root=str(ROOT)))
    ref = tmp_path / "ref"
    subprocess.run([sys.executable, str(script), str(ref), "-1"], check=True, timeout=120)
    run = tmp_path / "run"
    child = subprocess.Popen([sys.executable, str(script), str(run), "2"], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "stalled"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    names = sorted(p.name for p in run.iterdir())
    assert [n for n in names if n.endswith(".npz")] == ["it000-00000.npz", "it000-00001.npz"]
    assert any(".npz.tmp" in n for n in names)  # the killed shard's temporary, never under its name
    t0 = time.time()
    subprocess.run([sys.executable, str(script), str(run), "-1"], check=True, timeout=120)
    assert time.time() - t0 < 120
    a, b = LabelSet(ref), LabelSet(run)
    assert [p.name for p in a.shards()] == [p.name for p in b.shards()] == [f"it000-0000{k}.npz" for k in range(4)]
    assert not [p for p in run.iterdir() if ".tmp" in p.name]
    for pa, pb in zip(a.shards(), b.shards()):
        (la, ca), (lb, cb) = a.read(pa), b.read(pb)
        assert same(la, lb) and ca == cb
    assert len(b.load()[0]) == sum(30 + k for k in range(4))
    with zipfile.ZipFile(b.shards()[2]) as z:
        assert z.testzip() is None


def test_card_for_a_core(tmp_path: Path) -> None:
    """card_for takes the observation width, the actions and the state width from a core: a set made with it holds
    that core's labels."""
    from types import SimpleNamespace

    core = SimpleNamespace(dim=5, n_actions=4, state=np.zeros((2, 3), np.int8))
    card = card_for("krypkasino", 2, "standard", core)
    assert card == CARD
    LabelSet(tmp_path / "s", card).write(0, 0, labels(7), {"games": 1})
    assert LabelSet(tmp_path / "s").card == {"format": FORMAT, **CARD}
