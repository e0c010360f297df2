"""The citation-closure state machine and its framework adapters."""
