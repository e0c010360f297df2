"""The HTTP face."""
