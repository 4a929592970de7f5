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
    """Rewrite a shard with some arrays changed (None: removed) and its card changed: ``card`` a dict of fields
    (None: removed), or a JSON text stored as the card itself. An object array is pickled, as numpy saves one."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    new = changes.pop("card", {})
    if isinstance(new, str):
        text = new
    else:
        card = {**json.loads(str(arrays["card"])), **new}
        text = json.dumps({k: v for k, v in card.items() if v is not None})
    arrays.update(changes)
    arrays["card"] = np.array(text)
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


# --------------------------------------------------------------------------- what mutmut's run found untested
def test_a_pickled_shard_is_refused_without_running_it(tmp_path: Path) -> None:
    """A shard whose array holds a pickled object (what ``allow_pickle=True`` would unpickle, running its code) is
    refused as corrupt, naming the file, and the object's code never runs."""
    s = LabelSet(tmp_path / "set", CARD)
    path = s.write(0, 0, labels(4), {})
    marker = tmp_path / "ran"
    rewrite(path, obs=np.array([_Payload(str(marker))], dtype=object))
    with pytest.raises(ValueError, match=rf"^label shard {path}: truncated or corrupt \(.*allow_pickle=False"):
        s.read(path)
    assert not marker.exists()


class _Payload:
    """An object whose unpickling writes a file: the proof that a load ran code."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (Path.write_text, (Path(self.path), "ran"))


@pytest.mark.parametrize("labels_field, message", [
    (0, "40 labels, its card says 0$"),                       # 0 passes the bound (an empty shard is a shard)
    (1 << 20, f"40 labels, its card says {1 << 20}$"),        # the bound itself passes
    ((1 << 20) + 1, rf"{(1 << 20) + 1} labels \(0 to {1 << 20}\)$"),
    (-1, r"-1 labels \(0 to 1048576\)$"),
    (None, r"-1 labels \(0 to 1048576\)$"),                   # no count: read as -1
])
def test_the_label_count_is_bounded_at_both_edges(tmp_path: Path, labels_field: int | None, message: str) -> None:
    """The card's label count: 0 and MAX_SHARD_LABELS pass the bound (then disagree with the arrays), one more or −1
    or none is refused by the bound; each message names the file."""
    s = LabelSet(tmp_path / "set", CARD)
    path = s.write(0, 0, labels(40), {})
    rewrite(path, card={"labels": labels_field})
    with pytest.raises(ValueError, match=rf"^label shard {path}: {message}"):
        s.read(path)


def test_a_card_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    """A shard whose card is a JSON list: refused by the count (−1), as corrupt; a set card that is a list or lacks
    keys: refused naming the format or the missing keys."""
    s = LabelSet(tmp_path / "set", CARD)
    path = s.write(0, 0, labels(5), {})
    rewrite(path, card="[1, 2]")
    with pytest.raises(ValueError, match=r"-1 labels \(0 to"):
        s.read(path)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "card.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=rf"^label set card {bad / 'card.json'}: format None, expected "
                                         rf"'{FORMAT}'$"):
        LabelSet(bad)
    (bad / "card.json").write_text(json.dumps({"format": "other/1"}))
    with pytest.raises(ValueError, match=r": format 'other/1', expected"):
        LabelSet(bad)
    (bad / "card.json").write_text(json.dumps({"format": FORMAT, "game": "krypkasino", "players": 2}))
    with pytest.raises(ValueError, match=r": missing preset, obs_size, n_actions, state_size$"):
        LabelSet(bad)


def test_messages_name_what_is_wrong(tmp_path: Path) -> None:
    """Missing arrays are listed (and not reworded as corrupt); a set of other labels names every differing key; a
    truncated shard names the error's type; a bad array's message names the file; no shards at all says so."""
    s = LabelSet(tmp_path / "set", CARD)
    path = s.write(0, 0, labels(40), {})
    rewrite(path, mask=None, state=None)
    with pytest.raises(ValueError, match=rf"^label shard {path}: missing arrays mask, state$"):
        s.read(path)
    with pytest.raises(ValueError, match=r"^label set .*set holds other labels \(players, preset differ\): use "
                                         r"another folder$"):
        LabelSet(tmp_path / "set", {**CARD, "players": 3, "preset": "tiny"})
    good = s.write(0, 1, labels(40), {})
    good.write_bytes(good.read_bytes()[:10])
    with pytest.raises(ValueError, match=r"truncated or corrupt \(BadZipFile: "):
        s.read(good)
    path = s.write(0, 2, labels(40), {})
    rewrite(path, obs=np.zeros((40, 6), np.int8))
    with pytest.raises(ValueError, match=rf"^label shard {path}: array obs has shape"):
        s.read(path)
    empty = LabelSet(tmp_path / "empty", CARD)
    with pytest.raises(ValueError, match=rf"^label set {tmp_path / 'empty'}: no shards$"):
        empty.load()


def test_a_set_is_made_in_a_new_nested_folder_or_an_existing_empty_one(tmp_path: Path) -> None:
    """Creating a set makes missing parent folders and takes an existing empty folder; its card is written sorted,
    one space of indent, with a final newline (a readable, stable file)."""
    nested = LabelSet(tmp_path / "a" / "b" / "set", CARD)
    want = json.dumps({"format": FORMAT, **CARD}, indent=1, sort_keys=True) + "\n"
    assert (nested.path / "card.json").read_text() == want
    (tmp_path / "made").mkdir()
    assert LabelSet(tmp_path / "made", CARD).card == {"format": FORMAT, **CARD}
    assert sorted(p.name for p in (tmp_path / "made").iterdir()) == ["card.json"]


def test_shards_of_one_iteration_and_clean(tmp_path: Path) -> None:
    """``shards(i)`` lists only iteration i's complete shards; ``clean`` removes the temporaries of interrupted
    writes, returns them and leaves the shards."""
    s = LabelSet(tmp_path / "set", CARD)
    a, b, c = s.write(0, 0, labels(3), {}), s.write(1, 0, labels(3), {}), s.write(1, 1, labels(3), {})
    assert s.shards(0) == [a] and s.shards(1) == [b, c] and s.shards(2) == [] and s.shards() == [a, b, c]
    left = [tmp_path / "set" / "it001-00002.npz.tmp123", tmp_path / "set" / "it000-00009.npz.tmp7"]
    for p in left:
        p.write_bytes(b"half")
    assert s.clean() == sorted(left)
    assert not any(p.exists() for p in left) and s.shards() == [a, b, c] and s.clean() == []


def test_a_shard_is_written_in_its_dtypes_with_a_sorted_card(tmp_path: Path) -> None:
    """Arrays given in wider types are stored in the format's (int16 actions, int8 seats and states, …; the
    observations keep the game's own dtype); the card's JSON has its keys sorted."""
    s = LabelSet(tmp_path / "set", CARD)
    lab = labels(6)
    wide = Labels(**{k: v if v.dtype == bool else v.astype(np.float64 if k == "values" else np.int64)
                     for k, v in ((k, getattr(lab, k)) for k in ARRAYS)})
    path = s.write(0, 0, wide, {"zeta": 1, "alpha": 2})
    with np.load(path) as z:
        assert {k: str(z[k].dtype) for k in ARRAYS} == {
            "obs": "int64", "mask": "bool", "values": "float32", "teacher": "int16", "played": "int16",
            "by_teacher": "bool", "seat": "int8", "seed": "int64", "state": "int8"}
        text = str(z["card"])
    assert text == json.dumps(json.loads(text), sort_keys=True)


def test_a_legal_first_action_passes_whatever_the_second(tmp_path: Path) -> None:
    """The check reads the action's own column: action 0 legal with action 1 illegal is a legal label."""
    lab = labels(8)
    lab.mask[:] = [True, False, True, False]
    lab.values[:] = np.where(lab.mask, 1.0, np.nan)
    lab.teacher[:] = 0
    lab.played[:] = 2
    lab.check(CARD, "here")


def test_a_mask_of_integers_is_read_as_booleans(tmp_path: Path) -> None:
    """Labels whose mask is 0/1 integers (a user's own labels) are checked and stored as the boolean mask they mean,
    not read as indices."""
    s = LabelSet(tmp_path / "set", CARD)
    lab = labels(12)
    ints = Labels(**{**{k: getattr(lab, k) for k in ARRAYS}, "mask": lab.mask.astype(np.int8)})
    back, _ = s.read(s.write(0, 0, ints, {}))
    assert back.mask.dtype == np.bool_ and same(back, lab)
