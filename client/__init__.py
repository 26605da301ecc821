"""The network client that plays a bot on an Arena server (`arena bot`).

Split by job: the session with its reconnections (`session`), the matches followed and the
moves answered in them (`play`, over the views of `matches`), the connection's sends and
backoff (`connection`), challenges accepted and sent (`challenges`), the REST requests
(`rest`) and the failures reconnecting cannot fix (`errors`). It may import `games`, `bots`
and `protocol`; none of them, nor the server, imports it (ARCHITECTURE.md).
"""

from client.challenges import ChallengeFilter, ChallengePlan
from client.errors import ClientError, ServerUnreachable
from client.session import BotClient

__all__ = ["BotClient", "ChallengeFilter", "ChallengePlan", "ClientError", "ServerUnreachable"]
