"""Hosted tournaments: tournaments between house bots (and players) whose games are server matches.

`TournamentService` is built in the lifespan next to the `MatchService` and kept on
`app.state.tournaments`. A tournament is created from a `TournamentCreate` body, started by its
owner, and played by one background task through the match service; watchers
(`/ws/tournaments/{id}`) get a `tournament_game_finished` per game and a `tournament_finished`
at the end.

Its rooms, each importing only those below it (an import-linter contract):

- `service`: the policies (maxima, invitations, the owner's rights) and the requests;
- `runner`: the task that plays a tournament's games as matches, with their ply cap;
- `store`: the tournament's and its games' rows;
- `tournament`: a tournament held in memory, its state and its watchers;
- `played`: one house-bot game played in-process (on a worker) as the finished match to store;
- `planning`: a request checked against the server's maxima, its spec and schedule;
- `wire`: competition.standings' tables as protocol models.

SPRT tournaments (`TournamentCreate.sprt`) play two bots' colour-swapped pairs until the test
decides: the runner starts no game after the decision, and the test is counted from the games
(server.tournaments.tournament), so a restart counts it again and plays on.

Scaled out (`ARENA_ROLE=server`, see server.tournaments.service): the games of a tournament
between house bots (but an SPRT) are played by `arena worker` processes
(server.jobs.tournament_games), each stored once as a finished match by
`TournamentStore.record_game`; a tournament with registered
players is still played here. Every process's watchers hear of each game and of the end over
the bus topic (server.tournaments.notices), and from the database should a notice be lost.

Restarts: `resume()` restarts the task of every running tournament; call it before
`MatchLifecycle.resume`, so the matches in flight are followed before their bots move again.
Games with a result are kept; a game whose match was created re-attaches to that match
(resumed by `MatchLifecycle.resume`); the rest are scheduled. A crash between a match's creation
and the storing of its game row leaves that match orphaned, and the game is played again.
"""

from server.tournaments.service import TournamentService

__all__ = ["TournamentService"]
