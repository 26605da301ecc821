"""Game-tree search bots: game-independent algorithms, per-game evaluations and bot specs.

Search code names no game: it reaches a game only through the `games` interface and the
per-game `Knowledge` (evaluations, move ordering, quiescence, symmetries) in bots.knowledge.
No search module reads a clock or global randomness; both are passed in.
"""
