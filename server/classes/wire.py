"""A class tournament as its reader may see it, and the staff's CSV of it.

Staff read every entrant by roster name with its submission and why one was refused; a student
reads themself as `you`, the other students as `student N` (numbered in the entrants' order,
the same for every reader) and house bots by spec, and only their own games. The grade share's
rule (docs/COURSE.md): an entrant's points of the assignment's grade are
`grade_share x score / games`, a refused submission's 0.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from protocol.class_tournaments import ClassEntrant, ClassGame, ClassTournament
from protocol.messages import TournamentState
from server.courses.submissions import Reader
from server.db.models import ClassTournament as ClassRow
from server.db.models import CourseMember

MAX_GAMES_SHOWN = 2000
"""Most games a class tournament's answer lists (a student's own are far fewer)."""


def view(row: ClassRow, state: TournamentState, reader: Reader) -> ClassTournament:
    """Return the class tournament `row`, played as `state`, as `reader` may see it."""
    entrants = [_entrant(row, state, reader, entry, number) for entry, number in _numbered(row)]
    entrants.sort(key=lambda e: (-(e.score / e.games if e.games else 0.0), e.label))
    labels = {e.spec: e.label for e in entrants}
    mine = next((e.spec for e in entrants if e.you), None)
    games = [
        ClassGame(
            match_id=game.match_id,
            first=labels.get(game.first, game.first),
            second=labels.get(game.second, game.second),
            result=game.result,
            reason=game.reason,
        )
        for game in state.games
        if reader.is_staff or mine in (game.first, game.second)
    ]
    return ClassTournament(
        class_tournament_id=row.id,
        course_id=row.course_id,
        assignment_id=row.assignment_id,
        tournament_id=row.tournament_id,
        status=state.status,
        pick=row.pick,
        grade_share=row.grade_share,
        games_done=state.games_done,
        games_total=state.games_total,
        entrants=tuple(entrants),
        games=tuple(games[:MAX_GAMES_SHOWN]),
        created_time_ms=int(row.created_at.timestamp() * 1000),
    )


def to_csv(tournament: ClassTournament, members: dict[int, CourseMember]) -> str:
    """Return the staff's view of a class tournament as CSV: a row per student entrant, with
    the grade share's points (house bots are references, not graded)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "student_id",
            "name",
            "submission_id",
            "bot",
            "status",
            "games",
            "score",
            "score_fraction",
            "grade_share",
            "grade_points",
        ]
    )
    for entrant in tournament.entrants:
        if entrant.house_bot or entrant.member_id is None:
            continue
        member = members[entrant.member_id]
        fraction = entrant.score / entrant.games if entrant.games else 0.0
        writer.writerow(
            [
                member.student_id,
                member.name,
                entrant.submission_id or "",
                entrant.spec,
                "refused" if entrant.refused else "played",
                entrant.games,
                f"{entrant.score:g}",
                f"{fraction:.4f}",
                tournament.grade_share,
                "" if entrant.grade_points is None else f"{entrant.grade_points:.2f}",
            ]
        )
    return out.getvalue()


def _numbered(row: ClassRow) -> Sequence[tuple[dict[str, Any], int]]:
    """Each entrant with its number among the students (0 for a house bot)."""
    numbered, count = [], 0
    for entry in row.entrants:
        if entry.get("member_id") is not None:
            count += 1
            numbered.append((entry, count))
        else:
            numbered.append((entry, 0))
    return numbered


def _entrant(
    row: ClassRow, state: TournamentState, reader: Reader, entry: dict[str, Any], number: int
) -> ClassEntrant:
    spec: str = entry["spec"]
    member_id: int | None = entry.get("member_id")
    points = next((p for p in state.standings.points if p.bot == spec), None)
    games, score = (points.games, points.points) if points is not None else (0, 0.0)
    if member_id is None:
        return ClassEntrant(label=spec, spec=spec, house_bot=True, games=games, score=score)
    you = member_id == reader.me.id
    shown = reader.is_staff or you
    if reader.is_staff:
        member = reader.members.get(member_id)
        label = f"{member.name} ({member.student_id})" if member is not None else f"#{member_id}"
    else:
        label = "you" if you else f"student {number}"
    refused = entry.get("refused")
    grade_points = None
    if row.grade_share:
        fraction = score / games if games and refused is None else 0.0
        grade_points = round(row.grade_share * fraction, 2)
    return ClassEntrant(
        label=label,
        spec=spec,
        you=you,
        member_id=member_id if shown else None,
        submission_id=entry.get("submission_id") if shown else None,
        refused=refused if shown else None,
        games=games,
        score=score,
        grade_points=grade_points if shown else None,
    )
