"""The server's limits, one module for each thing limited.

- `compute`: what a user may ask the server to compute (house and tournament bots' searches,
  game sizes) and the bots offered with those maxima;
- `rates`: how often a token, an address or a connection may act (REST actions, WebSocket
  messages);
- `bodies`: how large a REST request's body may be, refused before it is read.
"""
