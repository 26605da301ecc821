"""The match referee: turns, clocks, rejected moves, resign, draws, the ply cap, bot failures
and results, sans I/O.

A `Referee` holds one match. It reads no clock and does no I/O: every call takes the time of the
event, `now_ms`, as an integer count of milliseconds on a clock the caller chooses (a monotonic
clock in a server, a virtual one in tests), and returns a list of effects, small frozen
dataclasses that say what happened. The server turns effects into protocol messages and database
rows; a tournament runs the same referee in-process, so a game played over the network and
in-process is the same game.

Effects of one call come in this order: at most one `Event` first (the accepted event, to be
stored before anything is sent), then the messages (`MatchStarted`, `MoveAccepted`, `DrawOffered`,
`DrawDeclined`, `MatchEnded`, `Rejected`). Every accepted event increases `seq` by exactly one;
all effects of one event carry its `seq`. A rejected call changes nothing but, for an illegal or
unreadable move, or a move out of turn, that player's count of rejected moves (and `seq` stays).

Time: the side to move's clock runs from the moment its turn begins (the start, or the previous
move) until its move arrives; the time used is subtracted, then the increment is added. A flag
falls when the time used in a turn exceeds the clock (a move with exactly 0 ms left is in time)
or exceeds the time control's cap per move. Every call first lets a fallen flag end the match,
then handles its own event against the match as it then stands; `tick` does only the first part.

Restarts: `Referee.restore` replays the stored `Event`s. Each event stores `elapsed_ms`, the time
since the side to move's turn began, so replay needs no wall clock and gives the same clocks.

The package: `referee` (the `Referee`: each event's rules, and restarts) over `ledger` (what a
match has come to and how it reads: its position, accepted events, clocks, rejected-move counts,
draw offer and result, and the bookkeeping every event does).
"""

from games.referee.referee import Referee

__all__ = ["Referee"]
