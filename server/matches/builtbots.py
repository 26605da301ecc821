"""The house bots built for matches: a spec checked once against the server's maxima, and the
bots most recently used kept with their tables.

`BuiltBots` is owned by the house bots (server.matches.housebots), which ask it for the bot of
a seat before each search and let go of a match's bots when the match is over. A bot keeps its
table (8 MB and more for alphabeta and id; up to 38 MB, mapped as it fills, for the compiled
checkers engine) from move to move, so only the most recently used few
(BUILT_BOTS_PER_THREAD per search thread) are kept: a match waiting for its human player holds
none, and an evicted bot is built again (a fresh table and random generator) when next needed.
Memory stays bounded by the search pool's size, not by the number of matches.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from bots.spec import Bot, check_limits, create_bot, parse_bot_spec
from games.base import Game
from server.limits.compute import search_limits
from server.matches.live import LiveMatch
from server.settings import Settings

BUILT_BOTS_PER_THREAD = 4
"""House bots kept built (with their tables) per search thread; see the module."""

CHECKED_BOTS = 10_000
"""Bot specs and games known to make a bot within the maxima (the set starts over when full)."""


class BuiltBots:
    """Checks house-bot specs against `settings`' search maxima and keeps the bots built."""

    def __init__(self, settings: Settings) -> None:
        self._limits = search_limits(settings)
        self._built: OrderedDict[tuple[str, int], Bot] = OrderedDict()
        self._limit = BUILT_BOTS_PER_THREAD * settings.bot.threads
        self._checked: set[tuple[str, Hashable]] = set()

    def check(self, spec: str, game: Game) -> None:
        """Raise BotSpecError unless `spec` makes a bot for `game` within the server's search
        maxima (checked once per pair)."""
        key = (spec, game.rules_key())
        if key not in self._checked:
            check_limits(parse_bot_spec(spec), self._limits)
            create_bot(spec, game)
            if len(self._checked) >= CHECKED_BOTS:
                self._checked.clear()
            self._checked.add(key)

    def bot(self, live: LiveMatch, seat: int) -> Bot | None:
        """Return the house bot of `seat`, built again if it was let go, or None for a
        player's seat."""
        spec = live.bot_specs[seat]
        if spec is None:
            return None
        key = (live.id, seat)
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = create_bot(spec, live.referee.game)
            while len(self._built) > self._limit:
                self._built.popitem(last=False)
        else:
            self._built.move_to_end(key)
        return built

    def forget(self, match_id: str) -> None:
        """Let go of the bots of a match that is over."""
        for seat in (0, 1):
            self._built.pop((match_id, seat), None)
