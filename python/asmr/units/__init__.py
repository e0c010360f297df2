"""Parsing documents into memory units: unit ids, versions, lifecycle."""
