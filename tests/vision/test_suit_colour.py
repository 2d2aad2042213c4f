"""A card index's suit colour judged by its ink (vision.suit_colour)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tabletop.vision.labels import class_id
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES
from tabletop.vision.suit_colour import (
    BLACK,
    OTHER_COLOUR_WEIGHT,
    RED,
    UNDECIDED,
    judge_suit_colours,
    suit_inks,
    weigh_spades,
)
from tests.shared import needs

PAPER = (244, 246, 247)


def index_card(ink: tuple[int, int, int], index_px: int = 26) -> tuple[np.ndarray, list[float]]:
    """A card corner with a rank over a suit blob in ``ink`` (BGR), and the index's box."""
    image = np.full((120, 120, 3), PAPER, np.uint8)
    x, y, w = 40, 40, index_px * 0.55
    cv2.putText(image, "K", (x, y + int(index_px * 0.55)), cv2.FONT_HERSHEY_SIMPLEX,
                index_px / 45, ink, max(1, index_px // 12), cv2.LINE_AA)
    cv2.circle(image, (x + int(w / 2), y + int(index_px * 0.8)), max(2, index_px // 7), ink, -1)
    image = cv2.GaussianBlur(image, (3, 3), 0.7)
    return image, [x - 3, y - 2, x + w + 4, y + index_px + 2]


@pytest.mark.parametrize(("ink", "expected"), [
    ((40, 30, 200), RED),        # the rendered decks' red
    ((45, 40, 120), RED),        # a dark, dim red, as real decks photograph
    ((30, 90, 220), RED),        # an orange-red (some four-colour decks' diamonds)
    ((30, 28, 28), BLACK),
    ((60, 60, 60), BLACK),       # a worn black
    ((170, 80, 20), UNDECIDED),  # a four-colour deck's blue diamonds
    ((40, 140, 30), UNDECIDED),  # its green clubs
    ((200, 200, 200), UNDECIDED),  # too faint to be ink
])
def test_an_index_s_ink_says_its_suit_colour(ink: tuple[int, int, int], expected: int) -> None:
    image, box = index_card(ink)
    assert suit_inks(image, [box]).tolist() == [expected]


@pytest.mark.parametrize("index_px", [16, 20, 40, 80])
def test_the_colour_is_judged_at_every_index_size(index_px: int) -> None:
    red, red_box = index_card((45, 40, 150), index_px)
    black, black_box = index_card((30, 30, 30), index_px)
    assert suit_inks(red, [red_box]).tolist() == [RED]
    assert suit_inks(black, [black_box]).tolist() == [BLACK]


def column(label: str) -> int:
    return NONE_INDEX if label == "none" else class_id(label, "card")


def reading(**chances: float) -> np.ndarray:
    row = np.zeros(len(READER_CLASSES))
    for label, chance in chances.items():
        row[column(label)] = chance
    return row / row.sum()


@pytest.mark.parametrize(("ink", "chances", "read"), [
    # a heart taken for a club by the reader, its ink red: the heart
    (RED, {"KC": 0.85, "KH": 0.1, "none": 0.05}, "KH"),
    # the ink black: the club stays, surer
    (BLACK, {"KC": 0.85, "KH": 0.1, "none": 0.05}, "KC"),
    # undecided ink: as the reader read it
    (UNDECIDED, {"KC": 0.85, "KH": 0.1, "none": 0.05}, "KC"),
    # a reader sure by more than twenty to one keeps its reading against the ink
    (RED, {"KC": 0.97, "KH": 0.02, "none": 0.01}, "KC"),
    # nothing of the right colour read: the row is renormalised, not emptied
    (RED, {"KC": 0.9, "none": 0.1}, "none"),
])
def test_the_ink_scales_down_the_other_colour(ink: int, chances: dict[str, float],
                                              read: str) -> None:
    row = reading(**chances)
    judged = judge_suit_colours(row[None], np.array([ink], np.int8))[0]
    assert judged.sum() == pytest.approx(1.0)
    assert int(judged.argmax()) == column(read)
    if ink == UNDECIDED:
        assert np.allclose(judged, row)


def test_jokers_and_none_keep_their_share() -> None:
    row = reading(JK=0.5, KC=0.3, none=0.2)
    judged = judge_suit_colours(row[None], np.array([RED], np.int8))[0]
    joker, none, club = column("JK"), column("none"), column("KC")
    total = 0.5 + 0.2 + 0.3 * OTHER_COLOUR_WEIGHT
    assert judged[joker] == pytest.approx(0.5 / total)
    assert judged[none] == pytest.approx(0.2 / total)
    assert judged[club] == pytest.approx(0.3 * OTHER_COLOUR_WEIGHT / total)


@needs("fonts")  # the scenes' decks are drawn from the installed faces
def test_rendered_indices_inks_agree_with_their_suits() -> None:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    decided = wrong = total = 0
    for index in range(12):
        scene = render_scene(image_seed(52913, index), 1280, 720, "cards")
        image = cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR)
        cards = [i for i, kind in enumerate(scene.detections.kinds) if kind == "card"
                 and scene.detections.labels[i] != "JK"]
        inks = suit_inks(image, scene.detections.boxes[cards])
        truth = np.array([RED if scene.detections.labels[i][-1] in "HD" else BLACK
                          for i in cards])
        total += len(cards)
        decided += int((inks != UNDECIDED).sum())
        wrong += int(((inks != UNDECIDED) & (inks != truth)).sum())
    assert total > 100
    # most indices decided, and a wrong decision rare: each costs a card the reader had right
    assert decided >= 0.6 * total, (decided, total)
    assert wrong <= 0.02 * decided, (wrong, decided)


@needs("fonts")
def test_the_detector_judges_card_rows_by_their_ink_and_leaves_tiles_alone() -> None:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene
    from tabletop.vision.detector import Detector, DetectorSettings

    scene = render_scene(image_seed(52917, 3), 1280, 720, "mixed")
    image = cv2.imdecode(np.frombuffer(scene.encoded, np.uint8), cv2.IMREAD_COLOR)
    truth = scene.detections
    cards = np.array([kind == "card" for kind in truth.kinds])
    assert cards.any() and (~cards).any()
    judged = Detector(settings=DetectorSettings(suit_colour="on")).probabilities(image, truth)
    plain = Detector(settings=DetectorSettings(suit_colour="off")).probabilities(image, truth)
    inks = suit_inks(image, truth.boxes[cards])
    assert (inks != UNDECIDED).any()
    assert np.allclose(judged[~cards], plain[~cards])
    assert np.allclose(judged[cards], judge_suit_colours(plain[cards], inks))


@pytest.mark.parametrize(("spade", "club", "odds", "spade_after", "club_after"), [
    (0.2, 0.6, 3.0, 0.4, 0.4),
    (0.1, 0.7, 1.0, 0.1, 0.7),
    (0.0, 0.8, 3.0, 0.0, 0.8),
    (0.3, 0.3, 0.5, 0.2, 0.4),
])
def test_spade_odds_share_out_the_rank_s_black_suits_alone(
        spade: float, club: float, odds: float, spade_after: float, club_after: float) -> None:
    spade_at = class_id("7S", "card")
    club_at = class_id("7C", "card")
    heart_at = class_id("7H", "card")
    row = np.zeros((1, len(READER_CLASSES)))
    row[0, spade_at], row[0, club_at] = spade, club
    row[0, heart_at] = 1.0 - spade - club
    weighed = weigh_spades(row, odds)
    assert weighed[0, spade_at] == pytest.approx(spade_after)
    assert weighed[0, club_at] == pytest.approx(club_after)
    assert weighed[0, heart_at] == pytest.approx(1.0 - spade - club)
    assert weighed.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("odds", [0.1, 9.0, float("nan")])
def test_spade_odds_out_of_range_are_refused(odds: float) -> None:
    from tabletop.vision.detector import DetectorSettings
    with pytest.raises(ValueError, match="spade odds must be between"):
        DetectorSettings(spade_odds=odds)
