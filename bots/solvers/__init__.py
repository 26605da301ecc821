"""Exact values: `solve` gives the game-theoretic value of a position and every optimal move
(`arena solve`); `connect4` is the Connect Four solver in plain Python, the reference of the
compiled one (bots.core.connect4). The checkers endgame database is its own package, bots.egdb.
"""
