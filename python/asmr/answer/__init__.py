"""The path of one question end to end: retrieve, allowlist, prompt, generate, verify."""
