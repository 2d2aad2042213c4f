"""The table's palette (vision.palette): inks measured on rendered tiles of known inks, groups
and their names, and the reader's probabilities changed only where the table says so."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from tabletop.studio.synth.tiles import TileStyle, random_style, render_tile
from tabletop.vision.labels import TILE_COLOURS
from tabletop.vision.palette import (
    SET_MISREAD_SHARE,
    SetInks,
    TablePalette,
    colour_marginals,
    group_inks,
    ink_features,
    name_groups,
)
from tabletop.vision.reader import READER_CLASSES

# BGR inks: a red-orange close to the red, as some modern sets print it
RED_ORANGE_SET = {"K": (30.0, 30.0, 30.0), "B": (170.0, 80.0, 20.0),
                  "O": (20.0, 95.0, 235.0), "R": (40.0, 30.0, 190.0)}
TEAL_SET = {"K": (40.0, 60.0, 50.0), "B": (150.0, 140.0, 20.0),
            "O": (30.0, 200.0, 235.0), "R": (120.0, 40.0, 200.0)}


def tile_style(inks: dict[str, tuple[float, float, float]]) -> TileStyle:
    style = random_style(np.random.default_rng(3))
    return dataclasses.replace(style, inks=tuple(sorted(inks.items())), hollow=False,
                               face=(215.0, 232.0, 240.0))


def table(labels: list[str], inks: dict[str, tuple[float, float, float]], height: int = 90
          ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]:
    """The tiles laid in a row on a wooden-brown table, and their boxes."""
    style = tile_style(inks)
    rendered = [render_tile(label, style, height) for label in labels]
    width = sum(r.image.shape[1] + 12 for r in rendered) + 12
    image = np.full((height + 24, width, 3), (40, 80, 130), np.uint8)
    boxes, x = [], 12
    for tile in rendered:
        h, w = tile.image.shape[:2]
        alpha = tile.alpha[..., None]
        patch = image[12:12 + h, x:x + w].astype(np.float32)
        image[12:12 + h, x:x + w] = np.clip(tile.image * alpha + patch * (1 - alpha), 0, 255)
        boxes.append([x, 12, x + w, 12 + h])
        x += w + 12
    return image, np.array(boxes, np.float64)


def reading(labels: list[str], sure: float = 0.9) -> npt.NDArray[np.float64]:
    """Reader rows over READER_CLASSES giving each label ``sure``, the rest spread evenly
    over the other tile labels."""
    rows = np.full((len(labels), len(READER_CLASSES)), 0.0)
    tile_classes = len(TILE_COLOURS) * 13 + 1
    rows[:, :tile_classes] = (1 - sure) / (tile_classes - 1)
    for row, label in zip(rows, labels, strict=True):
        row[READER_CLASSES.index(label)] = sure
    return rows


ROW = ["K3", "K9", "R4", "R5", "R6", "O4", "O5", "O6", "B7", "B8"]


@pytest.mark.parametrize("inks", [RED_ORANGE_SET, TEAL_SET], ids=["red-orange", "teal"])
def test_each_colour_s_inks_lie_together_and_apart_from_the_others(
        inks: dict[str, tuple[float, float, float]]) -> None:
    image, boxes = table(ROW, inks)
    features, measured = ink_features(image, boxes)
    assert measured.all()
    groups = group_inks(features)
    colour_of_group = {}
    for label, group in zip(ROW, groups, strict=True):
        assert colour_of_group.setdefault(label[0], group) == group
    assert len(set(colour_of_group.values())) == 4


@pytest.mark.parametrize("cast", [(0.75, 0.95, 1.1), (1.1, 1.0, 0.8), (0.6, 0.6, 0.6)],
                         ids=["warm lamp", "cool daylight", "dim"])
def test_a_light_over_the_whole_table_changes_no_colour(cast: tuple[float, float, float]
                                                         ) -> None:
    image, boxes = table(ROW, RED_ORANGE_SET)
    lit = np.clip(image.astype(np.float32) * np.array(cast), 0, 255).astype(np.uint8)
    read = reading([label.replace("O", "R") for label in ROW])
    changed = TablePalette().update(lit, boxes, read)
    assert [READER_CLASSES[i] for i in changed.argmax(axis=1)] == ROW


@pytest.mark.parametrize(("label", "box"), [
    ("a face-down tile", None),
    ("a box on the bare table", [300.0, 0.0, 360.0, 20.0]),
])
def test_no_ink_is_measured_where_nothing_is_printed(label: str, box: list[float] | None
                                                     ) -> None:
    image, boxes = table(["", "R5"], RED_ORANGE_SET)
    where = boxes[0] if box is None else np.array(box)
    _features, measured = ink_features(image, where[None])
    assert not measured[0]


def test_a_red_orange_read_as_red_is_renamed_orange() -> None:
    image, boxes = table(ROW, RED_ORANGE_SET)
    # the reader takes the set's orange for red, as it did a real modern set
    read = reading([label.replace("O", "R") for label in ROW])
    changed = TablePalette().update(image, boxes, read)
    names = [READER_CLASSES[i] for i in changed.argmax(axis=1)]
    assert names == ROW
    # the numbers the reader read are kept, and the tiles' total mass too
    assert changed[:, :53].sum(axis=1) == pytest.approx(read[:, :53].sum(axis=1))


def test_a_table_the_reader_reads_consistently_is_left_alone() -> None:
    image, boxes = table(ROW, TEAL_SET)
    read = reading(ROW, sure=0.7)
    assert np.array_equal(TablePalette().update(image, boxes, read), read)


@pytest.mark.parametrize(("labels", "why"), [
    (["R4", "R5", "O6", "K7", "B8"], "too few tiles"),
    (["R4", "R5", "R6", "R7", "R8", "R9"], "one ink"),
])
def test_small_or_one_ink_tables_are_left_as_read(labels: list[str], why: str) -> None:
    image, boxes = table(labels, RED_ORANGE_SET)
    read = reading([label.replace("O", "R") for label in labels])
    assert np.array_equal(TablePalette().update(image, boxes, read), read)


def test_card_rows_are_never_touched() -> None:
    image, boxes = table(ROW, RED_ORANGE_SET)
    read = reading([label.replace("O", "R") for label in ROW])
    tiles = np.array([i % 2 == 0 for i in range(len(ROW))])
    changed = TablePalette(min_tiles=3).update(image, boxes, read, tiles)
    assert np.array_equal(changed[~tiles], read[~tiles])


def test_a_stray_tile_keeps_the_reader_s_colour() -> None:
    # two groups read red: a group of one is not renamed
    groups = np.array([0, 0, 0, 1, 2, 2])
    colours = np.full((6, 4), 0.02)
    colours[:3, 3] = colours[3, 3] = 0.94
    colours[4:, 0] = 0.94
    assert name_groups(groups, colours).tolist() == [3, 3, 0]


def test_colour_marginals_leave_out_jokers_and_none() -> None:
    rows = reading(["R5"], sure=0.5)
    rows[0, READER_CLASSES.index("JK")] = 0.3
    rows[0, -1] = 0.2
    assert colour_marginals(rows).sum() == pytest.approx(1.0)
    assert colour_marginals(rows)[0].argmax() == TILE_COLOURS.index("R")


def test_grey_image_has_no_ink() -> None:
    grey = np.full((100, 100, 3), 128, np.uint8)
    cv2.circle(grey, (50, 50), 3, (120, 120, 120), -1)
    _features, measured = ink_features(grey, np.array([[10.0, 10.0, 90.0, 90.0]]))
    assert not measured.any()


# --- the set's own inks ------------------------------------------------------------------
LAYOUT = [f"{colour}{number}" for colour in TILE_COLOURS for number in (2, 5, 8, 11)]


def _set_inks(read_as: list[str] | None) -> SetInks:
    """The red-orange set's inks from a row of its tiles, the reader having named their
    colours ``read_as``."""
    image, boxes = table(LAYOUT, RED_ORANGE_SET)
    features, measured = ink_features(image, boxes)
    assert measured.all()
    return SetInks.fit(features, [label[0] for label in LAYOUT], read_as)


@pytest.mark.parametrize(("read_as", "misread", "renamed"), [
    # a file that does not say how the reader read the set: the inks judge every tile
    (None, None, True),
    # the reader read every ink of the layout right: the inks judge nothing
    ([label[0] for label in LAYOUT], (0.0, 0.0, 0.0, 0.0), False),
    # it read one orange of four as red, or two: the head can mend that, the inks stay out
    (["R" if label == "O2" else label[0] for label in LAYOUT], (0.0, 0.0, 0.25, 0.0), False),
    (["R" if label in ("O2", "O5") else label[0] for label in LAYOUT],
     (0.0, 0.0, 0.5, 0.0), False),
    # three of four: the inks judge the oranges
    (["R" if label in ("O2", "O5", "O8") else label[0] for label in LAYOUT],
     (0.0, 0.0, 0.75, 0.0), True),
    # it misread the reds, not the oranges: the tiles the inks place in orange stay
    (["O" if label != "R2" and label[0] == "R" else label[0] for label in LAYOUT],
     (0.0, 0.0, 0.0, 0.75), False),
])
def test_the_set_s_inks_judge_the_colours_the_reader_misread_on_its_layout(
        read_as: list[str] | None, misread: tuple[float, ...] | None, renamed: bool) -> None:
    inks = _set_inks(read_as)
    assert inks.misread == misread
    assert SetInks.from_json(inks.to_json()).misread == misread
    # three tiles, too few for the table's own palette: only the set's inks can say
    labels = ["O4", "K9", "B7"]
    image, boxes = table(labels, RED_ORANGE_SET)
    read = reading(["R4", "K9", "B7"])
    changed = TablePalette(set_inks=inks).update(image, boxes, read)
    names = [READER_CLASSES[i] for i in changed.argmax(axis=1)]
    assert names == (labels if renamed else ["R4", "K9", "B7"])


def test_the_inks_judge_a_colour_misread_at_their_share_or_more() -> None:
    inks = dataclasses.replace(_set_inks(None),
                               misread=(SET_MISREAD_SHARE - 0.01, 0.0, SET_MISREAD_SHARE, 1.0))
    assert inks.judged.tolist() == [False, False, True, True]


def test_the_colours_read_must_match_the_tiles() -> None:
    image, boxes = table(LAYOUT, RED_ORANGE_SET)
    features, _ = ink_features(image, boxes)
    with pytest.raises(ValueError, match="3 colours read for 16 tiles"):
        SetInks.fit(features, [label[0] for label in LAYOUT], ["K", "B", "O"])
