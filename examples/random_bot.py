"""A complete Arena bot in a few lines: random legal moves over the raw WebSocket protocol.

Usage: python random_bot.py ws://127.0.0.1:8000/ws TOKEN [MATCHES]   (see docs/PROTOCOL.md)
"""

import asyncio
import json
import random
import sys

from websockets.asyncio.client import connect


async def play(url: str, token: str, matches: int) -> None:
    """Play every match given to this player; return after `matches` ended (0: never)."""
    auth = {"Authorization": f"Bearer {token}"}
    async with connect(url, additional_headers=auth, max_size=None) as ws:
        await ws.send(json.dumps({"type": "hello", "protocol_version": "1.0", "client": "rnd"}))
        seats: dict[str, int] = {}  # match id -> our seat, from its match_state
        async for text in ws:
            msg = json.loads(text)
            kind, match_id = msg["type"], msg.get("match_id")
            if kind == "match_state" and msg["status"] == "active":
                seats[match_id] = msg["your_seat"]
            elif kind == "match_ended":
                matches -= 1
                if matches == 0:
                    return
            elif kind == "challenge":  # someone else seated us: accept, and play
                await ws.send(json.dumps({"type": "accept_challenge", "match_id": match_id}))
            elif kind == "error":
                print("error:", msg["code"], msg["message"], file=sys.stderr)
            if kind in ("match_state", "move_made") and msg["to_move"] == seats.get(match_id):
                move = random.choice(msg["legal_moves"])
                reply = {"type": "move", "match_id": match_id, "move": move}
                await ws.send(json.dumps({**reply, "expected_seq": msg["seq"]}))


if __name__ == "__main__":
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    asyncio.run(play(sys.argv[1], sys.argv[2], count))
