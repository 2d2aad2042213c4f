"""calibration package (see README)."""
