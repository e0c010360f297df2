"""Key-fact extraction and the redundancy block of the prompt."""
