"""Challenges between bots: which ones a bot client accepts, and the ones it sends by itself.

`ChallengeFilter` decides whether a challenge (a match someone created with this player in a
seat) is accepted. `ChallengePlan` and `Challenger` are the bot's own matchmaking: challenge an
idle online bot (`GET /bots/online`) by creating a match (`POST /matches`) and abort it when no
answer comes in time.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from client.rest import error_text, rest_client
from protocol.messages import Challenge, MatchCreate, MatchState, OnlineBots, TimeControl


@dataclass(frozen=True)
class ChallengeFilter:
    """Which challenges a bot accepts (as lichess-bot's challenge section): each field that is
    set must hold. `games` and `opponents` are names (the challenger's player name);
    `min_base_ms`/`max_base_ms` bound the clock's base time and `max_increment_ms` its
    increment; `untimed` says whether a match without a clock is accepted."""

    games: frozenset[str] | None = None
    opponents: frozenset[str] | None = None
    min_base_ms: int | None = None
    max_base_ms: int | None = None
    max_increment_ms: int | None = None
    untimed: bool = True

    def refusal(self, challenge: Challenge) -> str | None:
        """Return why `challenge` is declined, in words for the log, or None to accept it."""
        if self.games is not None and challenge.game not in self.games:
            return f"{challenge.game} is not among the games accepted ({_listed(self.games)})"
        challenger = challenge.challenger
        if self.opponents is not None and challenger not in self.opponents:
            who = challenger or "the server"
            return f"{who} is not among the opponents accepted ({_listed(self.opponents)})"
        control = challenge.time_control
        if control is None:
            return None if self.untimed else "the match has no clock and untimed is refused"
        base = control.base_ms
        if self.min_base_ms is not None and base < self.min_base_ms:
            return (
                f"base time {base / 1000:g} s is below the {self.min_base_ms / 1000:g} s accepted"
            )
        if self.max_base_ms is not None and base > self.max_base_ms:
            return (
                f"base time {base / 1000:g} s is above the {self.max_base_ms / 1000:g} s accepted"
            )
        increment = control.increment_ms
        if self.max_increment_ms is not None and increment > self.max_increment_ms:
            return (
                f"increment {increment / 1000:g} s is above the "
                f"{self.max_increment_ms / 1000:g} s accepted"
            )
        return None


ACCEPT_ALL = ChallengeFilter()


@dataclass(frozen=True)
class ChallengePlan:
    """The challenges a bot sends by itself (as lichess-bot's matchmaking): every `every_s`
    seconds while it sits in no match, one idle online bot (`GET /bots/online`) that accepts
    `game`, drawn at random among `opponents` when they are given, on a random seat, with
    `time_control` (None: untimed). A challenge not answered within `timeout_s` is aborted."""

    game: str
    every_s: float
    time_control: TimeControl | None = None
    options: tuple[tuple[str, str], ...] = ()
    opponents: frozenset[str] | None = None
    timeout_s: float = 60.0


def _listed(names: frozenset[str]) -> str:
    return ", ".join(sorted(names)) or "none"


class Challenger:
    """Send the challenges of a `ChallengePlan` as the player whose `token` is given, to the
    server at `http_base`: opponents and seats drawn from `rng`, each step logged on `log`.
    `settled(match_id)` says whether a challenged match has started or ended (answered)."""

    def __init__(
        self,
        http_base: str,
        token: str,
        *,
        rng: random.Random,
        log: logging.Logger,
        settled: Callable[[str], bool],
    ) -> None:
        self.http_base = http_base
        self.token = token
        self.rng = rng
        self.log = log
        self.settled = settled
        self.sent: list[str] = []
        """The matches created to challenge another bot, oldest first."""

    async def challenge_once(self, plan: ChallengePlan, player: str) -> str | None:
        """Challenge one idle online bot as `plan` says and wait for its answer (aborting the
        match after `plan.timeout_s` without one); return the match's id, or None when no
        bot could be challenged (each reason logged)."""
        async with rest_client(self.token) as http:
            response = await http.get(
                f"{self.http_base}/bots/online", params={"game": plan.game, "limit": 200}
            )
            response.raise_for_status()
            online = OnlineBots.model_validate_json(response.content)
            names = [
                bot.name
                for bot in online.bots
                if bot.name != player
                and bot.playing == 0
                and (plan.opponents is None or bot.name in plan.opponents)
            ]
            if not names:
                self.log.info(
                    "no idle bot online takes %s; trying again in %g s", plan.game, plan.every_s
                )
                return None
            opponent = self.rng.choice(sorted(names))
            seats = (player, opponent)
            if self.rng.random() < 0.5:
                seats = (opponent, player)
            body = MatchCreate(
                game=plan.game,
                options=dict(plan.options),
                time_control=plan.time_control,
                seats=seats,
            )
            response = await http.post(
                f"{self.http_base}/matches",
                content=body.model_dump_json(),
                headers={"Content-Type": "application/json"},
            )
            if response.is_error:
                self.log.warning(
                    "challenging %s was refused (HTTP %d): %s",
                    opponent,
                    response.status_code,
                    error_text(response),
                )
                return None
            match_id = MatchState.model_validate_json(response.content).match_id
            self.sent.append(match_id)
            self.log.info(
                "challenged %s to %s (match %s, seat %d)",
                opponent,
                plan.game,
                match_id,
                seats.index(player),
            )
            await self._await_answer(http, match_id, opponent, plan.timeout_s)
        return match_id

    async def _await_answer(
        self, http: httpx.AsyncClient, match_id: str, opponent: str, timeout_s: float
    ) -> None:
        """Wait until the challenge `match_id` is answered; abort it after `timeout_s`."""
        waited = 0.0
        while waited < timeout_s:
            if self.settled(match_id):
                return
            step = min(0.5, timeout_s - waited)
            await asyncio.sleep(step)
            waited += step
        state = MatchState.model_validate_json(
            (await http.get(f"{self.http_base}/matches/{match_id}")).content
        )
        if state.status == "waiting":
            await http.post(f"{self.http_base}/matches/{match_id}/abort")
            self.log.info(
                "%s did not answer the challenge %s within %g s: aborted",
                opponent,
                match_id,
                timeout_s,
            )
