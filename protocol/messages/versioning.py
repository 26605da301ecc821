"""What a client or server of an older minor version is sent: the fields newer than it left out.

A field added in a minor version names it under `SINCE` in its JSON Schema (docs/PROTOCOL.md,
"Versioning").
"""

from __future__ import annotations

import functools
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from protocol.version import parse_version

SINCE = "x-since"
"""The JSON Schema key of a field added in a minor version: its value is that version.

`dump_server_message(message, version)` leaves out the fields a client's version does not
know (docs/PROTOCOL.md, "Versioning")."""


def newer_fields(model: type[BaseModel], version: tuple[int, int]) -> dict[str, Any] | None:
    """Return the `exclude` of `model_dump` that leaves out the fields newer than `version`.

    Nested models are followed (a field holding a model, an optional one, or a tuple of them);
    None when every field is known at `version`.
    """
    return _newer_fields(model, version)


def json_for_version(data: Any, model: type[BaseModel], version: tuple[int, int]) -> Any:
    """Return `data`, the JSON value of a `model`, without the fields newer than `version`.

    For a REST answer already dumped: the fields left out are those of `newer_fields`.
    """
    return _prune(data, newer_fields(model, version))


def _prune(data: Any, exclude: dict[str, Any] | None) -> Any:
    if exclude is None or not isinstance(data, dict):
        return data
    kept = {}
    for key, value in data.items():
        rule = exclude.get(key)
        if rule is True:
            continue
        if isinstance(rule, dict) and "__all__" in rule and isinstance(value, list):
            kept[key] = [_prune(item, rule["__all__"]) for item in value]
        elif isinstance(rule, dict):
            kept[key] = _prune(value, rule)
        else:
            kept[key] = value
    return kept


@functools.cache
def _newer_fields(model: type[BaseModel], version: tuple[int, int]) -> dict[str, Any] | None:
    exclude: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        extra = field.json_schema_extra
        since = extra.get(SINCE) if isinstance(extra, dict) else None
        if isinstance(since, str) and parse_version(since) > version:
            exclude[name] = True
            continue
        for inner, many in _models_in(field.annotation):
            nested = _newer_fields(inner, version)
            if nested is not None:
                exclude[name] = {"__all__": nested} if many else nested
    return exclude or None


def _models_in(annotation: Any, many: bool = False) -> list[tuple[type[BaseModel], bool]]:
    """Return the models a field's annotation holds, each with whether it is in a sequence."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, many)]
    origin = get_origin(annotation)
    inside = many or origin in (tuple, list)
    return [found for arg in get_args(annotation) for found in _models_in(arg, inside)]
