"""tournament package of Arena (see ../shared/ARCHITECTURE.md)."""
