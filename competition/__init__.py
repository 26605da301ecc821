"""Local competitions and their statistics: tournaments, gauntlets and SPRT matches played
in-process, with Elo, Glicko-2, standings and reports (docs/TOURNAMENTS.md)."""
