"""Maintenance tools (run by hand, not at run time)."""
