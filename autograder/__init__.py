"""autograder package of Arena (see docs/ARCHITECTURE.md)."""
