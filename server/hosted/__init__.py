"""Users' bots hosted by the server: each one a player whose program runs in the sandbox."""
