"""Scale-out: several `arena serve` processes sharing one PostgreSQL database and one Redis.

See docs/SCALING.md. The match ownership (processes, leases with fencing, takeover, and the
forwarding of calls to a match's owner) is in `processes`, `leases` and `forwarding`.
"""
