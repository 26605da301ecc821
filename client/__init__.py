"""The network client that plays a bot on an Arena server (`arena bot`).

It may import `games`, `bots` and `protocol`; none of them, nor the server, imports it
(ARCHITECTURE.md).
"""

from client.session import BotClient, ChallengeFilter, ChallengePlan, ClientError, ServerUnreachable

__all__ = ["BotClient", "ChallengeFilter", "ChallengePlan", "ClientError", "ServerUnreachable"]
