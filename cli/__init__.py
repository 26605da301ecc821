"""The `arena` command line: one Typer app composed of a command group per package."""
