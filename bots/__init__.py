"""Game-tree search bots, from the lectures' searches to the engine, a folder per rung.

`lectures/` holds the classic searches as taught, `engine/` the house engine (its compiled hot
loops in `core/`), `evaluation/` each game's evaluations, `solvers/` and `egdb/` exact values,
`programs/` the bots that are programs on disk and `trace/` a search's tree for teaching. The
root holds what every bot needs: results and scores, the recorder, what a bot is and the bots
by spec name, and the plug-in interface (`bots.plugin`).

Search code names no game: it reaches a game only through the `games` interface and the
per-game `Knowledge` (evaluations, move ordering, quiescence, symmetries; bots.evaluation).
No search module reads a clock or global randomness; both are passed in.
"""
