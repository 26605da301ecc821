"""One JSON Schema document for every WebSocket message and REST body (the course routes'
included)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from protocol.class_tournaments import CLASS_TOURNAMENT_MODELS
from protocol.courses import COURSE_MODELS
from protocol.messages import CLIENT_MESSAGES, REST_MODELS, SERVER_MESSAGES, MatchState
from protocol.version import PROTOCOL_VERSION

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema() -> dict[str, Any]:
    """Return the JSON Schema of the protocol: every model under `$defs`.

    `$defs/ClientMessage` and `$defs/ServerMessage` are the WebSocket unions (one of the
    messages, told apart by `type`); the document itself validates any WebSocket message.
    """
    models: list[type[BaseModel]] = [
        *CLIENT_MESSAGES,
        *SERVER_MESSAGES,
        *REST_MODELS,
        *COURSE_MODELS,
        *CLASS_TOURNAMENT_MODELS,
    ]
    if MatchState not in models:
        models.append(MatchState)
    mode: JsonSchemaMode = "validation"
    refs, document = models_json_schema(
        [(model, mode) for model in models], ref_template="#/$defs/{model}"
    )
    defs: dict[str, Any] = document["$defs"]

    def union(messages: tuple[type[BaseModel], ...], description: str) -> dict[str, Any]:
        """Return the schema of a discriminated union of `messages`."""
        mapping = {
            str(message.model_fields["type"].default): refs[(message, mode)]["$ref"]
            for message in messages
        }
        return {
            "description": description,
            "oneOf": [{"$ref": ref} for ref in mapping.values()],
            "discriminator": {"propertyName": "type", "mapping": mapping},
        }

    defs["ClientMessage"] = union(CLIENT_MESSAGES, "A message from a client on a WebSocket.")
    defs["ServerMessage"] = union(SERVER_MESSAGES, "A message from the server on a WebSocket.")
    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"Arena wire protocol {PROTOCOL_VERSION}",
        "description": "WebSocket messages (ClientMessage, ServerMessage) and REST bodies of "
        "the Arena match server; see docs/PROTOCOL.md.",
        "x-protocol-version": PROTOCOL_VERSION,
        "oneOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": dict(sorted(defs.items())),
    }
