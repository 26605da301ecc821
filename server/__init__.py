"""The Arena server: the FastAPI app, its services (matches, tournaments, grading, courses) and
their storage, limits and processes (docs/ARCHITECTURE.md)."""
