"""Persistence: the schema (SQLAlchemy 2), engines and migrations (alembic)."""
