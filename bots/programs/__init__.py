"""Bots that are programs on disk, each run in a child process of its own (`child`): engines
speaking Arena's engine protocol (`external`, docs/ENGINES.md), Python plug-ins hosted by
`pyhost` (their interface is bots.plugin), and CheckerBoard-API libraries loaded by `cbhost`
and driven by `cbapi`.
"""
