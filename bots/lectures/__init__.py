"""The classic searches as the lectures teach them, in plain Python for reading and tracing.

`minimax`, `alphabeta` (the lecture's pseudocode, fail-hard or fail-soft), `negamax` (the
lecture's `ABNodeValue`), `mcts` (UCT with MCTS-Solver) and the one-ply bots of `simple`
(`random`, `greedy`). They name no game, take their evaluation, clock and random generator as
arguments, and import neither the engine nor any program from disk.
"""
