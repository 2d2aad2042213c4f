"""Card replays composed from the real indices of bridge-cards: real index pixels on every
card, legal seeded games of the card variants, melds whose every index shows, one-line
errors, and the command line and bench that make and measure them.

The detection model is not run here: what the live pipeline reads on these replays is
``python -m bench.replays --game rommee`` (models/README.md).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

import tabletop.cli as cli
from tabletop.engine.items import parse_items
from tabletop.engine.variants import find_variant
from tabletop.studio.card_replay import (
    CARD_ASPECT,
    CARD_PITCH,
    PAPER_LEVEL,
    card_photos,
    card_settings,
    compose_deck_layout,
    compose_random_card_game,
    load_card_bank,
    random_card_game,
    random_card_script,
)
from tabletop.studio.replay import (
    CropBank,
    ReplayError,
    ReplaySettings,
    ReplayStep,
    compose,
    layout_problem,
    read_truth,
)
from tabletop.vision.labels import CARD_LABELS
from tests.shared import REALDATA

needs_photos = pytest.mark.skipif(
    REALDATA is None,
    reason="no real-data folder ($TABLETOP_REALDATA or <repo>/../shared/realdata) to cut "
           "card indices from")


@pytest.fixture(scope="module")
def bank() -> CropBank:
    return load_card_bank(REALDATA)


def _ink(patch: np.ndarray) -> float:
    """The darkest grey level of ``patch`` (paper is PAPER_LEVEL, an index's ink far below)."""
    return float(cv2.cvtColor(np.ascontiguousarray(patch), cv2.COLOR_BGR2GRAY).min())


@needs_photos
def test_every_card_is_a_blank_card_round_a_real_index_in_two_corners(bank: CropBank) -> None:
    labels = bank.labels()
    assert set(labels) <= set(CARD_LABELS)
    assert len(labels) >= 45 and sum(labels.values()) >= 90
    assert set(bank.used) == {"deal1", "deal2"}
    # a box at a slant (KS in deal1 is 40 x 43 pixels) is left out, an upright one kept
    assert "deal1" in bank.dropped["KS"] and "KS" in labels
    for label in labels:
        for crop in bank.of(label):
            face = crop.image
            h, w = face.shape[:2]
            assert abs(w / h - CARD_ASPECT) < 0.01
            corner = face[: h // 4, : w // 4]
            other = face[h - h // 4:, w - w // 4:]
            middle = face[h // 3: 2 * h // 3, w // 4: 3 * w // 4]
            assert _ink(corner) < 170, label  # the index's ink
            assert np.array_equal(other, corner[::-1, ::-1]), label  # turned half round
            assert _ink(middle) > PAPER_LEVEL - 12, label  # no pips: blank paper
            x1, y1, x2, y2 = crop.box
            assert crop.turned == (x2 - x1 > y2 - y1)


def _check_card_game(steps: list[ReplayStep], variant: str, players: int) -> None:
    rules = find_variant(variant)
    before: list[tuple[str, ...]] = []
    opened: set[int] = set()
    for n, step in enumerate(steps):
        assert not step.seats
        assert step.seat == n % players
        melds = list(step.melds)
        for meld in melds:
            assert rules.analyse(parse_items(list(meld))).valid, meld
            assert set(meld) <= set(CARD_LABELS) and "JK" not in meld
        assert max(Counter(t for m in melds for t in m).values()) <= 2
        if len(melds) > len(before):  # new melds at the end, the others as they were
            assert melds[: len(before)] == before and len(melds) - len(before) <= 2
            new = melds[len(before):]
            if step.seat not in opened:
                assert rules.check_initial_meld([parse_items(list(m)) for m in new]).meets
            else:
                assert len(new) == 1
        else:  # one meld grown by one card at one end, by a player who has opened
            changed = [(a, b) for a, b in zip(before, melds, strict=True) if a != b]
            assert len(changed) == 1
            old, grown = changed[0]
            assert len(grown) == len(old) + 1 and old in (grown[1:], grown[:-1])
            assert step.seat in opened
        opened.add(n % players)
        before = melds


def _moves_of_a_game_with_a_pile(steps: list[ReplayStep]
                                  ) -> tuple[list[ReplayStep], list[int]]:
    """The moves of a game whose moves end with a discard (the steps that lay, as the
    end-turn button would end them), and the indices of the steps that take the top
    discard; each step checked against the pile before it."""
    moves: list[ReplayStep] = []
    takes: list[int] = []
    pile: tuple[str, ...] = ()
    took: str | None = None
    for k, step in enumerate(steps):
        assert not step.presses  # the discard ends the turn, not the button
        if pile and moves and step.melds == moves[-1].melds and step.discards == pile[:-1]:
            assert took is None and step.seat != moves[-1].seat
            took = pile[-1]  # the top discard taken, nothing else changed
            pile = step.discards
            takes.append(k)
            continue
        assert step.discards[:-1] == pile  # the pile kept, one discard laid on it
        assert step.discards[-1] != took  # never the card just taken laid back
        assert took is None or step.seat == steps[k - 1].seat  # the taker lays next
        counts = Counter(t for m in (*step.melds, step.discards) for t in m)
        assert max(counts.values()) <= 2
        pile, took = step.discards, None
        moves.append(replace(step, discards=(), presses=("end_turn",)))
    return moves, takes


@pytest.mark.parametrize(("variant", "players"), [("rommee", 2), ("raeuber", 3)])
def test_random_card_games_with_a_pile_end_each_move_with_a_discard(
        variant: str, players: int) -> None:
    takes = moves_made = 0
    for seed in range(30):
        steps = random_card_script(np.random.default_rng(seed), players, variant=variant,
                                   discards=True)
        moves, taken_at = _moves_of_a_game_with_a_pile(steps)
        assert 4 <= len(moves) <= 8
        _check_card_game(moves, variant, players)
        takes += len(taken_at)
        moves_made += len(moves) - 1
    assert 0.15 * moves_made <= takes <= 0.45 * moves_made  # about 0.3 after the first
    without = random_card_script(np.random.default_rng(3), players, variant=variant)
    assert all(st.presses == ("end_turn",) and not st.discards for st in without)


@pytest.mark.parametrize(("variant", "players"), [("rommee", 2), ("rommee", 4),
                                                  ("raeuber", 3)])
def test_random_card_scripts_are_legal_seeded_games(variant: str, players: int) -> None:
    games = [random_card_script(np.random.default_rng(seed), players, variant=variant)
             for seed in range(30)]
    for steps in games:
        assert 4 <= len(steps) <= 8
        _check_card_game(steps, variant, players)
    assert games[3] == random_card_script(np.random.default_rng(3), players, variant=variant)
    melds = {m for steps in games for step in steps for m in step.melds}
    runs = [m for m in melds if len({t[-1] for t in m}) == 1]
    sets = [m for m in melds if len({t[:-1] for t in m}) == 1]
    assert runs and sets
    # the ace at both ends of a run
    assert any(m[:2] == (f"A{m[0][-1]}", f"2{m[0][-1]}") for m in runs)
    assert any(m[-2:] == (f"K{m[0][-1]}", f"A{m[0][-1]}") for m in runs)
    # only the labels given
    few = [f"{r}{s}" for r in ("10", "J", "Q", "K", "A") for s in "SHDC"]
    for seed in range(10):
        steps = random_card_script(np.random.default_rng(seed), players, variant=variant,
                                   labels=few)
        assert {t for st in steps for m in st.melds for t in m} <= set(few)


def test_a_card_script_for_a_tile_variant_is_refused() -> None:
    with pytest.raises(ReplayError, match="'sabra' is not played with cards"):
        random_card_script(np.random.default_rng(0), variant="sabra")


@needs_photos
def test_card_melds_overlap_from_their_first_card_and_every_index_shows(
        bank: CropBank) -> None:
    settings = ReplaySettings(noise=0.0, jpeg_quality=100)
    replay = compose_random_card_game(("Ana", "Ben"), seed=11, size=(960, 540),
                                      bank=bank, settings=settings, realdata=REALDATA)
    s = replay.settings
    assert s.tile_height == pytest.approx(125 / 720 * 540)
    last = len(replay.steps) - 1
    image = replay.frame(replay.frame_count - 1)
    items = replay.items(last)
    melds = Counter(it.meld for it in items)
    assert sum(melds.values()) == sum(map(len, replay.steps[last].melds))
    checked = 0
    for meld in melds:
        cards = sorted((it for it in items if it.meld == meld), key=lambda it: it.box[0])
        lefts = [it.box[0] for it in cards]
        width = cards[0].box[2] - cards[0].box[0]
        assert np.diff(lefts) == pytest.approx(CARD_PITCH * width, abs=0.2 * width)
        for it in cards:  # each card's top left index, never under the next card
            x1, y1, x2, y2 = it.box
            bw, bh = x2 - x1, y2 - y1
            index = image[round(y1 + 0.05 * bh): round(y1 + 0.27 * bh),
                          round(x1 + 0.05 * bw): round(x1 + 0.2 * bw)]
            assert _ink(index) < 170, it.label
            checked += 1
    assert checked >= 6
    assert [line["melds"] for line in replay.truth()] == [
        sorted(" ".join(m) for m in st.melds) for st in replay.steps]


PILE_SCRIPT = [
    ReplayStep((("QS", "QH", "QD"),), seat=0, discards=("7C",)),
    ReplayStep((("QS", "QH", "QD"),), seat=1, discards=("7C", "KD")),
    ReplayStep((("QS", "QH", "QD"),), seat=0, discards=("7C",)),  # KD taken
    ReplayStep((("QS", "QH", "QD"), ("5C", "6C", "7C")), seat=0, discards=("7C", "2H")),
    ReplayStep((("QS", "QH", "QD"), ("5C", "6C", "7C")), seat=1,
               discards=("7C", "2H", "9H")),
]


@needs_photos
@pytest.mark.parametrize("squared", [True, False])
def test_a_discard_pile_lies_squared_or_fanned_in_its_zone(bank: CropBank,
                                                           squared: bool) -> None:
    settings = card_settings(seed=2, base=ReplaySettings(noise=0.0, jpeg_quality=100,
                                                         squared_pile=squared))
    replay = compose(PILE_SCRIPT, variant="rommee", bank=bank, realdata=REALDATA,
                     settings=settings)
    assert [line["discards"] for line in replay.truth()] == [
        "7C", "7C KD", "7C", "7C 2H", "7C 2H 9H"]
    zone = replay.zones.of_kind("discard")[0]
    image = replay.frame(replay.frame_count - 1)
    piled = sorted((it for it in replay.items(4) if it.pile is not None),
                   key=lambda it: it.pile or 0)
    assert [it.label for it in piled] == ["7C", "2H", "9H"]
    assert all(zone.contains(((it.box[0] + it.box[2]) / 2, (it.box[1] + it.box[3]) / 2))
               for it in piled)
    top = piled[-1].box
    for it in piled:
        x1, y1, x2, y2 = it.box
        bw, bh = x2 - x1, y2 - y1
        index = image[round(y1 + 0.05 * bh): round(y1 + 0.27 * bh),
                      round(x1 + 0.05 * bw): round(x1 + 0.2 * bw)]
        if it is piled[-1] or not squared:  # fanned: each index shows
            assert _ink(index) < 170, it.label
        else:  # squared: under the top card, within a tenth of a card's width of it
            assert max(abs(a - b) for a, b in zip(it.box, top, strict=True)) < 0.2 * bw
    # the card taken leaves, the 7C under it stays where it lay, tile for tile
    first = next(it for it in replay.items(1) if it.pile == 0)
    assert next(it for it in replay.items(2) if it.pile is not None) == first
    assert [it.pile for it in replay.items(2) if it.pile is not None] == [0]
    # a hand comes to the pile for each discard and each take
    assert all(any(abs(b[0] - top[0]) < 3 * (top[2] - top[0]) for b in t.changed)
               for t in replay.timings)
    assert all(t.seat is not None for t in replay.timings)


def test_a_discard_pile_where_the_variant_has_none_gives_one_line() -> None:
    problem = layout_problem([ReplayStep((), discards=("R5",))], 2, card_settings((320, 180)),
                             CropBank([], [], []), "sabra")
    assert problem == "step 1: a discard pile, but the variant has none"


@pytest.mark.parametrize(("truth", "events", "score"), [
    # every pile move seen, in order
    ([{"discards": "7C"}, {"discards": "7C KD"}, {"discards": "7C"}, {"discards": "7C 2H"}],
     [("item_discarded", "7C"), ("item_discarded", "KD"), ("discard_taken", ["KD"]),
      ("item_discarded", "2H")], (4, 4, 0)),
    # a discard read as taken, then the wrong card discarded
    ([{"discards": "7C"}, {"discards": "7C KD"}],
     [("item_discarded", "7C"), ("discard_taken", ["7C"]), ("item_discarded", "KC")],
     (2, 1, 2)),
    # a pile gone at once: the cards taken, the deepest first; none seen
    ([{"discards": "7C KD 2H"}, {"discards": "7C"}], [], (4, 0, 0)),
])
def test_the_bench_scores_the_discard_pile_in_order(
        truth: list[dict[str, str]], events: list[tuple[str, object]],
        score: tuple[int, int, int]) -> None:
    from bench.replays import score_replay, true_pile_moves

    lines = [{"t": float(k), "melds": [], **line} for k, line in enumerate(truth)]
    seen = [{"type": kind, "t": 9.0, **({"items": item} if kind == "discard_taken"
                                          else {"item": item})} for kind, item in events]
    assert score_replay(lines, seen).pile == score
    assert score_replay([{"t": 1.0, "melds": []}], seen).pile is None
    if not events:
        assert true_pile_moves(lines)[-1] == ("taken", ("KD", "2H"))


@needs_photos
def test_random_card_games_fit_the_table_and_have_a_card_for_every_label(
        bank: CropBank) -> None:
    settings = card_settings()
    for seed in range(12):
        steps = random_card_game(seed, 2, bank=bank, settings=settings)
        _check_card_game(steps, "rommee", 2)
        bank.check({t for st in steps for m in st.melds for t in m})
        assert layout_problem(steps, 2, card_settings(seed=seed), bank, "rommee") is None


@needs_photos
@pytest.mark.parametrize(("variant", "melds", "message"), [
    ("rommee", (("R1", "R2", "R3"),), "'R1' is no card"),
    ("sabra", (("AS", "2S", "3S"),), "'AS' is a card; replays lay tiles"),
    ("rommee", (("AS", "AS", "AS"), ("AS", "2S", "3S")),
     r"4 copies of AS \(two decks have 2\)"),
    ("skat", (("AS", "2S", "3S"),), "unknown variant 'skat'"),
])
def test_material_the_variant_does_not_use_gives_one_line(
        bank: CropBank, variant: str, melds: tuple[tuple[str, ...], ...], message: str) -> None:
    with pytest.raises(ReplayError, match=message) as error:
        compose([ReplayStep(melds)], variant=variant, bank=bank, realdata=REALDATA,
                settings=card_settings((320, 180)))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("height", "ok"), [(19, False), (20, True), (360, True),
                                            (361, False)])
def test_the_card_height_is_checked(height: float, ok: bool) -> None:
    if ok:
        assert card_settings(card_height=height).tile_height == height
    else:
        with pytest.raises(ReplayError, match="cards are 20 to 360 pixels tall"):
            card_settings(card_height=height)


@needs_photos
def test_cli_composes_a_random_romme_game(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "romme"
    status = cli.main(["replay", "compose", "--random", "--variant", "rommee", "--seed", "4",
                       "--out", str(out), "--size", "320x180", "--realdata", str(REALDATA),
                       "--json"])
    assert status == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["file"] for r in rows] == ["video", "truth", "zones"]
    script = json.loads((out / "script.json").read_text())
    assert script["variant"] == "rommee"
    steps = [ReplayStep.from_json(st) for st in script["steps"]]
    _check_card_game(steps, "rommee", 2)
    header, lines = read_truth(out / "truth.jsonl")
    assert header is not None and header["variant"] == "rommee"
    assert set(header["photos"]) <= {"deal1", "deal2"}
    assert [line["melds"] for line in lines] == [
        sorted(" ".join(m) for m in st.melds) for st in steps]
    # the script read back lays the same game
    again = tmp_path / "again"
    assert cli.main(["replay", "compose", "--script", str(out / "script.json"), "--seed", "4",
                     "--out", str(again), "--size", "320x180", "--realdata",
                     str(REALDATA)]) == 0
    assert read_truth(again / "truth.jsonl")[1] == lines


@needs_photos
def test_cli_composes_a_random_romme_game_with_a_squared_pile(tmp_path: Path) -> None:
    out = tmp_path / "romme"
    args = ["--seed", "6", "--size", "640x360", "--realdata", str(REALDATA), "--pile",
            "squared"]
    assert cli.main(["replay", "compose", "--random", "--variant", "rommee", "--out",
                     str(out), *args]) == 0
    steps = [ReplayStep.from_json(st)
             for st in json.loads((out / "script.json").read_text())["steps"]]
    moves, _ = _moves_of_a_game_with_a_pile(steps)
    _check_card_game(moves, "rommee", 2)
    header, lines = read_truth(out / "truth.jsonl")
    assert [line["discards"] for line in lines] == [" ".join(st.discards) for st in steps]
    assert header is not None and not any(st["presses"] for st in header["steps"])
    again = tmp_path / "again"
    assert cli.main(["replay", "compose", "--script", str(out / "script.json"), "--out",
                     str(again), *args]) == 0
    assert read_truth(again / "truth.jsonl")[1] == lines


@pytest.mark.parametrize(("args", "message"), [
    (["--variant", "rommee"], "a rommee replay needs --random or --script"),
    (["--variant", "wiener", "--random"], "replays lay sabra, rommee, raeuber"),
    (["--random", "--card-height", "90"], "--card-height is for card replays"),
    (["--random", "--pile", "squared"], "--pile is for card replays"),
    (["--variant", "rommee", "--random", "--photos", "measure"],
     "card replays take the indices of bridge-cards"),
])
def test_cli_card_replay_mistakes_give_one_line_and_status_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
        message: str) -> None:
    status = cli.main(["replay", "compose", "--out", str(tmp_path / "x"), *args])
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(("missing", "extra", "pairs"), [
    (["QS"], ["QC"], [("QS", "QC")]),  # a spade read as a club: one rank
    (["10H", "KS"], ["KC", "10D"], [("10H", "10D"), ("KS", "KC")]),
    (["7C"], ["K7"], [("7C", "K7")]),  # one left of each
    (["R7"], ["R1"], [("R7", "R1")]),  # tiles as before: one colour
])
def test_the_bench_pairs_misread_cards_by_rank_and_tiles_by_colour(
        missing: list[str], extra: list[str], pairs: list[tuple[str, str]]) -> None:
    from bench.replays import pair_misreads

    found, left_missing, left_extra = pair_misreads(missing, extra)
    assert sorted(found) == sorted(pairs) and not left_missing and not left_extra


def test_the_bench_keeps_card_replays_apart(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import replays

    tiles = replays.BenchSetup(Path("o"))
    cards = replays.BenchSetup(Path("o"), photos="all", game="rommee")
    near = replays.BenchSetup(Path("o"), photos="all", game="rommee", card_height=200)
    assert tiles.set_name == "s1-measure-p2-1280x720"
    assert cards.set_name == "rommee-s1-all-p2-1280x720"
    assert near.set_name == "rommee-s1-all-p2-1280x720-c200"
    piled = replays.BenchSetup(Path("o"), photos="all", game="rommee", pile="squared")
    assert piled.set_name == "rommee-s1-all-p2-1280x720-squared"
    for option in (["--card-height", "90"], ["--pile", "squared"]):
        assert replays.main(option) == 2
        assert f"{option[0]} is for card games" in capsys.readouterr().err


@pytest.mark.parametrize("differs", ["m.cards.onnx", "m.cards.reader.onnx", "m.head.npz",
                                     "m.palette.json"])
def test_the_bench_tells_models_apart_by_their_card_and_adapted_files_too(
        tmp_path: Path, differs: str) -> None:
    from bench.replays import model_tag

    tags = []
    for version in ("first", "second"):
        folder = tmp_path / version
        folder.mkdir()
        for name in ("m.onnx", "m.reader.onnx", "m.cards.onnx", "m.cards.reader.onnx",
                     "m.head.npz", "m.palette.json"):
            (folder / name).write_text(version if name == differs else name)
        tags.append(model_tag(folder / "m.onnx"))
    assert tags[0].startswith("m-") and tags[0] != tags[1]


def test_the_card_split_names_one_photo_for_adapting_and_another_for_measuring() -> None:
    assert card_photos("adapt") == ("deal1",) and card_photos("measure") == ("deal2",)
    assert card_photos("all") is None
    with pytest.raises(ReplayError, match="not 'train'"):
        card_photos("train")


@needs_photos
def test_the_deck_layout_labels_the_indices_it_lays_and_leaves_missing_cards_out() -> None:
    from tabletop.studio.adapt import CARD_ORDER

    bank = load_card_bank(REALDATA, use_images=card_photos("adapt"))
    image, labelled = compose_deck_layout(bank, np.random.default_rng(0), card_height=150)
    labels = Counter(item["label"] for item in labelled)
    assert set(labels) == set(bank.labels())  # every card deal1 has, none it lacks
    assert set(labels.values()) == {2}  # both corners
    order = [label for row in CARD_ORDER for label in row if label != "JK"]
    tops = {item["label"]: item["box"] for item in labelled[::2]}
    for label, box in tops.items():
        x1, y1, x2, y2 = (round(v) for v in box)
        assert _ink(image[y1:y2, x1:x2]) < 170, label  # the index is inside its box
        # the place in the order: rows of suits, columns of ranks
        row, column = divmod(order.index(label), 13)
        assert 30 + column * (round(150 * CARD_ASPECT) + 25) <= x1 < 30 + (column + 1) * (
            round(150 * CARD_ASPECT) + 25)
        assert 30 + row * 190 <= y1 < 30 + (row + 1) * 190
    for item in labelled:  # every box is an index's size: 0.21 of the card's height
        x1, y1, x2, y2 = item["box"]
        assert y2 - y1 == pytest.approx(0.21 * 150, abs=1)
        assert 0.25 < (x2 - x1) / (y2 - y1) < 0.8


@needs_photos
def test_the_adapt_command_labels_a_deck_layout_whose_rows_lack_a_few_indices(
        bank: CropBank, tmp_path: Path) -> None:
    # 3 of the deck's cards have no usable index (their places stay empty) and the shipped
    # finder misses a few more: the rows are labelled by the columns of the complete ones
    from tabletop.studio.adapt import layout_to_jsonl
    from tabletop.vision.detections import iou_matrix

    image, truth = compose_deck_layout(bank, np.random.default_rng([0, 5]), card_height=150)
    photo = tmp_path / "layout.jpg"
    cv2.imwrite(str(photo), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    record = json.loads(layout_to_jsonl([photo], tmp_path / "layout.jsonl", "cards")
                        .read_text().splitlines()[0])
    got = record["detections"]
    overlap = iou_matrix(np.array([g["box"] for g in got]), np.array([t["box"] for t in truth]))
    nearest = overlap.argmax(axis=1)
    assert all(overlap[i, j] >= 0.3 for i, j in enumerate(nearest))
    assert [g["label"] for g in got] == [truth[j]["label"] for j in nearest]  # none wrong
    assert len(got) >= 0.9 * len(truth)
