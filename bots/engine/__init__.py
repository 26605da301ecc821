"""The house engine: negamax alpha-beta with a table, ordering, quiescence and iterative
deepening.

`search` is the engine in plain Python, `table` its transposition table, `timing` the time a
move may take; `compiled` drives the same search compiled by numba (bots.core), node for node
the Python one's, over the drivers of each game's core (`cores`, `checkers`, `connect4`);
`players` are the bots that run it (`alphabeta`, `id`).
"""
