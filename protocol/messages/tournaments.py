"""Tournaments on the wire: their set-up, games and standings, their WebSocket notices and
their REST lists.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import Discriminator, Field, Strict, Tag, model_validator

from protocol.messages.base import (
    MAX_POSITION_LENGTH,
    BotSpecText,
    Count,
    EpochMs,
    GameName,
    MatchId,
    Options,
    PlayerName,
    Text,
    WireMessage,
    WireModel,
)
from protocol.messages.matches import MAX_PLIES, TimeControl
from protocol.messages.sprt import SprtSettings, SprtStateField
from protocol.messages.versioning import SINCE

TournamentId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="A tournament id chosen by the server; treat it as opaque text.",
    ),
]
TournamentFormat = Literal["round-robin", "gauntlet"]
"""`round-robin`: every bot against every other; `gauntlet`: the first bot against each other."""
TournamentStatus = Literal["created", "running", "finished", "cancelled", "failed"]
"""`created`: scheduled, not started; `running`: games being played; `finished`: all played;
`cancelled`: stopped by its owner; `failed`: stopped by an error (`reason` says which)."""
InvitationStatus = Literal["pending", "accepted", "declined"]
"""A player's answer to a tournament's invitation."""
MAX_TOURNAMENT_BOTS = 16
MAX_TOURNAMENT_CONCURRENCY = 16
MAX_SWISS_BOTS = 1000
"""The most bots a Swiss tournament may pair (a round robin or gauntlet: MAX_TOURNAMENT_BOTS)."""
MAX_SWISS_ROUNDS = 30
MAX_TOURNAMENT_OPENINGS = 1000
"""The most openings a tournament may list (a pairing plays at most 500 of them)."""
MAX_OPENING_LENGTH = MAX_POSITION_LENGTH + 16
DeckName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[a-z0-9][a-z0-9.\-]*$",
        description="A deck of openings that ships with Arena, e.g. `acf-3move` (checkers).",
    ),
]
OpeningText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_OPENING_LENGTH,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="One opening as a line of an openings file: moves from the start separated "
        "by spaces or commas (`11-15 23-19 8-11`), or `fen:` and a position.",
    ),
]


def _openings_kind(value: Any) -> str:
    """Tell a deck name (text) from a list, so an error names `openings.deck` or `.list`."""
    return "deck" if isinstance(value, str) else "list"


TournamentOpenings = Annotated[
    Annotated[DeckName, Tag("deck")]
    | Annotated[
        tuple[OpeningText, ...],
        Field(min_length=1, max_length=MAX_TOURNAMENT_OPENINGS),
        Tag("list"),
    ],
    Discriminator(_openings_kind),
]
"""A tournament's openings: a deck's name, or a list of openings."""
Score = Annotated[float, Field(ge=0, le=1, description="Points of one game: 1, 0.5 or 0.")]


class TournamentGame(WireModel):
    """One game of a tournament: who played whom from which opening, its match and result.

    `first` sits in seat 0 (the game's first player), `second` in seat 1. `result` is the
    score of `first` (None while the game is being played); `reason` says why it ended.
    """

    index: Count = Field(description="The game's number in the schedule, from 0.")
    pair: Count = Field(description="The pairing's number (the colour-swapped games share it).")
    first: BotSpecText
    second: BotSpecText
    opening: Annotated[str, Field(max_length=MAX_POSITION_LENGTH)]
    match_id: MatchId
    result: Score | None = None
    reason: Text | None = None
    round: Count | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.4"},
        description="A Swiss tournament's round, from 0 (since 1.4; None in other formats).",
    )


class BotPoints(WireModel):
    """One bot's points, wins, draws and losses so far."""

    bot: BotSpecText
    points: Annotated[float, Field(ge=0)]
    games: Count
    wins: Count
    draws: Count
    losses: Count


class HeadToHead(WireModel):
    """One bot's record against one opponent."""

    games: Count
    wins: Count
    draws: Count
    losses: Count
    points: Annotated[float, Field(ge=0)]


class BotRating(WireModel):
    """One bot's Elo (Davidson model, mean 0) with its 95% interval (None: unbounded)."""

    bot: BotSpecText
    elo: float
    lower: float | None = None
    upper: float | None = None
    games: Count
    points: Annotated[float, Field(ge=0)]
    score: Annotated[float, Field(ge=0, le=1)]


class SwissStandingRow(WireModel):
    """One bot's place in a Swiss tournament (since 1.4): its score with its byes', then the
    tie-breaks Buchholz and Sonneborn-Berger (docs/TOURNAMENTS.md, "Swiss tournaments")."""

    rank: Annotated[int, Field(ge=1)]
    bot: BotSpecText
    score: Annotated[float, Field(ge=0)]
    buchholz: Annotated[float, Field(ge=0)]
    sonneborn_berger: Annotated[float, Field(ge=0)]
    boards: Count
    byes: Count


class TournamentStandings(WireModel):
    """Points (best first), ratings, the crosstable and the likelihood of superiority.

    `ratings`, `crosstable` and `los` are empty until a game is finished; `rating_note` says
    why no rating could be fitted when that happens. `los[a][b]` is the probability that a is
    stronger than b; `crosstable[a][b]` is a's record against b.
    """

    points: tuple[BotPoints, ...]
    ratings: tuple[BotRating, ...] = ()
    first_move_advantage: float | None = None
    crosstable: dict[BotSpecText, dict[BotSpecText, HeadToHead]] = Field(default_factory=dict)
    los: dict[BotSpecText, dict[BotSpecText, Annotated[float, Field(ge=0, le=1)]]] = Field(
        default_factory=dict
    )
    rating_note: Text | None = None
    swiss: tuple[SwissStandingRow, ...] = Field(
        default=(),
        json_schema_extra={SINCE: "1.4"},
        description="A Swiss tournament's standings, first place first (since 1.4).",
    )


class SwissSettings(WireModel):
    """Play a Swiss tournament (since 1.4): `rounds` rounds, each pairing bots of like scores
    who have not met, colours balanced, each board one opening played twice with colours
    swapped (docs/TOURNAMENTS.md, "Swiss tournaments")."""

    rounds: Annotated[int, Strict(), Field(ge=1, le=MAX_SWISS_ROUNDS)]


class TournamentCreate(WireModel):
    """Create a tournament (request body); every game is a server match.

    `bots` are house bots given by spec, or registered players written `player:NAME`, who play
    their games over the network like any match (a bot connected with `arena bot`, say). The
    creator owns the tournament; every other player named is invited and must accept before
    the owner can start it.
    Each pairing plays `games_per_pairing` games (even: each opening twice, colours swapped)
    from openings drawn with `seed` out of `openings`: a deck's name, a list of openings, or
    None for the game's default (checkers: the `acf-3move` deck; other games: random ones);
    the server refuses a deck or an opening that is not of the game. A game reaching `ply_cap`
    plies (the opening's included) is drawn by adjudication. At most `concurrency` of its
    matches are played at once, each with `time_control` (None: untimed; give one when players
    take part, so an absent player loses on time instead of stalling the tournament).
    With `sprt` (since 1.3) the tournament is a match between exactly two bots played in
    colour-swapped pairs (one opening each, dealt in turn; `format` and `games_per_pairing` do
    not apply) until the test decides or `sprt.max_pairs` pairs are counted.
    With `swiss` (since 1.4) the bots (up to MAX_SWISS_BOTS) play `swiss.rounds` rounds of
    Swiss pairing instead (`format` does not apply; `games_per_pairing` must be 2: a board is a
    colour-swapped pair), each round paired when the one before it is over.
    """

    type: Literal["tournament_create"] = "tournament_create"
    game: GameName
    options: Options = Field(default_factory=dict)
    bots: tuple[BotSpecText, ...] = Field(
        min_length=2,
        max_length=MAX_SWISS_BOTS,
        description=f"At most {MAX_TOURNAMENT_BOTS}, or {MAX_SWISS_BOTS} in a Swiss tournament.",
    )
    format: TournamentFormat = "round-robin"
    games_per_pairing: Annotated[int, Strict(), Field(ge=2, le=1000, multiple_of=2)] = 2
    seed: Annotated[int, Strict(), Field(ge=0, le=2**63 - 1)] = 0
    ply_cap: Annotated[int, Strict(), Field(ge=1, le=MAX_PLIES)] = 200
    concurrency: Annotated[int, Strict(), Field(ge=1, le=MAX_TOURNAMENT_CONCURRENCY)] = 2
    time_control: TimeControl | None = None
    openings: TournamentOpenings | None = None
    sprt: SprtSettings | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.3"},
        description="Play two bots' colour-swapped pairs until this SPRT decides (since 1.3).",
    )
    swiss: SwissSettings | None = Field(
        default=None,
        json_schema_extra={SINCE: "1.4"},
        description="Play this many rounds of Swiss pairing (since 1.4).",
    )

    @model_validator(mode="after")
    def _fits_its_format(self) -> Self:
        if self.swiss is None:
            if len(self.bots) > MAX_TOURNAMENT_BOTS:
                raise ValueError(
                    f"a round robin or gauntlet takes at most {MAX_TOURNAMENT_BOTS} bots, not "
                    f"{len(self.bots)}: a Swiss tournament (`swiss`) takes {MAX_SWISS_BOTS}"
                )
            return self
        if self.sprt is not None:
            raise ValueError("a tournament is a Swiss tournament or an SPRT, not both")
        if self.games_per_pairing != 2:
            raise ValueError(
                "a Swiss tournament's board is one colour-swapped pair: games_per_pairing is 2"
            )
        if self.swiss.rounds >= len(self.bots):
            raise ValueError(
                f"{len(self.bots)} bots meet each other in {len(self.bots) - 1} rounds: "
                f"{self.swiss.rounds} rounds would pair some twice"
            )
        return self


class TournamentState(WireMessage):
    """A tournament: its set-up, status, progress, standings and every game begun so far.

    `owner` created it and alone may start or cancel it; `invitations` holds each invited
    player's answer; `reason` says why a `cancelled` or `failed` tournament stopped.
    """

    type: Literal["tournament_state"] = "tournament_state"
    tournament_id: TournamentId
    spec: TournamentCreate
    status: TournamentStatus
    owner: PlayerName | None = None
    invitations: dict[PlayerName, InvitationStatus] = Field(default_factory=dict)
    reason: Text | None = None
    games_done: Count
    games_total: Count
    standings: TournamentStandings
    games: tuple[TournamentGame, ...] = ()
    created_time_ms: EpochMs
    sprt: SprtStateField = None


class TournamentGameFinished(WireMessage):
    """A game of a tournament is over: the game, the progress and the points table now (and
    the SPRT's state, which this game may have moved)."""

    type: Literal["tournament_game_finished"] = "tournament_game_finished"
    tournament_id: TournamentId
    game: TournamentGame
    games_done: Count
    games_total: Count
    points: tuple[BotPoints, ...]
    sprt: SprtStateField = None


class TournamentFinished(WireMessage):
    """A tournament is over (every game played, its SPRT decided, or stopped): the final
    standings and SPRT state."""

    type: Literal["tournament_finished"] = "tournament_finished"
    tournament_id: TournamentId
    games_done: Count
    games_total: Count
    standings: TournamentStandings
    sprt: SprtStateField = None


class TournamentSummary(WireModel):
    """One tournament in a list: its set-up, status and progress."""

    type: Literal["tournament_summary"] = "tournament_summary"
    tournament_id: TournamentId
    spec: TournamentCreate
    status: TournamentStatus
    owner: PlayerName | None = None
    games_done: Count
    games_total: Count
    created_time_ms: EpochMs
    sprt: SprtStateField = None


class TournamentList(WireModel):
    """A page of tournaments, newest first; `next_offset` is None on the last page."""

    type: Literal["tournament_list"] = "tournament_list"
    tournaments: tuple[TournamentSummary, ...]
    next_offset: Annotated[int, Strict(), Field(ge=0)] | None = None
