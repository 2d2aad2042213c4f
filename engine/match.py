"""A match (Partie) of several rounds: running totals, its end and its winner.

A :class:`Match` takes finished rounds as :class:`tabletop.engine.rounds.RoundResult`
(points gained, higher is better; penalty games negative) and keeps the
match-level rules of each variant:

* ``remi``, ``sabra``, ``rummikub-american``, ``rummikub-international``:
  totals over rounds; the players agree on a number of rounds or a target
  ([remi] "nach einer bestimmten Anzahl von Spielen ... oder ... eine bestimmte
  Punktzahl").  International also settles: each pays each the difference.
* ``rum500``: play on until someone reaches the option ``target`` (500); the
  highest total wins, a tie at the top means more hands; option
  ``must_go_out``: only the player who went out can win, with the target.
* ``american-rummy``: the points a winner collects are written down
  (``RoundResult.extras["collected"]``); the match ends as soon as someone has
  written the option ``target`` (100) or more.
* ``rommee``, ``raeuber``: penalty points; the text sets no end, so a number
  of rounds or a penalty limit (the match ends when someone reaches it) is
  agreed; the fewest penalty points win.
* ``wiener``: penalty points, elimination at option ``elimination`` (101),
  one buy-back per player from option ``buy_back_from`` (81), a pot of chips
  for the last player in, and Klopfgeld.

The match is a replay of its events (rounds and buy-backs), so
:meth:`Match.undo` restores exactly the state before the last event.

Seats are in clockwise order: the seat after ``i`` is the one to the left of
``i``.  The deal (or, in the Rummikub games, the first turn) passes to the
next seat in ``variant.deal_direction`` (+1 left, -1 right), skipping
players who are out of the match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tabletop.engine.base import RoundResult, Variant


class MatchError(ValueError):
    """A round or action that does not fit the match (unknown player, match over, ...)."""


@dataclass(frozen=True)
class PlayedRound:
    """Event: one finished round."""

    result: RoundResult


@dataclass(frozen=True)
class BuyBack:
    """Event: a Wiener player buys back into the pot ([wiener] "zurückkaufen")."""

    player: str


MatchEvent = PlayedRound | BuyBack


@dataclass(frozen=True)
class MatchEntry:
    """One line of the score sheet: an event and the state right after it."""

    event: MatchEvent
    round_number: int | None
    """1, 2, ... for rounds; None for a buy-back."""
    dealer: str | None
    """Who dealt (or, in the Rummikub games, began) this round; None for a buy-back."""
    changes: dict[str, int]
    """What the event added to each player's total (a buy-back: a negative penalty change)."""
    totals: dict[str, int]
    eliminated: tuple[str, ...]
    """Players this event put out of the match."""
    chips: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "round" if isinstance(self.event, PlayedRound) else "buy_back",
            "round": self.round_number,
            "dealer": self.dealer,
            "changes": dict(self.changes),
            "totals": dict(self.totals),
            "eliminated": list(self.eliminated),
            "chips": dict(self.chips),
        }
        if isinstance(self.event, PlayedRound):
            data["winner"] = self.event.result.winner
            data["scores"] = dict(self.event.result.scores)
        else:
            data["player"] = self.event.player
        return data


@dataclass
class _State:
    """Everything derived from the events; rebuilt by replaying them."""

    totals: dict[str, int]
    chips: dict[str, int]
    pot: int
    dealer: int
    rounds: int = 0
    eliminated: dict[str, int] = field(default_factory=dict)
    """Player -> number of the round that put them out (their order of leaving)."""
    bought_back: set[str] = field(default_factory=set)
    over: bool = False
    winner: str | None = None
    entries: list[MatchEntry] = field(default_factory=list)

    def copy(self) -> _State:
        return _State(
            dict(self.totals),
            dict(self.chips),
            self.pot,
            self.dealer,
            self.rounds,
            dict(self.eliminated),
            set(self.bought_back),
            self.over,
            self.winner,
            list(self.entries),
        )


@dataclass
class Match:
    """A match of ``variant`` between ``players`` (seats in clockwise order).

    ``rounds_limit``: the match ends after that many rounds.  ``target``: it
    ends when someone reaches that many points (for penalty games: that many
    penalty points, and the fewest win).  Both may be set; the first to come
    ends the match.  For ``rum500`` and ``american-rummy`` the target is the
    variant option ``target``; for ``wiener`` the end is elimination, set by
    the options ``elimination`` and ``buy_back_from``.

    ``dealer`` is the seat of the first round's dealer (in the Rummikub
    games, the player who begins); :attr:`current_dealer` is the next round's.

    Ties: where a target ends the match, a tie for first place means more
    rounds are played ([rum500] "Bei einem Unentschieden werden weitere Hände
    gespielt"; applied to every target, as a demanding player would).  Where a
    rounds limit ends it, a tie for first is a draw (``winner`` is None,
    :meth:`leaders` names the tied players).
    """

    variant: Variant
    players: tuple[str, ...]
    rounds_limit: int | None = None
    target: int | None = None
    dealer: int = 0
    _events: list[MatchEvent] = field(default_factory=list, init=False, repr=False)
    _state: _State = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.players = tuple(self.players)
        if len(self.players) < 2:
            raise MatchError(f"a match needs at least two players, not {list(self.players)}")
        for name in self.players:
            if not isinstance(name, str) or not name.strip():
                raise MatchError(f"a player needs a name, not {name!r}")
        if len(set(self.players)) != len(self.players):
            raise MatchError(f"player names must differ: {list(self.players)}")
        if not 0 <= self.dealer < len(self.players):
            raise MatchError(f"dealer {self.dealer!r} is not a seat (0..{len(self.players) - 1})")
        for label, value in (("rounds_limit", self.rounds_limit), ("target", self.target)):
            whole = isinstance(value, int) and not isinstance(value, bool)
            if value is not None and (not whole or value < 1):
                raise MatchError(f"{label} must be a whole number of at least 1, not {value!r}")
        vid = self.variant.id
        rules = self.variant.match_rules
        if rules.ends_by_elimination and (
            self.rounds_limit is not None or self.target is not None
        ):
            raise MatchError(
                f"a {vid} match ends by elimination; set the options elimination and"
                " buy_back_from instead of rounds_limit or target"
            )
        if rules.target is not None and self.target is not None and self.target != rules.target:
            raise MatchError(
                f"the {vid} target is the variant option target={rules.target};"
                f" pass the option target={self.target} instead"
            )
        self._state = self._initial_state()

    # --- public state ----------------------------------------------------
    @property
    def totals(self) -> dict[str, int]:
        """Running totals per player, higher is better (penalty games: negative).

        For ``american-rummy`` the points written down (collected)."""
        return dict(self._state.totals)

    @property
    def penalty_totals(self) -> dict[str, int]:
        """Penalty points (Schlechtpunkte), positive; empty for games that score points."""
        if not self.variant.penalty_scoring:
            return {}
        return {name: -total for name, total in self._state.totals.items()}

    @property
    def over(self) -> bool:
        return self._state.over

    @property
    def winner(self) -> str | None:
        return self._state.winner

    @property
    def eliminated(self) -> set[str]:
        return set(self._state.eliminated)

    @property
    def active_players(self) -> tuple[str, ...]:
        """Players still in the match, in seat order."""
        return tuple(p for p in self.players if p not in self._state.eliminated)

    @property
    def chips(self) -> dict[str, int]:
        """Wiener: each player's chips won (+) or paid (-), stakes and Klopfgeld included."""
        return dict(self._state.chips)

    @property
    def pot(self) -> int:
        """Wiener: chips in the pot (paid out to the winner at the end)."""
        return self._state.pot

    @property
    def bought_back(self) -> set[str]:
        return set(self._state.bought_back)

    @property
    def rounds_played(self) -> int:
        return self._state.rounds

    @property
    def current_dealer(self) -> int:
        """Seat of the next round's dealer (in the Rummikub games, the player who begins)."""
        return self._state.dealer

    @property
    def dealer_name(self) -> str:
        return self.players[self._state.dealer]

    @property
    def history(self) -> list[MatchEntry]:
        return list(self._state.entries)

    @property
    def events(self) -> tuple[MatchEvent, ...]:
        return tuple(self._events)

    @property
    def match_target(self) -> int | None:
        """The target in force: the variant's own (rum500, american-rummy), else ``target``."""
        own = self.variant.match_rules.target
        return own if own is not None else self.target

    def standings(self) -> list[tuple[str, int]]:
        """(player, total), best first.

        Players still in come before those out; those out later rank above
        those out earlier.  Equal totals keep seat order."""
        state = self._state
        seat = {name: index for index, name in enumerate(self.players)}

        def key(name: str) -> tuple[int, int, int]:
            out_round = state.eliminated.get(name)
            leaving = -out_round if out_round is not None else -(10**9)
            return (leaving, -state.totals[name], seat[name])

        ordered = sorted(self.players, key=key)
        if state.winner is not None:
            ordered.remove(state.winner)
            ordered.insert(0, state.winner)
        return [(name, state.totals[name]) for name in ordered]

    def leaders(self) -> tuple[str, ...]:
        """The players sharing the best total among those still in."""
        return _best(self.active_players, self._state.totals)

    def settlement(self) -> list[tuple[str, str, int]]:
        """(payer, payee, amount): each player pays each better player the difference.

        [international] "zahlt jeder Spieler den anderen Spielern eine Summe,
        die sich aus dem Verhältnis der Differenz zwischen ihren Punktzahlen
        errechnet" -- one point, one unit.  Usable for any variant."""
        totals = self._state.totals
        payments = []
        for i, payer in enumerate(self.players):
            for payee in self.players[i + 1 :] + self.players[:i]:
                difference = totals[payee] - totals[payer]
                if difference > 0:
                    payments.append((payer, payee, difference))
        return payments

    def net_settlement(self) -> dict[str, int]:
        """What each player wins (+) or pays (-) in all under :meth:`settlement`."""
        net = {name: 0 for name in self.players}
        for payer, payee, amount in self.settlement():
            net[payer] -= amount
            net[payee] += amount
        return net

    # --- events ------------------------------------------------------------
    def record(self, result: RoundResult) -> None:
        """Add a finished round; raises MatchError (nothing changes) if it does not fit."""
        self._push(PlayedRound(result))

    def buy_back(self, player: str) -> None:
        """Wiener: ``player`` pays five chips into the pot and takes the second-worst count.

        [wiener] "Hat ein Spieler bereits 81 oder mehr aber noch nicht 101
        Schlechtpunkte ..., so darf er sich gegen Bezahlung eines zusätzlichen
        Einsatzes von fünf Chips in den Pot zurückkaufen und seine Zahl von
        Schlechtpunkten auf die Anzahl des zweitschlechtesten noch im Spiel
        befindlichen Teilnehmers reduzieren.  Das Recht auf Rückkauf steht
        jedem Spieler ... nur einmal zu."

        The second-worst is counted among all players still in, the buyer
        included.  A buyer who is not alone at the worst count would gain
        nothing (the second-worst count is then not below his own), so that
        buy-back is refused rather than spending the right for nothing."""
        self._push(BuyBack(player))

    def undo(self) -> MatchEvent:
        """Remove the last event (round or buy-back) and return it."""
        if not self._events:
            raise MatchError("there is nothing to undo")
        event = self._events.pop()
        self._state = self._replay(self._events)
        return event

    def _push(self, event: MatchEvent) -> None:
        state = self._state.copy()
        self._apply(state, event)
        self._events.append(event)
        self._state = state

    # --- replay --------------------------------------------------------------
    def _initial_state(self) -> _State:
        names = self.players
        stake = self.variant.match_rules.stake
        chips = {name: -stake for name in names}
        pot = stake * len(names)
        return _State({name: 0 for name in names}, chips, pot, self.dealer)

    def _replay(self, events: list[MatchEvent]) -> _State:
        state = self._initial_state()
        for event in events:
            self._apply(state, event)
        return state

    def _apply(self, state: _State, event: MatchEvent) -> None:
        if state.over:
            raise MatchError(f"the match is over (winner: {state.winner or 'none, a draw'})")
        if isinstance(event, PlayedRound):
            self._apply_round(state, event)
        else:
            self._apply_buy_back(state, event)

    def _active(self, state: _State) -> list[str]:
        return [p for p in self.players if p not in state.eliminated]

    def _apply_round(self, state: _State, event: PlayedRound) -> None:
        result = event.result
        active = self._active(state)
        self._check_names(state, result, active)
        changes = self._changes(result, active)
        dealer_name = self.players[state.dealer]

        for name, change in changes.items():
            state.totals[name] += change
        rules = self.variant.match_rules
        chip_changes = self._chip_changes(result, active) if rules.chips else {}
        for name, change in chip_changes.items():
            state.chips[name] += change
        state.rounds += 1

        newly_out: tuple[str, ...] = ()
        if rules.ends_by_elimination:
            newly_out = self._eliminate(state, active)
        self._decide(state, result)
        if state.over and rules.chips and state.winner is not None:
            # [wiener] "so gewinnt der verbleibende Spieler den Pot"
            state.chips[state.winner] += state.pot
            state.pot = 0
        state.dealer = self._next_seat(state, state.dealer)
        state.entries.append(
            MatchEntry(
                event,
                state.rounds,
                dealer_name,
                changes,
                dict(state.totals),
                newly_out,
                dict(state.chips),
            )
        )

    def _check_names(self, state: _State, result: RoundResult, active: list[str]) -> None:
        if not isinstance(result, RoundResult):
            raise MatchError(f"a round is recorded as a RoundResult, not {result!r}")
        for name, score in result.scores.items():
            if name not in self.players:
                raise MatchError(self._not_a_player(name))
            if name in state.eliminated:
                raise MatchError(
                    f"{name!r} is out of the match since round {state.eliminated[name]}"
                    " and takes no part in further rounds"
                )
            if isinstance(score, bool) or not isinstance(score, int):
                raise MatchError(f"the score of {name!r} must be a whole number, not {score!r}")
            if self.variant.penalty_scoring and score > 0:
                raise MatchError(
                    f"{self.variant.id} counts penalty points as 0 or negative scores;"
                    f" {name!r} has {score}"
                )
        missing = [name for name in active if name not in result.scores]
        if missing:
            raise MatchError(f"the round has no score for {', '.join(map(repr, missing))}")
        if result.winner is not None and result.winner not in result.scores:
            raise MatchError(f"the round's winner {result.winner!r} has no score in it")

    def _changes(self, result: RoundResult, active: list[str]) -> dict[str, int]:
        if not self.variant.match_rules.collected_only:
            return {name: result.scores[name] for name in active}
        # [american-rummy] "sobald einer der Spieler 100 oder mehr Punkte geschrieben hat":
        # only collected points are written.  Without extras["collected"], a positive
        # round score is what the player collected.
        collected = result.extras.get("collected")
        if collected is None:
            return {name: max(0, result.scores[name]) for name in active}
        if isinstance(collected, int) and not isinstance(collected, bool):
            if result.winner is None:
                raise MatchError(f"collected={collected} needs the round's winner")
            return {name: collected if name == result.winner else 0 for name in active}
        if isinstance(collected, Mapping):
            changes = {name: 0 for name in active}
            for name, points in collected.items():
                if name not in changes:
                    raise MatchError(f"collected points for {name!r}, who is not in the round")
                if isinstance(points, bool) or not isinstance(points, int) or points < 0:
                    raise MatchError(
                        f"collected points of {name!r} must be a whole number >= 0, not {points!r}"
                    )
                changes[name] = points
            return changes
        raise MatchError(f"extras['collected'] must be a number or a mapping, not {collected!r}")

    def _chip_changes(self, result: RoundResult, active: list[str]) -> dict[str, int]:
        """Klopfgeld.  extras["chips"]: a mapping of chip changes per player (summing to 0),
        or a number each other player still in pays the winner; absent: one chip each
        ([wiener] "von allen übrigen noch im Spiel befindlichen Teilnehmern ... einen Chip")."""
        raw = result.extras.get("chips", self.variant.match_rules.klopfgeld)
        if isinstance(raw, Mapping):
            changes = {name: 0 for name in active}
            for name, amount in raw.items():
                if name not in changes:
                    raise MatchError(f"chips for {name!r}, who is not in the round")
                if isinstance(amount, bool) or not isinstance(amount, int):
                    raise MatchError(f"chips of {name!r} must be a whole number, not {amount!r}")
                changes[name] = amount
            if sum(changes.values()) != 0:
                raise MatchError(f"Klopfgeld passes between players and must sum to 0: {dict(raw)}")
            return changes
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
            raise MatchError(f"extras['chips'] must be a mapping or a number >= 0, not {raw!r}")
        if result.winner is None:
            return {}
        payers = [name for name in active if name != result.winner]
        changes = {name: -raw for name in payers}
        changes[result.winner] = raw * len(payers)
        return changes

    def _eliminate(self, state: _State, active: list[str]) -> tuple[str, ...]:
        """[wiener] "Sobald ein Spieler 101 oder mehr Schlechtpunkte gesammelt hat, scheidet er
        aus".

        The text does not say what happens when one round puts every remaining
        player over the limit.  Then the fewest penalty points stay in (they are
        the last player left); players tied for fewest all stay in and play on,
        as 500 Rum plays on after a tie."""
        limit = self.variant.match_rules.elimination
        assert limit is not None
        out = [name for name in active if -state.totals[name] >= limit]
        if out and len(out) == len(active):
            survivors = set(_best(active, state.totals))
            out = [name for name in out if name not in survivors]
        for name in out:
            state.eliminated[name] = state.rounds
        return tuple(out)

    def _decide(self, state: _State, result: RoundResult | None) -> None:
        """Set ``over`` and ``winner`` after an event."""
        active = self._active(state)
        rules = self.variant.match_rules
        if rules.ends_by_elimination:
            if len(active) == 1:
                state.over, state.winner = True, active[0]
            return
        best = _best(active, state.totals)
        target = self.match_target
        if target is not None:
            if rules.target_needs_going_out:
                # [rum500] "müssen Sie ausgehen ... und eine kumulative Punktzahl von 500
                # oder mehr haben ... es möglich, ohne die höchste Punktzahl zu gewinnen"
                going_out = result.winner if result is not None else None
                if going_out is not None and state.totals[going_out] >= target:
                    state.over, state.winner = True, going_out
                    return
            else:
                if self.variant.penalty_scoring:
                    reached = any(-state.totals[name] >= target for name in active)
                else:
                    reached = any(state.totals[name] >= target for name in active)
                if reached and len(best) == 1:
                    state.over, state.winner = True, best[0]
                    return
        if self.rounds_limit is not None and state.rounds >= self.rounds_limit:
            state.over = True
            state.winner = best[0] if len(best) == 1 else None

    def _apply_buy_back(self, state: _State, event: BuyBack) -> None:
        player = event.player
        rules = self.variant.match_rules
        if rules.buy_back_from is None:
            raise MatchError(f"buying back is a wiener rule, not one of {self.variant.id}")
        if player not in self.players:
            raise MatchError(self._not_a_player(player))
        if player in state.eliminated:
            raise MatchError(f"{player!r} is already out of the match and cannot buy back")
        if player in state.bought_back:
            raise MatchError(f"{player!r} has bought back once already; the right is used up")
        low = rules.buy_back_from
        penalty = -state.totals[player]
        if penalty < low:
            raise MatchError(
                f"{player!r} has {penalty} penalty points; buying back needs at least {low}"
            )
        counts = sorted((-state.totals[name] for name in self._active(state)), reverse=True)
        second_worst = counts[1]
        if second_worst >= penalty:
            raise MatchError(
                f"buying back would not lower {player!r}'s {penalty} penalty points:"
                f" the second-worst count still in is {second_worst}"
            )
        change = penalty - second_worst
        state.totals[player] += change
        state.chips[player] -= rules.stake
        state.pot += rules.stake
        state.bought_back.add(player)
        entry = MatchEntry(
            event, None, None, {player: change}, dict(state.totals), (), dict(state.chips)
        )
        state.entries.append(entry)

    def _not_a_player(self, name: str) -> str:
        return f"{name!r} is not a player of this match ({', '.join(self.players)})"

    def _next_seat(self, state: _State, seat: int) -> int:
        step = self.variant.deal_direction
        count = len(self.players)
        for offset in range(1, count + 1):
            candidate = (seat + step * offset) % count
            if self.players[candidate] not in state.eliminated:
                return candidate
        return seat

    # --- output ----------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "variant": self.variant.id,
            "options": self.variant.options.as_dict(),
            "players": list(self.players),
            "rounds_limit": self.rounds_limit,
            "target": self.match_target,
            "rounds_played": self.rounds_played,
            "dealer": self.dealer_name,
            "totals": self.totals,
            "standings": [{"player": name, "total": total} for name, total in self.standings()],
            "over": self.over,
            "winner": self.winner,
            "history": [entry.to_json() for entry in self._state.entries],
        }
        if self.variant.penalty_scoring:
            data["penalty_totals"] = self.penalty_totals
        rules = self.variant.match_rules
        if rules.ends_by_elimination:
            data["eliminated"] = [name for name in self.players if name in self._state.eliminated]
            data["bought_back"] = [name for name in self.players if name in self._state.bought_back]
        if rules.chips:
            data["chips"] = self.chips
            data["pot"] = self.pot
        if rules.settlement:
            data["settlement"] = [
                {"payer": payer, "payee": payee, "amount": amount}
                for payer, payee, amount in self.settlement()
            ]
        return data


def _best(names: list[str] | tuple[str, ...], totals: Mapping[str, int]) -> tuple[str, ...]:
    """The names sharing the highest total (penalty totals are negative, so also the fewest)."""
    if not names:
        return ()
    top = max(totals[name] for name in names)
    return tuple(name for name in names if totals[name] == top)
