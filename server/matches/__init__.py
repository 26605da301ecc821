"""Hosted matches: the match service and the rooms it is made of.

`MatchService` (server.matches.service) is built in the lifespan and kept on
`app.state.service`; every call on a match runs there under the match's lock: referee,
commit, publish. The package never imports the cluster (server.cluster): a cluster gives the
store its leases as an `Ownership` and wraps the service's calls from outside (its `route`).

Its rooms, each importing only those below it (an import-linter contract):

- `queries`: listings and exports (a page of summaries, a record, PDN, a match's web page);
- `service`: the match service, every call on a match under its lock;
- `calls`, `lifecycle`: the calls on a match as callers make them, each sent through the
  service's `route`; the matches held here, resumed, taken over, announced when claimed and
  dropped;
- `housebots`, `ticker`, `publisher`, `setup`: the house bots, the clock ticker, publishing
  to the listeners, a new match's set-up and the seat policies;
- `store`, `translation`, `commands`, `builtbots`: loading and committing; the translation of
  referee effects into protocol messages and errors (the only module writing wire messages
  from them); the calls on a match as values, which a cluster routes; the house bots built
  for the seats, their specs checked against the maxima;
- `live`, `playahead`, `search_pool`, `ownership`: a match held in memory, house bots' games
  played ahead in a child process, the pool of threads their searches run on, and the claims
  a cluster makes on matches (the protocol its leases keep for the store).

Import from the modules (`from server.matches.service import MatchService`): this package
imports nothing itself.
"""
