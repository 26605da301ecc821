"""Several `arena serve` processes sharing PostgreSQL and Redis (docs/SCALING.md).

Clustered (`Settings.clustered`: a Redis URL and a PostgreSQL database), each process builds a
`Bus` (server.cluster.bus) in its lifespan, kept on `app.state.bus` (None when not clustered):

- `Bus(settings, process_id=None)`; `process_id` (default `new_process_id()`: host-pid-random)
  addresses requests to this process; `start()`, `close()`; `connected`, `wait_connected(s)`.
- `publish_match(broadcast)`: a MatchService listener (never blocks: it queues); every other
  process hands the broadcast to its `on_match(handler, wanted=None)` handlers, in publication
  order (`wanted(match_id, players, seqs)` may decline it before it is parsed).
- `on_reconnect(handler)`: awaited after the bus reached Redis again following an outage.
- `request(process_id, payload, timeout_s=None) -> dict` and `serve(handler)`: a request
  addressed to one process, answered by its handler (JSON objects both ways). Raises
  `BusUnavailable` when Redis is away, nobody listens at `process_id`, or no answer came within
  `timeout_s` (default `bus_rpc_timeout_s`); `RemoteError` when the handler raised.
- `publish(topic, payload)` / `subscribe(topic, callback) -> unsubscribe`: a topic delivered
  to every subscriber in every process (the publishing one too).

Its errors (`BusError`, `BusUnavailable`, `RemoteError`), its handlers' types, `MatchNotice`
and a match broadcast's envelope are server.cluster.envelopes'; the bus publishes this
process's broadcasts with a `BroadcastSender` (server.cluster.sender) and carries requests with
`Requests` (server.cluster.requests).

`MatchBridge` (server.cluster.bridge) hands the other processes' broadcasts to the local hub in
seq order per match (duplicates dropped; a gap, a lost broadcast's `MatchNotice` or a reconnect
resends the state). The app (server.app) wires both when clustered; without a bus the server is
the single process it always was.

Match ownership (server.cluster.leases, .processes, .routing, .forwarding): each unfinished
match is played by one live process, its owner (a PostgreSQL lease with fencing); the router
wraps the match service from outside, and calls on a match from other processes are forwarded
to the owner over the bus; a dead owner's matches are taken over by the live processes. The
match service never imports the cluster (an import-linter contract): it is given the leases
as its `ownership` and the router as its `route`.

Import from the modules (`from server.cluster.bus import Bus`): this package imports nothing.
"""
