"""The one definition of a CJK character (kana, CJK ideograph or hangul syllable), shared by the
tokenizer, the embedder's word check, key facts, the support features and the verifier, so that
they never disagree on what is CJK text."""
import re

CJK_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # body of a [...] class
CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
# Scripts written without spaces between words or sentences (kana and ideographs; hangul has spaces):
# a citation marker or the next sentence follows their text directly.
SPACELESS_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
