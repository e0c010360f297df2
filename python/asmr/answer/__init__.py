"""The path of one question end to end: retrieve, allowlist, prompt, generate, verify."""
from .answerer import NOT_FOUND, Answer, AnswerConfig, Answerer, Citation

__all__ = ["NOT_FOUND", "Answer", "AnswerConfig", "Answerer", "Citation"]
