"""Allowlists, citation parsing, existence/status/support checks, degrading."""
