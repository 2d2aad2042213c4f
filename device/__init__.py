"""device package (see README)."""
