"""A hosted bot's seat spec: `hosted:OWNER/NAME` (its active version) or `hosted:OWNER/NAME@N`.

A seat stores the second form, so a match, its record and its rating name one version for good.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

PREFIX: Final = "hosted:"
_SPEC = re.compile(
    r"^hosted:(?P<owner>[A-Za-z0-9][A-Za-z0-9_.\-]{0,31})/(?P<name>[a-z0-9][a-z0-9_\-]{0,31})"
    r"(?:@(?P<version>[1-9][0-9]{0,8}))?$"
)


class HostedSpecError(ValueError):
    """A `hosted:` spec that does not read as `hosted:OWNER/NAME[@N]`."""


@dataclass(frozen=True, slots=True)
class HostedSpec:
    """Which hosted bot a seat names: its owner's name, its name, and a version (None: the
    active one)."""

    owner: str
    name: str
    version: int | None = None

    def __str__(self) -> str:
        text = f"{PREFIX}{self.owner}/{self.name}"
        return text if self.version is None else f"{text}@{self.version}"

    def at(self, version: int) -> HostedSpec:
        """The spec of `version` of the same bot."""
        return HostedSpec(self.owner, self.name, version)

    @property
    def label(self) -> str:
        """`OWNER/NAME` or `OWNER/NAME@N`, as pages show it."""
        return str(self).removeprefix(PREFIX)


def is_hosted(spec: str) -> bool:
    """Return True for a spec naming a hosted bot (well formed or not)."""
    return spec.startswith(PREFIX)


def parse_hosted(spec: str) -> HostedSpec:
    """Return the hosted bot `spec` names; HostedSpecError when it does not read."""
    found = _SPEC.fullmatch(spec)
    if found is None:
        raise HostedSpecError(
            f"{spec[:80]!r} is not a hosted bot's spec: write hosted:OWNER/NAME or "
            "hosted:OWNER/NAME@VERSION"
        )
    version = found["version"]
    return HostedSpec(found["owner"], found["name"], None if version is None else int(version))
