"""Validation problems in plain words: what is wrong with a field, and what it may hold.

pydantic says "Tuple should have at least 2 items after validation, not 1" and "String should
match pattern '^[a-z][a-z0-9_]*(:[^\\s:]*)?$'". A person filling in a form, or reading a client's
error, wants "needs at least 2 players (house bots or player:NAME), not 1" and "'a b' is not a
bot spec (NAME or NAME:KEY=VALUE,...) or player:NAME". `explain` says each of pydantic's
problems (one of `ValidationError.errors()`) so, naming an entry of a list by its place (from 1)
and its value; `FIELDS` holds what the fields of the wire models are called and may hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SHOWN_CHARACTERS = 40
"""How much of a refused value a message repeats."""

FIELDS: Mapping[str, tuple[str, str, str]] = {
    "bots": (
        "player",
        "players (house bots or player:NAME)",
        "a bot spec (NAME or NAME:KEY=VALUE,..., as GET /bots lists them) or player:NAME",
    ),
    "openings": (
        "opening",
        "openings",
        "an opening on one line: moves from the start (11-15 23-19) or fen: and a position",
    ),
    "deck": ("deck", "decks", "a deck's name, such as acf-3move"),
    "seats": ("seat", "seats", "a player's name, open, or {'bot': SPEC}"),
    "moves": ("move", "moves", "a move in the game's notation"),
    "name": ("name", "names", "1 to 32 letters, digits, _ . -, starting with a letter or digit"),
    "game": ("game", "games", "a game's name as GET /games lists it"),
    "bot": ("bot", "bots", "a bot spec (NAME or NAME:KEY=VALUE,..., as GET /bots lists them)"),
}
"""For a field: one of its entries, its entries (when it is a list), and what it may hold."""


def explain_all(problems: Sequence[Mapping[str, Any]]) -> list[tuple[tuple[Any, ...], str]]:
    """Return (location, words) for each of pydantic's problems worth saying, in order.

    Left out: a list "too short" only because an entry of it was refused (`is_redundant`), and
    the members of a union an entry failed (a seat is a name or {"bot": SPEC}): an entry is
    explained once, by the member whose own field was refused, else as not what it may hold.
    """
    said: list[tuple[tuple[Any, ...], str]] = []
    unions: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for problem in problems:
        location = tuple(problem.get("loc", ()))
        tag = next((i for i, part in enumerate(location) if _is_member(part)), None)
        if tag is None:
            if not is_redundant(problem):
                said.append((location, explain(problem)))
            continue
        entry = location[:tag]
        if entry not in unions:
            unions[entry] = []
            said.append((entry, ""))  # its place, filled in below
        unions[entry].append(problem)
    return [
        (location, words or _explain_union(location, unions[location])) for location, words in said
    ]


def _explain_union(entry: tuple[Any, ...], members: list[Mapping[str, Any]]) -> str:
    """Say why an entry fits none of a union's members: by the member whose own field was
    refused (a house bot's spec), else as not what the entry may hold."""
    deeper = [
        problem
        for problem in members
        if len([p for p in problem.get("loc", ()) if not _is_tag(p)]) > len(entry)
    ]
    if deeper:
        return explain(deeper[0])
    field, index = _field_and_index([part for part in entry if not _is_tag(part)])
    words = FIELDS.get(field or "")
    value = members[0].get("input")
    one = words[0] if words else "entry"
    allowed = words[2] if words else "of a form allowed here"
    if index is None:
        return f"{_shown(value)} is not {allowed}"
    return f"{one} {index + 1} ({_shown(value)}) is not {allowed}"


def explain(problem: Mapping[str, Any]) -> str:
    """Return one of pydantic's validation problems in plain words.

    An entry of a list is named by its place, counted from 1, and its value: "player 2
    ('a b') is not ...". A kind of problem not known here keeps pydantic's own words.
    """
    location = [part for part in problem.get("loc", ()) if not _is_tag(part)]
    field, index = _field_and_index(location)
    words = FIELDS.get(field or "")
    value = problem.get("input")
    what = _what(str(problem.get("type", "")), problem.get("ctx") or {}, value, problem, words)
    if index is None:
        return what
    one = words[0] if words else "entry"
    return f"{one} {index + 1} ({_shown(value)}) {what}"


def is_redundant(problem: Mapping[str, Any]) -> bool:
    """Return True for a problem that only repeats another: a list "too short" because one
    of its entries was refused (pydantic counts the entries that passed)."""
    value = problem.get("input")
    context = problem.get("ctx") or {}
    return (
        problem.get("type") == "too_short"
        and isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) >= int(context.get("min_length", 0))
    )


def _is_member(part: Any) -> bool:
    """Return True for a location part naming the member of a union tried (`str`, `HouseBot`,
    `constrained-str`), as opposed to a field or the body."""
    return _is_tag(part) and part not in ("body", "list")


def _is_tag(part: Any) -> bool:
    """Return True for a location part that names no field: the request's body, the member of
    a union tried (a type's name: `str`, `HouseBot`) or its tag (`list`)."""
    if not isinstance(part, str):
        return False
    return (
        part in ("body", "list", "str", "int", "float", "bool") or part[:1].isupper() or "-" in part
    )


def _field_and_index(location: list[Any]) -> tuple[str | None, int | None]:
    """Return the last named field of a location, and the list index after it (if any)."""
    field = None
    index = None
    for part in location:
        if isinstance(part, int):
            index = part
        else:
            field, index = str(part), None
    return field, index


def _what(
    kind: str,
    context: Mapping[str, Any],
    value: Any,
    problem: Mapping[str, Any],
    words: tuple[str, str, str] | None,
) -> str:
    """Say what is wrong, as a predicate: "must be at least 1, not 0"."""
    many = words[1] if words else "entries"
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a field of this request"
    if kind == "too_short":
        return f"needs at least {context['min_length']} {many}, not {_count(value, context)}"
    if kind == "too_long":
        return f"takes at most {context['max_length']} {many}, not {_count(value, context)}"
    if kind == "string_too_short":
        if context.get("min_length") == 1:
            return "must not be empty"
        return f"must be at least {context['min_length']} characters long"
    if kind == "string_too_long":
        return f"must be at most {context['max_length']:,} characters long"
    if kind == "string_pattern_mismatch":
        allowed = f"is not {words[2]}" if words else "has a character or form not allowed here"
        # An entry of a list is shown with its place already (see `explain`).
        return allowed if _is_entry(problem) else f"{_shown(value)} {allowed}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number, not {_shown(value)}"
    if kind in ("float_type", "float_parsing", "finite_number"):
        return f"must be a number, not {_shown(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, not {_shown(value)}"
    if kind == "string_type":
        return f"must be text, not {_shown(value)}"
    if kind == "greater_than_equal":
        return f"must be at least {context['ge']}, not {_shown(value)}"
    if kind == "greater_than":
        return f"must be more than {context['gt']}, not {_shown(value)}"
    if kind == "less_than_equal":
        return f"must be at most {context['le']}, not {_shown(value)}"
    if kind == "less_than":
        return f"must be less than {context['lt']}, not {_shown(value)}"
    if kind == "multiple_of":
        step = context["multiple_of"]
        even = "even" if step == 2 else f"a multiple of {step}"
        return f"must be {even}, not {_shown(value)}"
    if kind == "literal_error":
        return f"must be {context['expected']}, not {_shown(value)}"
    return str(problem.get("msg", "is not valid"))


def _is_entry(problem: Mapping[str, Any]) -> bool:
    """Return True when the problem is of an entry of a list (its location holds an index)."""
    location = [part for part in problem.get("loc", ()) if not _is_tag(part)]
    return _field_and_index(location)[1] is not None


def _count(value: Any, context: Mapping[str, Any]) -> int:
    """Return how many entries were given (pydantic's count is of those that passed)."""
    if isinstance(value, Sequence | Mapping) and not isinstance(value, str):
        return len(value)
    return int(context.get("actual_length", 0))


def _shown(value: Any) -> str:
    """Return a refused value as a message repeats it: quoted text, cut at SHOWN_CHARACTERS."""
    text = repr(value) if isinstance(value, str) else str(value)
    if len(text) > SHOWN_CHARACTERS:
        return text[: SHOWN_CHARACTERS - 3] + "..."
    return text
