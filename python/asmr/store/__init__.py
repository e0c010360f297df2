"""The persistent memory: SQLite metadata, vector matrix, index files."""
