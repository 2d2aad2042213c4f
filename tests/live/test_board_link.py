"""The scoring board on the game's bus, with the real firmware in simavr.

A scripted Sabra game runs through live.game.Game; the board must light the
seat whose turn it is (read from the emulated pins), raise the warning LED on
the failed rearrangement, show the round over, and a press of END on the
emulated board must end the turn in the game.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tabletop.device.driver import Board
from tabletop.device.emulator import EmulatedBoard, wait_until
from tabletop.engine.events import event_from_json
from tabletop.engine.scenario import Press
from tabletop.live.board_link import BoardLink
from tabletop.live.bus import EventBus
from tabletop.live.game import Game
from tabletop.live.scenario import apply_step, game_options, load_scenario
from tests.shared import SCENARIOS

pytestmark = pytest.mark.usefixtures("emulator_built")


@pytest.fixture
def board() -> Iterator[tuple[EmulatedBoard, Board]]:
    with EmulatedBoard() as emulated, Board(str(emulated.link)) as host:
        host.wait_connected(5)
        yield emulated, host


def test_board_follows_the_game_and_its_buttons_drive_it(
    board: tuple[EmulatedBoard, Board],
) -> None:
    emulated, host = board
    scenario = load_scenario(SCENARIOS / "sabra.json")
    bus = EventBus()
    link = BoardLink(host, bus, scenario.players)
    game = Game(scenario.variant, scenario.players, bus, options=game_options(scenario))
    game.start(0.0)
    # the first player's turn: seat 0 lit
    assert wait_until(lambda: emulated.lit_seats() == [0], 3)

    steps = list(scenario.steps)
    first_press = next(i for i, s in enumerate(steps) if isinstance(s, Press))
    for step in steps[:first_press]:
        apply_step(game, step)
    # END pressed on the board instead of the scripted press: the game moves to seat 1
    emulated.press("END")
    assert wait_until(lambda: link.apply_pending(game) > 0 or game.seat != 0, 3)
    assert game.seat == 1
    assert wait_until(lambda: emulated.lit_seats() == [1], 3)

    # the rest of the script, as the panel or the board would drive it
    warned = False
    for step in steps[first_press + 1 :]:
        apply_step(game, step)
        warned = warned or link.state.warning
    assert warned, "the failed rearrangement raised the warning"
    assert wait_until(lambda: emulated.lit_flags()["round_over"], 3)
    assert link.state.scores == tuple(scenario.scores[-1][name] for name in scenario.players)
    link.close()


def test_turn_timer_counts_down_on_the_display(board: tuple[EmulatedBoard, Board]) -> None:
    # [sabra] "wird ein Spielzug üblicherweise zeitlich begrenzt, zum Beispiel auf zwei Minuten"
    emulated, host = board
    bus = EventBus()
    link = BoardLink(host, bus, ("Ana", "Ben"), turn_seconds=120)
    bus.publish(event_from_json({"seq": 1, "t": 10.0, "type": "turn_started", "seat": 1,
                                 "round": 1, "turn": 1}))
    assert emulated.wait_display(" 120", 3), emulated.display()
    link.tick(10.0 + 45.2)
    assert emulated.wait_display("  75", 3), emulated.display()  # 74.8 s left
    link.tick(10.0 + 500)
    assert emulated.wait_display("   0", 3), emulated.display()
    assert emulated.lit_seats() == [1]
    link.close()


def test_a_paused_timer_stands_still_on_the_display(board: tuple[EmulatedBoard, Board]) -> None:
    emulated, host = board
    bus = EventBus()
    link = BoardLink(host, bus, ("Ana", "Ben"), turn_seconds=120)
    bus.publish(event_from_json({"seq": 1, "t": 10.0, "type": "turn_started", "seat": 0,
                                 "round": 1, "turn": 1}))
    link.tick(30.0)
    assert emulated.wait_display(" 100", 3), emulated.display()
    bus.publish(event_from_json({"seq": 2, "t": 30.0, "type": "timer_paused", "seat": 0}))
    link.tick(90.0)  # a minute of pondering, paused on the panel
    assert emulated.wait_display(" 100", 3), emulated.display()
    bus.publish(event_from_json({"seq": 3, "t": 90.0, "type": "timer_resumed", "seat": 0}))
    link.tick(100.0)
    assert emulated.wait_display("  90", 3), emulated.display()
    link.close()
