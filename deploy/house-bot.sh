#!/bin/sh
# A house bot as an outside player (docker-compose.yml, service house-bot): register the player
# $ARENA_BOT_NAME once, keep its token in $ARENA_BOT_DIR (default /var/lib/arena-bot, a volume),
# then play every challenge sent to it with the bot $ARENA_BOT_SPEC through $ARENA_SERVER (the
# proxy).
set -eu
token_file="${ARENA_BOT_DIR:-/var/lib/arena-bot}/$ARENA_BOT_NAME.token"
if [ ! -s "$token_file" ]; then
    # Until the servers answer through the proxy; a name already taken without its token here
    # (the volume was removed) is an error that retrying cannot fix.
    python3 - "$ARENA_SERVER" "$ARENA_BOT_NAME" "$token_file" <<'PY'
import json, sys, time, urllib.error, urllib.request

server, name, path = sys.argv[1:]
body = json.dumps({"name": name}).encode()
while True:
    request = urllib.request.Request(
        f"{server}/players", body, {"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            token = json.load(response)["token"]
        break
    except urllib.error.HTTPError as error:
        if error.code == 409:
            sys.exit(f"the player {name} exists but its token is not in {path}: "
                     "set ARENA_BOT_NAME to a new name")
        print(f"registering {name}: HTTP {error.code}, retrying", file=sys.stderr)
    except OSError as error:
        print(f"registering {name}: {error}, retrying", file=sys.stderr)
    time.sleep(2)
with open(path, "w") as out:
    out.write(token)
PY
fi
exec arena bot --server "$ARENA_SERVER" --token "$(cat "$token_file")" --bot "$ARENA_BOT_SPEC"
