"""Hosted bots: bots players upload for the server to run, each match's in a sandboxed process
of its own, speaking the engine protocol (docs/PROTOCOL.md, "Hosted bots").

`HostedBots` (service) is built in the lifespan and kept on `app.state.hosted`: bots and their
versions (an upload is unpacked, checked, started once in the sandbox and kept for good), the
seats of matches (`hosted:OWNER/NAME` plays the active version, `hosted:OWNER/NAME@N` that
version), and the failures only a bot's owner reads. Its rooms: `launch` (a version's program
started by `engine`, in the sandbox), `service`, then `store` (rows) and `files` (the private
directory), then `specs` (the seat specs).
"""

from server.hosted.service import HostedBots
from server.hosted.specs import HostedSpec, parse_hosted

__all__ = ["HostedBots", "HostedSpec", "parse_hosted"]
