"""panel package (see README)."""
