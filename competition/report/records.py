"""Game records as files: one JSON file per game and, for checkers, one PDN file of all games."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from competition.openings import Opening
from competition.runner import GameRecord, TournamentSpec
from games import Game, GameError
from games.match import MatchView, Result, Status
from games.records import to_pdn


def write_records(
    directory: Path | str,
    spec: TournamentSpec,
    records: Sequence[GameRecord],
    openings: Iterable[Opening] = (),
    rounds: Mapping[int, int] | None = None,
) -> list[Path]:
    """Write every game as JSON (game-0001.json, ...) and, for checkers, all as games.pdn.

    Each JSON file is the record's `to_dict` plus `game`, `options` and `start_position` (the
    opening's position text, or None for the standard start). `openings` are the tournament's
    openings, looked up by name to find a game's start position; a game whose opening is not
    among them is taken to start from the standard start. `rounds` gives a Swiss tournament's
    games their round (from 1) by index: each JSON file gets `round`, and the PDN's Round is it.
    PDN games carry Event, Round (the game number, or its Swiss round), Black (first), White
    (second) and, from a set position, FEN. Creates `directory` if needed and returns the paths
    written. ValueError if a move does not replay.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    starts = {o.name: o.position for o in openings}
    game = spec.build_game()
    width = max(4, len(str(len(records))))
    written = []
    pdn_games = []
    for record in records:
        position = starts.get(record.opening)
        data = {
            "game": spec.game,
            "options": dict(spec.options),
            "start_position": position,
            **({} if rounds is None else {"round": rounds[record.index]}),
            **record.to_dict(),
        }
        path = folder / f"game-{record.index + 1:0{width}d}.json"
        path.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        written.append(path)
        if game.name == "checkers":
            heading = record.index + 1 if rounds is None else rounds[record.index]
            pdn_games.append(_pdn(game, spec, record, position, heading))
    if pdn_games:
        path = folder / "games.pdn"
        path.write_text("\n".join(pdn_games), encoding="utf-8")
        written.append(path)
    return written


def _pdn(
    game: Game, spec: TournamentSpec, record: GameRecord, position: str | None, heading: int
) -> str:
    start = game.position_or_initial(position)
    state = start
    for number, text in enumerate(record.moves, start=1):
        try:
            state = state.apply(state.parse_move(text))
        except GameError as exc:
            raise ValueError(
                f"game {record.index + 1}: move {number} {text!r} does not replay: {exc}"
            ) from exc
    winner = None if record.result == 0.5 else 0 if record.result == 1.0 else 1
    view = MatchView(
        game=game.name,
        start_position=game.format_position(start),
        position=game.format_position(state),
        moves=record.moves,
        to_move=None,
        clocks_ms=None,
        legal_moves=(),
        status=Status.FINISHED,
        result=Result(winner, record.code, record.reason),
        seq=len(record.moves),
        illegal_counts=(0, 0),
        draw_offer=None,
        time_control=None,
    )
    headers = {
        "Event": f"Arena {spec.format} tournament",
        "Round": str(heading),
        "Black": record.first,
        "White": record.second,
    }
    # What an engine or plug-in reported of itself (PDN allows tags of one's own).
    for tag, engine in (("BlackEngine", record.engines[0]), ("WhiteEngine", record.engines[1])):
        if engine is not None:
            headers[tag] = engine
    return to_pdn(view, headers)
