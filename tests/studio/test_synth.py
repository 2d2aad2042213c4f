"""The synthetic renderer: reproducible, labels valid and where the drawn items are."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.cli import main
from tabletop.studio.synth import RenderOptions, generate_dataset, render_scene
from tabletop.studio.synth.cards import SUIT_BESIDE_SHARE, random_design, render_card
from tabletop.studio.synth.scene import INDEX_MIN_VISIBLE, TILE_MIN_VISIBLE
from tabletop.studio.synth.tiles import JOKERS, numeral_mask, random_style, render_tile
from tabletop.vision.detections import read_jsonl
from tabletop.vision.labels import CARD_LABELS, CLASS_NAMES, TILE_LABELS, label_of
from tests.shared import need, needs

SMALL = (480, 288)


def test_same_seed_same_bytes_other_seed_other_image() -> None:
    a = render_scene(11, *SMALL, kind="mixed")
    b = render_scene(11, *SMALL, kind="mixed")
    c = render_scene(12, *SMALL, kind="mixed")
    assert a.encoded == b.encoded
    assert a.detections.to_items() == b.detections.to_items()
    assert a.encoded != c.encoded


def test_dataset_does_not_depend_on_worker_count(tmp_path: Path) -> None:
    one = generate_dataset(tmp_path / "one", 4, seed=3, kind="mixed", size=(320, 192), workers=1)
    two = generate_dataset(tmp_path / "two", 4, seed=3, kind="mixed", size=(320, 192), workers=2)
    for name in ("annotations.jsonl", "data.yaml", "images/000003.jpg", "labels/000002.txt"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name


@pytest.mark.parametrize("kind", ["tiles", "cards", "mixed"])
def test_labels_are_tokens_and_boxes_lie_in_the_image(kind: str) -> None:
    width, height = SMALL
    total = 0
    for seed in range(3):
        scene = render_scene(100 + seed, width, height, kind=kind)
        assert scene.image.shape == (height, width, 3)
        d = scene.detections
        total += len(d)
        for label, item_kind in zip(d.labels, d.kinds, strict=True):
            assert label in (TILE_LABELS if item_kind == "tile" else CARD_LABELS)
            assert kind == "mixed" or item_kind == kind[:-1]
        assert np.all(d.boxes[:, :2] >= 0)
        assert np.all(d.boxes[:, 2] <= width) and np.all(d.boxes[:, 3] <= height)
        for item in scene.items:
            if item.kept:  # nothing mostly hidden is labelled
                limit = TILE_MIN_VISIBLE if item.kind == "tile" else INDEX_MIN_VISIBLE
                assert item.visible >= limit
    assert total > 0


def test_hidden_items_get_no_box() -> None:
    dropped = kept = 0
    for seed in range(8):
        scene = render_scene(300 + seed, *SMALL, kind="mixed")
        dropped += sum(1 for item in scene.items if item.label and not item.kept
                       and item.visible < TILE_MIN_VISIBLE)
        kept += sum(1 for item in scene.items if item.kept)
    assert dropped > 0 and kept > 0
    assert sum(len(render_scene(300 + s, *SMALL, kind="mixed").detections)
               for s in range(8)) == kept


def _face_bounds(image: np.ndarray, box: np.ndarray, pad: int = 6) -> tuple[int, ...] | None:
    """Bounding box of bright tile-face pixels near ``box`` (the felt is dark, and the
    tile's edge, drawn below the face, is darker than the face by at least 15 %)."""
    x1, y1, x2, y2 = box
    h, w = image.shape[:2]
    x0, y0 = max(0, int(x1) - pad), max(0, int(y1) - pad)
    xe, ye = min(w, int(np.ceil(x2)) + pad), min(h, int(np.ceil(y2)) + pad)
    roi = image[y0:ye, x0:xe].astype(int)
    level = roi.min(axis=2)
    bright = level > max(150.0, 0.86 * float(np.percentile(level, 90)))
    # only the face that fills the box: an unlabelled tile (face down) may lie beside it
    _, parts = cv2.connectedComponents(bright.astype(np.uint8), connectivity=4)
    inner = parts[pad:-pad, pad:-pad]
    counts = np.bincount(inner[inner > 0]) if (inner > 0).any() else np.zeros(1, int)
    if counts.max() == 0:
        return None
    ys, xs = np.nonzero(parts == int(counts.argmax()))
    if len(xs) == 0:
        return None
    return (x0 + xs.min(), y0 + ys.min(), x0 + xs.max() + 1, y0 + ys.max() + 1)


def test_tile_boxes_sit_on_the_drawn_tiles() -> None:
    """A tile's box covers the whole face (CONTRACT.md), no more: checked on the pixels
    (a tile on a rack is boxed above the rack's lip: see the rack test)."""
    options = RenderOptions(perspective=False, effects=False, occluders=False, surface="felt",
                            jpeg=False)
    checked = 0
    for seed in range(12):
        scene = render_scene(500 + seed, 640, 384, kind="tiles", options=options)
        boxes = scene.detections.boxes
        for i, box in enumerate(boxes):
            others = np.delete(boxes, i, axis=0)
            near = (others[:, 0] < box[2] + 10) & (others[:, 2] > box[0] - 10) & (
                others[:, 1] < box[3] + 10) & (others[:, 3] > box[1] + -10)
            item = next(it for it in scene.items if it.kept and np.allclose(
                it.polygon.min(axis=0).clip(0), box[:2]))
            if near.any() or item.visible < 0.999 or box[0] < 1 or box[1] < 1 or (
                    box[2] > 639 or box[3] > 383):
                continue  # neighbours or the frame would spoil the pixel check
            found = _face_bounds(scene.image, box)
            assert found is not None
            assert np.allclose(found, box, atol=3.0), (found, box.tolist())
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("seed", range(6))
def test_six_and_nine_carry_an_up_mark(seed: int) -> None:
    style = random_style(np.random.default_rng(seed))
    for label in ("K6", "B9", "R6", "O9"):
        tile = render_tile(label, style, 120)
        assert tile.mark_box is not None
        _nx1, _ny1, _nx2, ny2 = tile.numeral_box
        _mx1, my1, _mx2, _my2 = tile.mark_box
        assert my1 >= ny2 - 1, "the mark is under the numeral"
        x1, y1, x2, y2 = (round(v) for v in tile.mark_box)
        patch = tile.image[y1 : y2 + 1, x1 : x2 + 1]
        face = np.asarray(style.face, np.float32)
        assert np.abs(patch - face).max() > 20, "the mark is drawn"
    # a 6 is not a 9 turned round: turned, the mark would be above the numeral
    six, nine = render_tile("K6", style, 120), render_tile("K9", style, 120)
    turned = six.image[::-1, ::-1]
    assert not np.allclose(turned, nine.image, atol=30)


def _ink_in(card: Any, design: Any, corners: Any) -> Any:
    x1, y1 = np.floor(corners.min(axis=0)).astype(int)
    x2, y2 = np.ceil(corners.max(axis=0)).astype(int)
    patch = card.image[max(0, y1) : y2, max(0, x1) : x2]
    return np.abs(patch - np.asarray(design.paper, np.float32)).max(axis=2) > 60


def _same_print(ink: np.ndarray, other: np.ndarray) -> float:
    """The share of pixels two same-sized index boxes agree on, over the box's middle
    columns: a wide index (a face's wide "10") reaches the column of pips beside it, so a
    box can hold a pip's edge on its inner side (the right of the top-left index, the left
    of the top-right one), which is no part of the print compared."""
    band = -(-ink.shape[1] * 15 // 100)
    return float((other[:, band:-band] == ink[:, band:-band]).mean())


@pytest.mark.parametrize("beside", [False, True])
@pytest.mark.parametrize("four", [False, True])
@pytest.mark.parametrize("label", ["AS", "10H", "QD", "7C", "JK"])
def test_card_index_boxes(label: str, four: bool, beside: bool) -> None:
    design = dataclasses.replace(random_design(np.random.default_rng(len(label))),
                                 four_indices=four, suit_beside=beside)
    card = render_card(label, design, 240)
    h, w = card.alpha.shape
    assert len(card.indices) == (4 if four else 2)
    top, bottom = card.indices[:2]
    # the top-left index sits in the top-left corner, its twin is turned round
    assert top.max(axis=0)[0] < w / 2 and top.max(axis=0)[1] < h / 2
    assert np.allclose(sorted(map(tuple, bottom)), sorted(map(tuple, np.array([w, h]) - top)))
    ink = _ink_in(card, design, top)
    assert ink.mean() > 0.1, "the index box holds the printed rank and suit"
    # the ink touches the box on every side (within the small padding): the box is tight
    rows, cols = np.nonzero(ink)
    assert rows.min() <= 3 and cols.min() <= 3
    assert rows.max() >= ink.shape[0] - 4 and cols.max() >= ink.shape[1] - 4
    if four:
        right, left_bottom = card.indices[2:]
        # top right: the same upright index, as far from the right edge as the first is
        # from the left; its twin turned round at the bottom left
        assert right.min(axis=0)[0] > w / 2 and right.max(axis=0)[1] < h / 2
        assert right.max(axis=0)[0] == pytest.approx(w - top.min(axis=0)[0], abs=2)
        assert np.allclose(sorted(map(tuple, left_bottom)),
                           sorted(map(tuple, np.array([w, h]) - right)))
        moved = _ink_in(card, design, right)
        assert moved.shape == ink.shape and _same_print(moved, ink) > 0.97
    else:
        # no index where a four-index deck prints its third
        shifted = top + np.array([(w - top.max(axis=0)[0] - top.min(axis=0)[0], 0.0)])
        there = _ink_in(card, design, shifted)
        assert there.shape != ink.shape or (there == ink).mean() < 0.9


@pytest.mark.parametrize("label", ["AS", "10H", "QD", "7C"])
def test_a_wide_index_prints_the_suit_beside_the_rank(label: str) -> None:
    under = dataclasses.replace(random_design(np.random.default_rng(8)), suit_gap=0.2,
                                suit_beside=False, four_indices=False)
    beside = dataclasses.replace(under, suit_beside=True)
    inks = [_ink_in(card, d, card.indices[0])
            for d in (under, beside) for card in [render_card(label, d, 400)]]
    (uh, uw), (bh, bw) = inks[0].shape, inks[1].shape
    # the same rank and suit: in a column under, in a row beside
    assert bw > uw and bh < uh
    rank_height = under.index_height * 400
    assert bh < rank_height * 1.25 < uh
    # beside: a blank column splits rank from suit and no blank row splits the ink;
    # under: the other way round
    def splits(ink: np.ndarray, axis: int) -> bool:
        used = np.nonzero(ink.any(axis=axis))[0]
        return bool(np.diff(used).max(initial=1) > 2)
    assert splits(inks[1], 0) and not splits(inks[1], 1)
    assert splits(inks[0], 1)


def test_wide_index_decks_are_drawn_only_when_asked_and_leave_other_draws_alone() -> None:
    seeds = range(400)
    plain = [random_design(np.random.default_rng(s)) for s in seeds]
    asked = [random_design(np.random.default_rng(s), beside=True) for s in seeds]
    assert not any(d.suit_beside for d in plain)
    share = np.mean([d.suit_beside for d in asked])
    assert share == pytest.approx(SUIT_BESIDE_SHARE, abs=0.06)
    # everything else, and what the generator draws next, is as it was: scenes seeded
    # before wide indices existed are drawn the same unless their deck is wide
    assert all(dataclasses.replace(a, suit_beside=False) == p
               for a, p in zip(asked, plain, strict=True))
    after = []
    for beside in (False, True):
        rng = np.random.default_rng(77)
        random_design(rng, beside=beside)
        after.append(rng.random(4))
    assert (after[0] == after[1]).all()


def test_a_scene_of_one_deck_draws_its_cards_in_it_and_everything_else_as_without() -> None:
    deck = random_design(np.random.default_rng([52_000, 3]), beside=True)
    drawn = render_scene(61_000, 640, 360, "cards")
    mine = render_scene(61_000, 640, 360, "cards", RenderOptions(deck=deck))
    # the same cards where they were (which of their indices show may differ: the deck's
    # own proportions and index size)
    assert [it.label for it in mine.items] == [it.label for it in drawn.items]
    assert not np.array_equal(mine.image, drawn.image)
    assert render_scene(61_000, 640, 360, "cards", RenderOptions(deck=deck)).encoded \
        == mine.encoded


@pytest.mark.parametrize(("four", "jokers"), [(False, 2), (True, 0)])
def test_a_deck_layout_lies_in_the_order_adapt_reads(four: bool, jokers: int) -> None:
    from tabletop.studio.adapt import CARD_ORDER
    from tabletop.studio.synth.scene import render_deck_layout

    deck = dataclasses.replace(random_design(np.random.default_rng(5)), four_indices=four)
    layout = render_deck_layout(deck, 9, card_height=120, jokers=jokers)
    per_card = 4 if four else 2
    cards = [label for row in CARD_ORDER for label in row if label != "JK"] + ["JK"] * jokers
    assert list(layout.detections.labels) == [c for c in cards for _ in range(per_card)]
    h, w = layout.image.shape[:2]
    boxes = layout.detections.boxes
    assert (boxes[:, :2] >= 0).all() and (boxes[:, 2] <= w).all() and (boxes[:, 3] <= h).all()
    # each card's indices lie on it: the rows go down the picture suit by suit
    centres_y = (boxes[:, 1] + boxes[:, 3]) / 2
    rows = np.repeat(np.arange(len(cards)) // 13, per_card)
    for row in range(rows.max()):
        assert centres_y[rows == row].max() < centres_y[rows == row + 1].min()
    assert render_deck_layout(deck, 9, card_height=120, jokers=jokers).encoded == layout.encoded


@pytest.mark.parametrize(("height", "jokers", "error"), [
    (20, 2, "cards 20 pixels tall are too small"), (150, 14, "0..13 jokers, not 14")])
def test_a_deck_layout_refuses_what_it_cannot_lay(height: int, jokers: int, error: str) -> None:
    from tabletop.studio.synth.scene import render_deck_layout

    with pytest.raises(ValueError, match=error):
        render_deck_layout(random_design(np.random.default_rng(5)), 1, height, jokers)


@pytest.mark.parametrize("rank", ["J", "Q"])
def test_german_decks_letter_their_court_cards_but_keep_the_label(rank: str) -> None:
    english = dataclasses.replace(random_design(np.random.default_rng(5)), court_letters="JQK")
    german = dataclasses.replace(english, court_letters="BDK")
    label = rank + "H"
    inks = [_ink_in(render_card(label, d, 240), d, render_card(label, d, 240).indices[0])
            for d in (english, german)]
    assert inks[0].shape != inks[1].shape or (inks[0] != inks[1]).mean() > 0.1
    # a king is a K in both
    kings = [_ink_in(render_card("KH", d, 240), d, render_card("KH", d, 240).indices[0])
             for d in (english, german)]
    assert kings[0].shape == kings[1].shape and (kings[0] == kings[1]).all()


@pytest.mark.parametrize("gap", [0.03, 0.4])
def test_the_suit_sits_its_decks_gap_below_the_rank(gap: float) -> None:
    design = dataclasses.replace(random_design(np.random.default_rng(6)), suit_gap=gap,
                                 four_indices=False)
    card = render_card("5S", design, 400)
    ink = _ink_in(card, design, card.indices[0])
    rows = np.nonzero(ink.any(axis=1))[0]
    blank = np.diff(rows).max() - 1  # the empty rows between the rank and the suit
    rank_height = design.index_height * 400
    assert blank == pytest.approx(gap * rank_height, abs=2.5)


def test_yolo_labels_match_the_jsonl(tmp_path: Path) -> None:
    out = generate_dataset(tmp_path / "d", 3, seed=9, kind="mixed", size=(320, 192), workers=1)
    records = read_jsonl(out / "annotations.jsonl")
    assert [r.image for r in records] == [f"images/{i:06d}.jpg" for i in range(3)]
    for record in records:
        lines = (out / "labels" / (Path(record.image).stem + ".txt")).read_text().splitlines()
        assert len(lines) == len(record.detections)
        for line, box, label, kind in zip(lines, record.detections.boxes,
                                          record.detections.labels, record.detections.kinds,
                                          strict=True):
            cls, cx, cy, bw, bh = line.split()
            assert label_of(int(cls)) == (label, kind)
            x1, y1, x2, y2 = box
            assert float(cx) * 320 == pytest.approx((x1 + x2) / 2, abs=0.1)
            assert float(cy) * 192 == pytest.approx((y1 + y2) / 2, abs=0.1)
            assert float(bw) * 320 == pytest.approx(x2 - x1, abs=0.1)
            assert float(bh) * 192 == pytest.approx(y2 - y1, abs=0.1)
        image = cv2.imread(str(out / record.image))
        assert image.shape == (192, 320, 3)
    yaml_text = (out / "data.yaml").read_text()
    assert f"nc: {len(CLASS_NAMES)}" in yaml_text and '105: "JK.card"' in yaml_text


def test_synth_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["synth", "--out", str(tmp_path / "s"), "--images", "2", "--seed", "1",
                 "--kind", "tiles", "--size", "256x160", "--workers", "1", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["images"] == 2
    assert len(list((tmp_path / "s" / "images").glob("*.jpg"))) == 2


@pytest.mark.parametrize("argv", [
    ["--size", "big"], ["--size", "10x10"], ["--kind", "dominoes"], ["--images", "0"],
])
def test_synth_bad_input_exits_2(tmp_path: Path, argv: list[str]) -> None:
    base = ["synth", "--out", str(tmp_path / "s"), "--images", "1", "--seed", "1"]
    assert main(base + argv) == 2


def _faces() -> list[str]:
    from tabletop.studio.synth.shapes import FONTS

    return list(FONTS)


@pytest.mark.parametrize("font", _faces())
def test_every_face_draws_every_numeral_and_rank_distinctly(font: str) -> None:
    from tabletop.studio.synth.shapes import text_mask

    texts = [str(n) for n in range(1, 14)] + ["A", "J", "Q", "K"]
    masks = {text: text_mask(text, font, 800, 48, 40) for text in texts}
    for text, mask in masks.items():
        assert mask.shape == (48, 40)
        assert 0.08 < float(mask.mean()) < 0.9, text  # ink, but not a filled box
    # squeezed to one box size, every text still looks unlike every other
    for a in texts:
        for b in texts:
            if a < b:
                assert float(np.abs(masks[a] - masks[b]).mean()) > 0.04, (font, a, b)


def _stroke_faces() -> list[str]:
    from tabletop.studio.synth.shapes import STROKE_FONTS

    return list(STROKE_FONTS)


@pytest.mark.parametrize("font", _stroke_faces())
def test_every_stroke_face_draws_every_numeral_distinctly(font: str) -> None:
    from tabletop.studio.synth.shapes import STROKE_FONTS, text_mask

    texts = [str(n) for n in range(1, 14)]
    masks = {text: text_mask(text, font, 800, 48, 40) for text in texts}
    for text, mask in masks.items():
        # a 1 with no flag is a bare stem: squeezed to the box, it fills it
        bare = text == "1" and STROKE_FONTS[font].flag == 0
        assert 0.08 < float(mask.mean()) < (1.0 if bare else 0.9), text
    for a in texts:
        for b in texts:
            if a < b:
                assert float(np.abs(masks[a] - masks[b]).mean()) > 0.04, (font, a, b)
    # a 9 is a 6 turned half round (the tile's mark tells them apart), not a mirror image
    six, nine = text_mask("6", font, 800, 48, 30), text_mask("9", font, 800, 48, 30)
    assert float(np.abs(np.rot90(six, 2) - nine).mean()) < 0.03
    assert float(np.abs(np.fliplr(six) - nine).mean()) > 0.06


def _natural(digit: str, face: str) -> Any:
    """The digit 60 px tall at its own width, ink as booleans."""
    from tabletop.studio.synth.shapes import text_aspect, text_mask

    width = round(60 * text_aspect(digit, face, 800))
    return text_mask(digit, face, 800, 60, width) > 0.5


def _apex(face: str) -> float:
    """Ink in the 4's top right corner, where a closed 4's strokes meet."""
    four = _natural("4", face)
    return float(four[:8, four.shape[1] * 2 // 3 :].mean())


def _foot(face: str) -> float:
    one = _natural("1", face)
    return one[-3].sum() / one[30].sum()


def _flag(face: str) -> float:
    one = _natural("1", face)
    stem = one[45].nonzero()[0].min()  # left edge of the stem, below the flag
    return stem / 60


def _bow(face: str) -> float:
    seven = _natural("7", face)
    middle = seven[30].nonzero()[0].mean()
    return (middle - (seven[8].nonzero()[0].max() + seven[-3].nonzero()[0].mean()) / 2) / 60


def _crossbar(face: str) -> float:
    """The 7's widest ink in its middle rows: a crossed 7's bar, else the stem alone."""
    seven = _natural("7", face)
    return float(seven[26:36].sum(axis=1).max()) / seven.shape[1]


def _lean(face: str) -> float:
    """How far the 7's stem travels left from its top to its foot, per height."""
    seven = _natural("7", face)
    return float(seven[12].nonzero()[0].mean() - seven[-3].nonzero()[0].mean()) / 60


# (what differs, how it is measured, the face with more of it, the face with less)
STROKE_SHAPES = [
    ("a foot under the 1", _foot, "stroke-flag", "stroke", 2.0),
    ("a longer flag on the 1", _flag, "stroke-long", "stroke", 0.1),
    ("a bowed 7", _bow, "stroke-flag", "stroke", 0.03),
    ("a 4 closed at the top", _apex, "stroke", "stroke-flag", 0.15),
    ("a flag on the 1", _flag, "stroke", "stroke-plain", 0.1),
    ("a crossed 7", _crossbar, "stroke-euro", "stroke", 0.35),
    ("a slanting 7 stem", _lean, "stroke", "stroke-steep", 0.1),
]


@pytest.mark.parametrize(("why", "measure", "more", "less", "by"), STROKE_SHAPES,
                         ids=[s[0] for s in STROKE_SHAPES])
def test_stroke_faces_differ_where_they_say(why: str, measure: Any, more: str, less: str,
                                            by: float) -> None:
    assert measure(more) - measure(less) >= by, (why, measure(more), measure(less))


def test_a_stroke_face_has_digits_only_and_letters_fall_back_to_sans() -> None:
    from tabletop.studio.synth import shapes

    assert np.array_equal(shapes.text_mask("J", "stroke", 800, 40, 24),
                          shapes.text_mask("J", "sans", 800, 40, 24))
    with pytest.raises(ValueError, match="no stroke digit"):
        shapes._stroke_paths("x", shapes.STROKE_FONTS["stroke"])


@needs("fonts")  # the share of stroke faces is taken among all the faces
def test_stroke_faces_draw_tile_numerals_but_never_card_indices() -> None:
    from tabletop.studio.synth.shapes import FONTS, STROKE_FONTS

    styles = [random_style(np.random.default_rng(seed)) for seed in range(300)]
    stroked = [s for s in styles if s.font in STROKE_FONTS]
    assert 0.05 < len(stroked) / len(styles) < 0.35
    assert not set(STROKE_FONTS) & set(FONTS)  # decks choose from FONTS
    for style in stroked[:3]:
        assert render_tile("R7", style, 64).image.std() > 10


def test_truetype_faces_serif_and_sans_differ_and_missing_ones_are_named() -> None:
    from tabletop.studio.synth import shapes

    need("fonts")
    serif = shapes.text_mask("K", "serif", 400, 60, 50)
    sans = shapes.text_mask("K", "sans", 400, 60, 50)
    assert float(np.abs(serif - sans).mean()) > 0.05
    bold = shapes.text_mask("K", "serif", 900, 60, 50)
    assert bold.mean() > serif.mean() * 1.2  # the bold file from BOLD_FROM up
    saved = shapes._TRUETYPE_DIRS
    try:
        shapes._TRUETYPE_DIRS = (Path("/nonexistent"),)
        with pytest.raises(ValueError, match="not installed"):
            shapes._glyph_ink.__wrapped__("K", "serif", 400)
    finally:
        shapes._TRUETYPE_DIRS = saved


def _median_side(seed: int, kind: str, of: str) -> float:
    """The median ``of`` box's longer side in a 640x360 ``kind`` scene, over the height."""
    detections = render_scene(seed, 640, 360, kind).detections
    boxes = detections.boxes[np.array([k == of for k in detections.kinds], bool)]
    sides = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    return float(np.median(sides)) / 360 if len(sides) else 0.0


@pytest.mark.parametrize(("kind", "of", "large_side", "close_up_share", "least", "most"), [
    # far tiles only reach 0.19 of the height (0.22 as a rotated box's longer side)
    ("tiles", "tile", 0.24, 0.0, 0, 0),    # a camera over the whole table: tiles stay small
    ("tiles", "tile", 0.24, None, 3, 16),  # the default: about a quarter close up
    ("tiles", "tile", 0.24, 1.0, 16, 32),  # every scene close up
    # far card indices stay under 0.1 of the height
    ("cards", "card", 0.1, 0.0, 0, 0),
    ("cards", "card", 0.1, None, 1, 10),
    ("cards", "card", 0.1, 1.0, 10, 32),
])
def test_close_up_scenes_show_large_items(monkeypatch: pytest.MonkeyPatch, kind: str, of: str,
                                          large_side: float, close_up_share: float | None,
                                          least: int, most: int) -> None:
    import tabletop.studio.synth.scene as scene_module

    if close_up_share is not None:
        monkeypatch.setattr(scene_module, "CLOSE_UP_SHARE", close_up_share)
    # a steep view enlarges what lies nearest the camera, and a grid's upright tiles have
    # shorter boxes than turned ones: distance alone is measured here
    monkeypatch.setattr(scene_module, "STEEP_SHARE", 0.0)
    monkeypatch.setattr(scene_module, "GRID_SHARE", 0.0)
    large = sum(_median_side(seed, kind, of) > large_side for seed in range(32))
    assert least <= large <= most


def test_a_close_up_mixed_scene_shows_tiles_and_cards_close_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import tabletop.studio.synth.scene as scene_module

    # a steep view enlarges what lies nearest the camera: distance alone is measured here
    monkeypatch.setattr(scene_module, "STEEP_SHARE", 0.0)
    far = [(_median_side(seed, "mixed", "tile"), _median_side(seed, "mixed", "card"))
           for seed in range(12)]
    monkeypatch.setattr(scene_module, "CLOSE_UP_SHARE", 1.0)
    near = [(_median_side(seed, "mixed", "tile"), _median_side(seed, "mixed", "card"))
            for seed in range(12)]
    # one camera distance per scene: both kinds grow together
    assert np.median([t for t, _ in near]) > 1.5 * np.median([t for t, _ in far])
    assert np.median([c for _, c in near]) > 1.5 * np.median([c for _, c in far])


def test_card_sizes_do_not_change_how_tile_scenes_render(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import tabletop.studio.synth.scene as scene_module

    before = [render_scene(seed, 320, 180, kind).encoded for seed in range(3)
              for kind in ("tiles", "cards")]
    monkeypatch.setattr(scene_module, "CARD_HEIGHT", (0.3, 0.35))
    monkeypatch.setattr(scene_module, "CLOSE_UP_CARD_HEIGHT", (0.5, 0.55))
    after = [render_scene(seed, 320, 180, kind).encoded for seed in range(3)
             for kind in ("tiles", "cards")]
    assert before[0::2] == after[0::2]  # tile scenes: the same bytes
    assert all(b != a for b, a in zip(before[1::2], after[1::2], strict=True))


def _style(**changes: object) -> object:
    base = random_style(np.random.default_rng(4))
    return dataclasses.replace(base, font="sans", weight=800, digit_stretch=1.0, **changes)


def _ink_columns(mask: np.ndarray) -> np.ndarray:
    return (mask > 0.5).any(axis=0)


@pytest.mark.parametrize(("gap", "squeeze"), [(-0.02, 1.0), (0.0, 1.0), (0.08, 1.0),
                                              (0.16, 1.0), (0.08, 0.62)])
def test_two_digit_numerals_are_set_with_the_styles_gap_and_squeeze(gap: float,
                                                                    squeeze: float) -> None:
    style = _style(digit_gap=gap, pair_squeeze=squeeze)
    mask = numeral_mask("12", style, 60.0, 1000.0)  # type: ignore[arg-type]
    one = numeral_mask("1", style, 60.0, 1000.0)  # type: ignore[arg-type]
    two = numeral_mask("2", style, 60.0, 1000.0)  # type: ignore[arg-type]
    assert mask.shape[0] == 60
    # the width is the two digits' (squeezed only when paired) plus the gap
    expected = (one.shape[1] + two.shape[1]) * squeeze + gap * 60
    assert abs(mask.shape[1] - expected) <= 2
    columns = _ink_columns(mask)
    blank = int((~columns[one.shape[1] // 2 : -two.shape[1] // 2]).sum())
    if gap >= 0.08:
        assert blank >= round(gap * 60 * 0.8)  # a visible space between the digits
    else:
        assert blank <= 1


def test_a_numeral_too_wide_for_its_tile_is_shrunk_to_fit() -> None:
    style = _style(digit_gap=0.16, pair_squeeze=1.0)
    roomy = numeral_mask("13", style, 60.0, 1000.0)  # type: ignore[arg-type]
    tight = numeral_mask("13", style, 60.0, roomy.shape[1] * 0.7)  # type: ignore[arg-type]
    assert tight.shape[0] == 60 and tight.shape[1] <= round(roomy.shape[1] * 0.7) + 1
    # the face's own spacing is kept when the style has no gap of its own
    own = numeral_mask("13", _style(digit_gap=None, pair_squeeze=1.0), 60.0,  # type: ignore[arg-type]
                       1000.0)
    assert not np.array_equal(own.shape, roomy.shape)


def test_every_joker_face_is_drawn_and_unlike_the_others() -> None:
    faces = {}
    for kind in JOKERS:
        style = _style(joker=kind, joker_inks=("R", "K", "O"), digit_gap=None, pair_squeeze=1.0)
        tile = render_tile("JK", style, 120)  # type: ignore[arg-type]
        x1, y1, x2, y2 = (round(v) for v in tile.numeral_box)
        patch = tile.image[y1:y2, x1:x2]
        face = np.asarray(style.face, np.float32)  # type: ignore[attr-defined]
        assert (np.abs(patch - face).max(axis=2) > 40).mean() > 0.05, kind  # ink is there
        faces[kind] = tile.image
    kinds = list(faces)
    for i, a in enumerate(kinds):
        for b in kinds[i + 1 :]:
            assert float(np.abs(faces[a] - faces[b]).mean()) > 3.0, (a, b)


def test_a_lone_zero_in_the_builtin_faces_is_a_ring() -> None:
    from tabletop.studio.synth.shapes import text_mask

    zero = text_mask("0", "sans", 800, 48, 32)
    assert zero[24, 16] < 0.2 and zero[24, :8].max() > 0.8  # hollow middle, inked side


@pytest.mark.parametrize("spread", [0.0, 6.0])
def test_cards_laid_from_a_side_lie_square_to_it(spread: float) -> None:
    from tabletop.studio.synth.scene import square_to_a_side

    rng = np.random.default_rng(5)
    angles = np.array([square_to_a_side(rng, spread) for _ in range(2000)])
    quarter = np.round(angles / 90).astype(int) % 4
    off = np.abs(angles - 90 * np.round(angles / 90))
    assert off.max() <= 5 * spread + 1e-9
    shares = np.bincount(quarter, minlength=4) / len(angles)
    assert shares.min() > 0.15  # every side of the table lays cards
    assert shares[0] == shares.max()  # the camera's own side most often


@pytest.mark.parametrize("slant", [0.3, 0.6, 1.0])
def test_tiles_standing_on_a_rack_are_boxed_by_their_slanted_face_above_the_lip(
        slant: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rack's tiles are seen at a slant: each box is the face above the rack's lip, as
    wide as a tile and as tall as its slant shows it, and its middle shows the tile's ink
    and face, not the rack."""
    from tabletop.studio.synth import scene as scene_module

    monkeypatch.setattr(scene_module, "RACK_FACE_SHARE", (slant, slant))
    rng = np.random.default_rng(7)
    style = random_style(rng)
    plane = scene_module._Plane(np.full((600, 1400, 3), 90.0, np.float32))
    tile_height, tile_width = 80.0, 80.0 * style.aspect
    scene_module._rack(plane, rng, (700.0, 450.0), tile_height, tile_width, style)
    tiles = [entity for entity in plane.entities if entity.kind == "tile"]
    assert len(tiles) >= 3
    for entity in tiles:
        low, high = entity.polygon.min(axis=0), entity.polygon.max(axis=0)
        width, height = high - low
        assert abs(width - tile_width) < 0.12 * tile_width
        # the lip hides at most a quarter of the slanted face
        assert 0.74 * slant * tile_height <= height <= 1.02 * slant * tile_height
        assert plane.visible_share(entity) >= TILE_MIN_VISIBLE
        middle = plane.image[int((low[1] + high[1]) / 2), int((low[0] + high[0]) / 2)]
        assert np.abs(middle - 90.0).max() > 20  # a tile's face, not the bare plane


@pytest.mark.parametrize(("text", "font", "weight"), [
    ("7", "serif", 700),     # a TrueType face, drawn by Pillow from its file
    ("K", "sans", 600),      # a built-in face, drawn by its TrueType stand-in
    ("10", "uni", 800),
    ("Q", "italic", 500),
])
def test_faces_are_drawn_where_opencv_has_no_fontface(monkeypatch: pytest.MonkeyPatch,
                                                      text: str, font: str,
                                                      weight: int) -> None:
    import cv2

    from tabletop.studio.synth import shapes

    shapes._glyph_ink.cache_clear()
    shapes._ink.cache_clear()
    with_opencv = shapes._ink(text, font, weight)
    monkeypatch.delattr(cv2, "FontFace")
    shapes._glyph_ink.cache_clear()
    shapes._ink.cache_clear()
    try:
        with_pillow = shapes._ink(text, font, weight)
    finally:
        shapes._glyph_ink.cache_clear()
        shapes._ink.cache_clear()
    assert with_pillow.dtype == np.uint8 and with_pillow.max() > 200

    def overlap(ink: np.ndarray, other: np.ndarray) -> float:
        resized = cv2.resize(other, ink.shape[::-1], interpolation=cv2.INTER_AREA)
        a, b = ink > 128, resized > 128
        return float((a & b).sum() / (a | b).sum())

    # the very glyph from the same file; from a stand-in face, the same character:
    # closer to OpenCV's drawing of it than to OpenCV's drawing of any other
    if font == "serif":
        assert overlap(with_opencv, with_pillow) > 0.9
    others = [t for t in ("7", "K", "A", "J", "Q", "4", "10", "2") if t != text]
    monkeypatch.undo()
    try:
        drawn = {t: shapes._ink(t, font, weight) for t in others}
    finally:
        shapes._glyph_ink.cache_clear()
        shapes._ink.cache_clear()
    own = overlap(with_opencv, with_pillow)
    assert all(own > overlap(ink, with_pillow) for ink in drawn.values()), (
        own, {t: round(overlap(ink, with_pillow), 3) for t, ink in drawn.items()})


def _size_follows_x(seed: int, options: RenderOptions) -> bool | None:
    """Whether tile sizes in a steep tile scene change more across the picture than up and
    down it (the far side at a flank, not at the top); None with too few tiles to tell."""
    detections = render_scene(seed, 640, 360, "tiles", options).detections
    boxes = detections.boxes[np.array([k == "tile" for k in detections.kinds], bool)]
    if len(boxes) < 5:
        return None
    size = np.sqrt((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))
    x, y = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    return bool(abs(np.corrcoef(x, size)[0, 1]) > abs(np.corrcoef(y, size)[0, 1]))


@pytest.mark.parametrize(("side_views", "least", "most"), [(False, 0, 2), (True, 9, 12)])
def test_steep_scenes_seen_from_the_side_shrink_items_towards_a_flank(
        monkeypatch: pytest.MonkeyPatch, side_views: bool, least: int, most: int) -> None:
    import tabletop.studio.synth.scene as scene_module

    monkeypatch.setattr(scene_module, "STEEP_SHARE", 1.0)
    monkeypatch.setattr(scene_module, "SIDE_SHARE", 1.0)
    options = RenderOptions(side_views=side_views, tile_grids=False)
    told = [_size_follows_x(seed, options) for seed in range(12)]
    assert least <= sum(t is True for t in told) <= most
    assert sum(t is None for t in told) <= 2


@pytest.mark.parametrize("side_views", [False, True])
def test_a_steep_view_from_any_side_keeps_the_pictures_size_and_tiles_upright(
        monkeypatch: pytest.MonkeyPatch, side_views: bool) -> None:
    """Seen from a flank the view is turned, not the table: most tiles point up the
    picture, as from the near side (melds lie square to the table more often than not)."""
    import tabletop.studio.synth.scene as scene_module

    monkeypatch.setattr(scene_module, "STEEP_SHARE", 1.0)
    monkeypatch.setattr(scene_module, "SIDE_SHARE", 1.0)
    scenes = [render_scene(seed, 640, 360, "tiles", RenderOptions(side_views=side_views))
              for seed in range(12)]
    assert all(scene.image.shape == (360, 640, 3) for scene in scenes)
    ups = np.array([item.up for scene in scenes for item in scene.items if item.up is not None])
    assert len(ups) > 200
    assert np.mean(ups[:, 1] < -0.7) > 0.6
    assert np.mean(ups[:, 1] > 0.7) < 0.15


def _stacked_tiles(seed: int, options: RenderOptions) -> int:
    """Tiles with another tile's box just below their own, about a tile's height down."""
    detections = render_scene(seed, 640, 360, "tiles", options).detections
    boxes = detections.boxes[np.array([k == "tile" for k in detections.kinds], bool)]
    x, y = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    w, h = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    dx, dy = x[None, :] - x[:, None], y[None, :] - y[:, None]
    below = (np.abs(dx) < 0.3 * w[:, None]) & (dy > 0.85 * h[:, None]) & (dy < 1.3 * h[:, None])
    return int(below.any(axis=1).sum())


def test_tile_grids_lay_rows_close_above_one_another(monkeypatch: pytest.MonkeyPatch) -> None:
    import tabletop.studio.synth.scene as scene_module

    monkeypatch.setattr(scene_module, "GRID_SHARE", 1.0)
    monkeypatch.setattr(scene_module, "STEEP_SHARE", 0.0)
    with_grids = sum(_stacked_tiles(seed, RenderOptions()) for seed in range(8))
    without = sum(_stacked_tiles(seed, RenderOptions(tile_grids=False)) for seed in range(8))
    assert with_grids >= 3 * max(without, 5)
