"""Entity mentions in unit text, found without any hosted model.

An entity is a normalised key (lower case, punctuation and a leading "the"
removed). Three sources:

- capitalised spans: runs of capitalised words, joined through particles of
  names ("Bank of Norvale", "Harrowgate, North Averne" gives two); a lone
  capitalised word that opens a sentence and is a common word is not one;
- codes: identifiers with digits or dashes (``ERR 4471``, ``ISO-8601``,
  ``v2.3``, ``--port``);
- CJK names: text in 《》「」『』“” quotes.

Document titles are entities too (``title_key``): a unit that names another
document's title links to that document's units, the signal that carries most
two-hop questions.
"""
from __future__ import annotations

import re

from .cjk import fold_han
from .words import dictionary_word

_CONNECTORS = r"(?:(?:of|de|del|della|der|di|da|du|des|la|le|von|van|y|&)(?:[ \t]+the)?)"
_WORD_TAIL = r"(?:[\w'’\-]|\.(?=\w))*"  # "U.S." keeps its inner dots, a sentence's last dot goes
_CAPWORD = rf"(?:[A-Z]{_WORD_TAIL}|[0-9]+(?:\.[0-9]+)*(?:st|nd|rd|th)?)"  # "Release 2.4" whole: not "Release 2"
_CAP_SPAN = re.compile(rf"(?<![\w'’])[A-Z]{_WORD_TAIL}(?:[ \t]+(?:{_CONNECTORS}[ \t]+)*{_CAPWORD})*")
_CODE = re.compile(r"(?<![\w-])(?:--[a-z][a-z0-9-]+|[A-Z]{2,}[- ]?\d[\w.-]*|v?\d+\.\d+(?:\.\d+)*[a-z]?)(?![\w])")
_CJK_QUOTED = re.compile(r"[《「『“]([^》」』”\n]{1,30})[》」』”]")
_PUNCT = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")

# Capitalised only because they open a sentence or a heading: not entities on their own.
COMMON_WORDS = frozenset("""
a an the this that these those it its he she they we you i his her their our your my in on at of for to
from by with as and or but if when while after before during since until after although because however
there here what which who whom whose where why how all any each every some no not one two three many
most more also other such then thus so yet is are was were be been has have had do does did can could
may might must shall should will would about above below between into over under up down out new
""".split())


def split_words(text: str) -> list[str]:
    """The words of ``text`` as ``normalize`` splits them (punctuation is a space), case kept."""
    return _PUNCT.sub(" ", text).split()


def normalize(text: str) -> str:
    """The key of a name: lower case, Traditional Han as Simplified (``fold_han``), punctuation dropped,
    spaces collapsed, no leading "the"."""
    key = _SPACES.sub(" ", _PUNCT.sub(" ", fold_han(text).lower())).strip()
    return key[4:] if key.startswith("the ") else key


def title_name(title: str) -> str:
    """A document title without the qualifier in brackets that closes it: "Solby (harbour)" is "Solby".
    The qualifier tells pages of one name apart; it is not what the page is about."""
    return _PAREN.sub("", title)


def title_key(title: str) -> str:
    """A document title as a name: "Solby (harbour)" is named "solby"."""
    return normalize(title_name(title))


_TITLE_OPENING = re.compile(r"([A-Z][a-z]+)[ \t]+[a-z]")


def title_names(title: str) -> set[str]:
    """The names a document title holds (``mentions`` of it without its qualifier), less its first word
    where the title capitalises it only as a sentence would: a dictionary word followed by lower-case
    words of its own phrase ("Harbour closures of 1968" names no "harbour", "Ferry timetables" no
    "ferry"; "Sorrel, 2031-04-02" still names Sorrel)."""
    name = title_name(title)
    found = mentions(name)
    opening = _TITLE_OPENING.match(name)
    if opening and dictionary_word(opening.group(1)):
        found.discard(opening.group(1).lower())
    return found


def capitalised_spans(text: str) -> list[str]:
    """The runs of capitalised words of ``text``, as written, joined across connectors ("Bank of America",
    "The Golden Gate Bridge")."""
    return [m.group(0) for m in _CAP_SPAN.finditer(text)]


def mentions(text: str) -> set[str]:
    """Entity keys mentioned in ``text``."""
    out: set[str] = set()
    for m in _CAP_SPAN.finditer(text):
        span = m.group(0).rstrip(".-'’")
        words = span.split()
        if len(words) == 1 and (span.lower() in COMMON_WORDS or len(span) < 2):
            continue
        if words[0].lower() in COMMON_WORDS and opens_sentence(text, m.start()):
            words = words[1:]  # "The Lantern" at a sentence start keeps "Lantern"
        while words and words[0][0].isdigit():
            words = words[1:]  # "In 1979 Jean ..." names Jean, not a year
        if not words:
            continue
        key = normalize(" ".join(words))
        if key and key not in COMMON_WORDS:
            out.add(key)
    for m in _CODE.finditer(text):
        out.add(m.group(0).lower())  # codes keep their punctuation: "v2.3", "--port"
    for m in _CJK_QUOTED.finditer(text):
        out.add(normalize(m.group(1)))
    out.discard("")
    return out


_DIGITS = re.compile(r"\d+")


def code_kind(code: str) -> str | None:
    """What kind of code ``code`` is: its letters and marks with each number as "#" ("err-#" for
    "err-4471", "v#.#" for "v2.3"); None for one without both letters and digits (a bare "2.3" may be a
    measure, "--port" an option), which no kind tells apart."""
    kind = _DIGITS.sub("#", code)
    return kind if kind != code and any(c.isalpha() for c in kind) else None


def kind_pattern(kinds: set[str]) -> re.Pattern:
    """A pattern of the codes of ``kinds`` (``code_kind``) in lower-cased text, its matches to be taken
    where no word character or dash comes before them (``kind_codes``): a lookbehind would keep the
    regex engine from searching for the literal the codes begin with, several times slower."""
    alternatives = "|".join(re.escape(k).replace("\\#", "#").replace("#", r"\d+") for k in sorted(kinds))
    return re.compile(rf"(?:{alternatives})(?![\w])")


def kind_codes(text: str, kinds: re.Pattern) -> set[str]:
    """The codes of ``text`` that ``kinds`` (a ``kind_pattern``) finds, lower-cased."""
    low = text.lower()
    return {m.group(0) for m in kinds.finditer(low)
            if not m.start() or not (low[m.start() - 1].isalnum() or low[m.start() - 1] in "-_")}


_CAP_WORD = re.compile(rf"(?<![\w'’])[A-Z]{_WORD_TAIL}")


def opens_sentence(text: str, k: int) -> bool:
    """Whether the word at ``text[k]`` opens the text or a sentence in it: nothing before it, or only
    spaces after a sentence's last mark (".!?:;") or after a line break. Scanned back from ``k``, not
    searched from the text's start, which made finding names quadratic in a long unit."""
    j = k
    while j and text[j - 1].isspace():
        j -= 1
    return not k or (0 < j < k and text[j - 1] in ".!?:;") or "\n" in text[j:k]


def capitalised_words(text: str) -> tuple[list[str], list[str]]:
    """The capitalised words of ``text``, lower-cased: those inside a sentence (names, as a rule), and
    those that open one (a name, or any word at a sentence's start)."""
    inner: list[str] = []
    opening: list[str] = []
    for m in _CAP_WORD.finditer(text):
        (opening if opens_sentence(text, m.start()) else inner).append(m.group(0).lower())
    return inner, opening


def unit_entities(text: str, titles: frozenset[str] | set[str], cjk_titles: list[str] = ()) -> set[str]:
    """Entity keys of a unit: its mentions, plus every document title named inside a capitalised span
    ("Ilsa Marrowby's report The Lantern" names "ilsa marrowby" and "lantern"). Of titles inside one
    another only the longest counts ("Marrow Lake Ferry", not also "Marrow Lake"), and a one-word title
    only as the whole name: "Port Solby Road" does not name a page titled "Solby"."""
    out = mentions(text)
    for span in capitalised_spans(text):
        words = normalize(span).split()
        while words and words[0] in COMMON_WORDS:
            words = words[1:]  # "Which Solby ..." at a question's start is still Solby
        if words and words[-1] == "s":
            words = words[:-1]  # a possessive: "Solby's" names Solby
        found: list[tuple[int, int]] = []  # (start, end) of each title in the span
        for i in range(len(words)):
            for n in range(1, min(6, len(words) - i) + 1):
                if (n > 1 or len(words) == 1) and " ".join(words[i:i + n]) in titles:
                    found.append((i, i + n))
        for i, j in found:
            if not any(a <= i and j <= b and (a, b) != (i, j) for a, b in found):
                out.add(" ".join(words[i:j]))
    if cjk_titles:
        low = fold_han(text).lower()  # the titles are normalize()d, so folded
        out.update(k for k in cjk_titles if k in low)
    return out
