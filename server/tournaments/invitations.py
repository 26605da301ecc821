"""Who may take part in a tournament and act on it: the players it invites, their answers,
and its owner's rights."""

from __future__ import annotations

from competition.runner import player_name
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import TournamentCreate
from server.db.models import Player
from server.players import PlayerRegistry
from server.tournaments.planning import validation_error
from server.tournaments.tournament import HostedTournament


async def invited(
    body: TournamentCreate, creator: Player, players: PlayerRegistry
) -> dict[str, str]:
    """Return the invitations of a tournament `creator` creates: every registered player it
    names but `creator`, pending. VALIDATION_ERROR for a name no player has."""
    invitations: dict[str, str] = {}
    for participant in body.bots:
        name = player_name(participant)
        if name is None:
            continue
        player = await players.named(name)
        if player is None:
            raise validation_error("bots", f"no player is named {name!r} (from {participant!r})")
        if player.id != creator.id:
            invitations[player.name] = "pending"
    return invitations


def check_accepted(tournament: HostedTournament) -> None:
    """Refuse (INVITATIONS_PENDING, naming who has not) to start a tournament before every
    invited player has accepted."""
    waiting = {n: a for n, a in tournament.invitations.items() if a != "accepted"}
    if waiting:
        raise ProtocolError(
            ErrorCode.INVITATIONS_PENDING,
            "the tournament can start once every invited player has accepted: "
            + ", ".join(f"{name} ({answer})" for name, answer in sorted(waiting.items())),
            {"tournament_id": tournament.id, **waiting},
        )


def check_invited(tournament: HostedTournament, player: Player) -> None:
    """Refuse (NOT_CHALLENGED) an answer from a player the tournament does not invite."""
    if player.name not in tournament.invitations:
        raise ProtocolError(
            ErrorCode.NOT_CHALLENGED,
            f"the tournament does not invite {player.name}",
            {"tournament_id": tournament.id},
        )


def check_owner(tournament: HostedTournament, player: Player, action: str) -> None:
    """Refuse (FORBIDDEN) anyone but the tournament's owner."""
    if tournament.owner_id != player.id:
        owner = tournament.owner_name or "the server"
        raise ProtocolError(
            ErrorCode.FORBIDDEN,
            f"only the tournament's owner ({owner}) may {action} it",
            {"tournament_id": tournament.id},
        )
