"""Key facts of ASCII text (CPU): the fast path of ``asmr.text.facts``."""

from __future__ import annotations

from . import _cpu


class KeyFactExtractor:
    """Key facts of ASCII text, found natively (the fast path of asmr.text.facts).

    ``common_words``: lower-case ASCII words that name nothing when capitalised;
    ``fact_type(kind, text, norm)`` builds each fact, ``kind`` taken from ``kinds`` by index
    (number, date, version, code, entity). Calling it with a text returns a tuple of facts,
    or None for a text the Python extractor must take (a digit run over 300 characters).
    """

    KINDS = ("number", "date", "version", "code", "entity")

    def __init__(self, common_words, fact_type=tuple, kinds=KINDS):
        words = list(common_words)
        bad = next((w for w in words if not isinstance(w, str) or not w.isascii() or w != w.lower()), None)
        if bad is not None:
            raise ValueError(f"common_words: {bad!r} is not a lower-case ASCII string")
        if len(kinds) != len(self.KINDS):
            raise ValueError(f"kinds: need {len(self.KINDS)} names ({', '.join(self.KINDS)}), got {len(kinds)}")
        self._native = _cpu.KeyFactExtractor(words, fact_type, tuple(kinds))

    def __call__(self, text: str):
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if not text.isascii():
            raise ValueError("text must be ASCII (other text goes to the Python extractor)")
        return self._native.extract(text)
