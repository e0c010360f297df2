"""A generated enterprise knowledge base and its questions, for the answer-accuracy benchmark.

``generate(out_dir, seed=0, units_target=5000, questions=800, deep_questions=None, family="A")``
writes, deterministically for a seed and family (no clock, no set iteration)::

    out_dir/docs/v1/<area>/<name>.md   the knowledge base as first published
    out_dir/docs/v2/<area>/<name>.md   one revision round: the same paths
    out_dir/queries.jsonl              the questions
    out_dir/corpus.jsonl               the v2 documents, one {"pid", "title", "text", "type",
                                       "effective_date"} a line (pid: the document id)
    out_dir/corpus.queries.jsonl       the questions as {"qid", "question", "answers", "gold_pids",
                                       "answerable", "category"} (category: the type), the format
                                       of ``asmr eval retrieval --corpus --queries``
    out_dir/README.md                  counts per type, documents, units, seed, family

Documents describe an invented company. Areas: ``systems/`` (service specifications, type
``spec``), ``runbooks/`` (``manual``), ``changelogs/`` (``changelog``), ``teams/`` (``notes``),
``policies/`` (``other``), ``handbook/`` (``manual``) and ``faq/`` (``faq``). Each starts with
front matter (``title``, ``type``, ``effective_date``) and an H1, then ``##`` sections of
paragraphs, bulleted or numbered lists and pipe tables. Every checkable fact (a number with
its unit, a date, a version, a code, a name) lives in exactly one line, which is one unit
for ASMR's chunker: a paragraph, a list item or a table row. That line names its subject
(a table's header does for its rows), so a question can be answered by that unit alone.
Names of systems, teams and people are invented, and no name contains another of its kind.
The name pools bound the size to about 10,000 units (a ValueError beyond).

Version 2 keeps every path. A revised document has a later ``effective_date`` and some of:
changed values (a rule's limit, a rotation, a support date: ingesting v2 over v1
supersedes those units), removed sections (their units become deprecated) and added
sections, list items or table rows. Unrevised documents are byte-identical in v1 and v2.

``queries.jsonl`` holds one JSON object a line::

    {"qid": "q0001", "question": "...", "type": "single|multi|conflict|unanswerable|multi3|multi4",
     "answers": [...],       # accepted surface forms of the gold answer ("512 MB", "512MB"),
                             # for each key fact in turn; [] if unanswerable
     "key_facts": [...],     # the facts an answer must state, all of them, as the documents
                             # write them (a multi question may have two)
     "gold_docs": [...],     # document ids (asmr.units.ids.doc_id_from_path of the path)
     "gold_texts": [...],    # exact substrings of the v2 documents holding the answer, one
                             # per gold document, in the same order: a unit's whole span
     "stale_answers": [...], # conflict: the v1 value, absent from v2, that must not be given
     "subject": "...", "field": "..."}  # unanswerable only: what is asked about, and the
                             # field label no document about that subject contains

Types, in the shares of ``MIX``: ``single`` asks for one fact; ``multi`` needs two or three
documents (for example the error code's runbook names the system, the system's
specification names its team, the team page names its lead) and its answers are the final
facts; ``conflict`` asks for a value a revision changed: the v2 value is the answer;
``unanswerable`` asks for a field other subjects of the same kind state but this one never
does (in either version), or for a rule a policy could hold but does not.

After those, ``deep_questions`` (default a tenth of ``questions``, drawn from a random stream of
their own so that the questions before them are the same as without them) follow chains whose
bridges (the systems and teams in between) the question does not name: ``multi3`` crosses three documents
(an error code's runbook names the system, its specification names the owning team, the team
page names the office, lead or escalation channel; or a policy rule names a system, and so on;
or a system's dependency names another system, whose team's lead is asked), ``multi4`` four (an
error code's runbook or a policy rule, that system's dependency, the dependency's owner, its
team's page). Their
``gold_docs`` are the chain in order, so the answer is in the last one.

Template families: ``family="A"`` (the default) words the documents and questions as
``synth_world`` and ``synth_vocabulary`` do; ``family="B"`` builds the same world and rewrites
it with ``synth_family_b``, written apart: other titles, sentences, list shapes and question
forms, the same facts, values, paths and question types.

``load_queries(path)`` reads the questions back, checking each line; ``surface_forms(value)``
gives the accepted forms of one value.

The tables the documents draw on are in ``synth_vocabulary``, the invented company and its
documents in ``synth_world``; this module asks the questions and writes the files.
"""
from __future__ import annotations

import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path

from .jsonl import records
from ..units.model import Document
from ..units.read import chunk_document
from .synth_vocabulary import MONTH_NAMES
from .synth_world import Doc, Fact, Piece, World, alive, build_world

TYPES = ("single", "multi", "conflict", "unanswerable")
MIX = {"single": 0.45, "multi": 0.20, "conflict": 0.15, "unanswerable": 0.20}
DEEP_TYPES = ("multi3", "multi4")  # appended after the questions of TYPES, from their own random stream
ALL_TYPES = TYPES + DEEP_TYPES
DEEP_SHARE = 0.10  # deep questions by default, as a share of ``questions``
FAMILIES = ("A", "B")

# Family A's wording of the questions that follow a chain of documents. Family B has its own
# (synth_family_b.CHAIN_QUESTIONS); the keys are the chains.
CHAIN_QUESTIONS = {
    # two or three documents (type multi)
    "owner_rotation": "Which team owns the system that {function}, and what is that team's on-call rotation?",
    "owner_lead": "Which team owns the system that {function}, and who leads that team?",
    "channel": "In which channel are incidents of {name} escalated?",
    "code_lead": "Who leads the team that owns the system raising error code {code}?",
    "rule_manager": "Who is the product manager of the system in which {via}?",
    # three hops (multi3): the question names none of the systems and teams in between
    "code_office": "From which office does the team that owns the system raising error code {code} work?",
    "code_channel": "In which channel is an incident about error code {code} escalated?",
    "rule_lead": "Who leads the team that owns the system in which {via}?",
    "dependency_lead": "Who leads the team that owns the system {name} depends on for {purpose}?",
    # four hops (multi4)
    "code_dependency_lead": "Who leads the team that owns the system that the system raising error code "
                            "{code} depends on for {purpose}?",
    "code_dependency_office": "From which office does the team work that owns the system that the system "
                              "raising error code {code} depends on for {purpose}?",
    "rule_dependency_lead": "Who leads the team that owns the system that the system in which {via} "
                            "depends on for {purpose}?",
}
UNITS_PER_SYSTEM = 60  # first guess for the size search; measured units decide
MAX_SIZE_ROUNDS = 6


# -- questions ------------------------------------------------------------------------------

_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")
_SHORT_UNITS = {"seconds": "s", "minutes": "min", "hours": "h", "ms": "milliseconds"}
_SMALL_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def surface_forms(value: str) -> list[str]:
    """Ways an answer may write ``value``: the document's form first."""
    forms = [value]

    def add(form: str) -> None:
        if form not in forms:
            forms.append(form)

    if _GROUPED.search(value):
        add(_GROUPED.sub(lambda m: m.group().replace(",", ""), value))
    if m := re.fullmatch(r"([\d.]+) (MB|GB)", value):
        add(f"{m[1]}{m[2]}")
    if m := re.fullmatch(r"([\d,]+) EUR", value):
        add(f"€{m[1]}")
        add(f"EUR {m[1]}")
    if m := re.fullmatch(r"(\d+) (seconds|minutes|hours|ms)", value):
        add(f"{m[1]} {_SHORT_UNITS[m[2]]}")
    if m := re.fullmatch(r"(\d) (\w+)", value):
        add(f"{_SMALL_NUMBERS[int(m[1])]} {m[2]}")
    if m := re.fullmatch(r"v(\d+\.\d+\.\d+)", value):
        add(m[1])
    if m := re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", value):
        month, day = MONTH_NAMES[int(m[2]) - 1], int(m[3])
        add(f"{month} {day}, {m[1]}")
        add(f"{day} {month} {m[1]}")
    if m := re.fullmatch(r"(\w+) (\d{4})", value):
        if m[1] in MONTH_NAMES:
            add(f"{m[2]}-{MONTH_NAMES.index(m[1]) + 1:02d}")
    if m := re.fullmatch(r"(\d+(?:\.\d+)?)%", value):
        add(f"{m[1]} percent")
    if m := re.fullmatch(r"0(\d:\d\d) UTC", value):
        add(f"{m[1]} UTC")
    if m := re.fullmatch(r"every (\d.*)", value):
        add(m[1])
    return forms


def _record(kind: str, question: str, finals: list[str], gold: list[tuple[Doc, Piece]], **extra) -> dict:
    answers = [form for v in finals for form in surface_forms(v)]
    return {"question": question, "type": kind, "answers": answers, "key_facts": list(finals),
            "gold_docs": [d.doc_id for d, _ in gold], "gold_texts": [p.text(2) for _, p in gold],
            "stale_answers": [], **extra}


def _interleave(rng: random.Random, groups: list[list]) -> list:
    """The groups' items in random order within a group, taking from each group in turn."""
    for g in groups:
        rng.shuffle(g)
    return [g[i] for i in range(max(map(len, groups), default=0)) for g in groups if i < len(g)]


def _unit_texts(text: str) -> list[str]:
    doc = Document("x", text, "markdown")
    return [c.content for c in chunk_document(doc).chunks]


def _unanswerable(world: World, texts: dict[int, dict[str, str]],
                  units: dict[int, dict[str, list[str]]]) -> list[dict]:
    """Questions about fields nothing states: neither a document titled after the subject
    (in either version) nor any unit that names the subject mentions the field. A field of
    systems or teams is asked about only where another system or team states it, so that it
    is plausibly there; a policy's missing rule is plausible as it is."""
    docs = [(d.title.lower(), texts[v][d.path].lower(), [u.lower() for u in units[v][d.path]])
            for d in world.docs for v in (1, 2)]
    all_units = [u for _, _, us in docs for u in us]
    about: dict[str, list[str]] = {}  # subject -> the texts that would state its fields
    out = []
    for subject, label, question, peers in world.absent:
        s, f = subject.lower(), label.lower()
        if s not in about:
            about[s] = [text for title, text, _ in docs if s in title] + [u for u in all_units if s in u]
        if peers and not any(f in u for u in all_units):
            continue
        if not any(f in t for t in about[s]):
            out.append(_record("unanswerable", question, [], [], subject=subject, field=label))
    return out


def _where(world: World) -> dict[Fact, tuple[Doc, Piece]]:
    """Each fact the v2 documents state, with the document and the piece that state it."""
    where: dict[Fact, tuple[Doc, Piece]] = {}
    for d in world.docs:
        for s in d.sections:
            for p in s.pieces:
                if alive(s.only, 2) and alive(p.only, 2):
                    for f in p.facts:
                        where[f] = (d, p)
    return where


def _questions(rng: random.Random, world: World, count: int, texts: dict[int, dict[str, str]],
               units: dict[int, dict[str, list[str]]], wording: dict[str, str]) -> list[dict]:
    where = _where(world)

    single = [_record("single", f.question, [f.value], [where[f]]) for f in where if f.new is None]
    conflict = [_record("conflict", f.question, [f.new], [where[f]], stale_answers=[f.value])
                for f, (d, _) in where.items()
                if f.new is not None and f.value in texts[1][d.path] and f.value not in texts[2][d.path]]
    chains: list[list[dict]] = [[], [], [], [], []]
    for s in world.systems:
        team = s.team
        chains[0].append(_record(
            "multi", wording["owner_rotation"].format(function=s.function, name=s.name, lname=s.name.lower()),
            [team.name, team.rotation.at(2)], [where[s.owner], where[team.rotation]]))
        chains[1].append(_record(
            "multi", wording["owner_lead"].format(function=s.function, name=s.name, lname=s.name.lower()),
            [team.name, team.lead.value], [where[s.owner], where[team.lead]]))
        chains[2].append(_record(
            "multi", wording["channel"].format(function=s.function, name=s.name, lname=s.name.lower()),
            [team.channel.value], [where[s.owner], where[team.channel]]))
        for code in s.codes:
            chains[3].append(_record(
                "multi", wording["code_lead"].format(code=code.subject),
                [team.lead.value], [where[code], where[s.owner], where[team.lead]]))
    by_name = {s.name: s for s in world.systems}
    for rule, f in world.routed:
        s = by_name[f.value]
        chains[4].append(_record("multi", wording["rule_manager"].format(via=rule.via),
                                 [s.manager.value], [where[f], where[s.manager]]))
    pools = {"single": single, "multi": _interleave(rng, chains), "conflict": conflict,
             "unanswerable": _unanswerable(world, texts, units)}
    quota = _quota(count)
    out = []
    for kind in TYPES:
        pool = pools[kind]
        if len(pool) < quota[kind]:
            raise ValueError(f"the knowledge base holds {len(pool)} {kind} questions, {quota[kind]} are "
                             "needed: raise units_target or ask fewer questions")
        out += pool[:quota[kind]] if kind == "multi" else rng.sample(pool, quota[kind])
    rng.shuffle(out)
    return [{"qid": f"q{i:04d}", **q} for i, q in enumerate(out, 1)]


def _deep_questions(rng: random.Random, world: World, count: int, wording: dict[str, str]) -> list[dict]:
    """``count`` chains of three and four documents, about half of each length (fewer where the
    knowledge base holds fewer). Every hop is a fact the v2 documents state: a chain through a
    dependency section the revision dropped is not asked."""
    where = _where(world)
    by_name = {s.name: s for s in world.systems}
    three: list[list[dict]] = [[], [], [], []]
    four: list[list[dict]] = [[], [], []]

    def team_hops(s) -> list[tuple[Doc, Piece]]:  # the system's owner line, then its team's page
        return [where[s.owner], where[s.team.lead]]

    for s in world.systems:
        team = s.team
        deps = [(f, by_name[f.value]) for f in s.depends if f in where]
        for code in s.codes:
            three[0].append(_record("multi3", wording["code_office"].format(code=code.subject),
                                    [team.office.value], [where[code], where[s.owner], where[team.office]]))
            three[1].append(_record("multi3", wording["code_channel"].format(code=code.subject),
                                    [team.channel.value], [where[code], where[s.owner], where[team.channel]]))
            for f, other in deps:
                four[0].append(_record(
                    "multi4", wording["code_dependency_lead"].format(code=code.subject, purpose=f.label),
                    [other.team.lead.value], [where[code], where[f], *team_hops(other)]))
                four[1].append(_record(
                    "multi4", wording["code_dependency_office"].format(code=code.subject, purpose=f.label),
                    [other.team.office.value],
                    [where[code], where[f], where[other.owner], where[other.team.office]]))
        for f, other in deps:
            question = wording["dependency_lead"].format(name=s.name, lname=s.name.lower(), purpose=f.label)
            three[2].append(_record("multi3", question,
                                    [other.team.lead.value], [where[f], *team_hops(other)]))
    for rule, f in world.routed:
        s = by_name[f.value]
        three[3].append(_record("multi3", wording["rule_lead"].format(via=rule.via),
                                [s.team.lead.value], [where[f], *team_hops(s)]))
        for g, other in ((g, by_name[g.value]) for g in s.depends if g in where):
            four[2].append(_record(
                "multi4", wording["rule_dependency_lead"].format(via=rule.via, purpose=g.label),
                [other.team.lead.value], [where[f], where[g], *team_hops(other)]))
    threes, fours = _interleave(rng, three), _interleave(rng, four)
    n4 = min(count // 2, len(fours))
    out = threes[:count - n4] + fours[:n4]
    rng.shuffle(out)
    return out


def _quota(count: int) -> dict[str, int]:
    quota = {k: round(count * MIX[k]) for k in TYPES[:-1]}
    quota["unanswerable"] = count - sum(quota.values())
    return quota


# -- the generator --------------------------------------------------------------------------

@dataclass(frozen=True)
class SynthReport:
    out_dir: Path
    seed: int
    documents: int  # per version: both versions hold the same paths
    revised: int  # documents whose v2 differs from v1
    units_v1: int  # units after chunking, over all documents of a version
    units_v2: int
    questions: dict[str, int]  # per type
    family: str = "A"

    def to_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "seed": self.seed, "family": self.family,
                "documents": self.documents, "revised": self.revised, "units_v1": self.units_v1,
                "units_v2": self.units_v2, "questions": dict(self.questions)}


def generate(out_dir: str | Path, *, seed: int = 0, units_target: int = 5000,
             questions: int = 800, deep_questions: int | None = None, family: str = "A") -> SynthReport:
    """Write the knowledge base, its revision and its questions under ``out_dir`` (see the module doc).

    ``deep_questions`` (default ``DEEP_SHARE`` of ``questions``) multi3 and multi4 questions follow
    the others; ``family`` picks the wording of documents and questions (``FAMILIES``).
    """
    if units_target < 1 or questions < 1:
        raise ValueError("units_target and questions must be positive")
    if family not in FAMILIES:
        raise ValueError(f"family {family!r} is not one of {', '.join(FAMILIES)}")
    if deep_questions is None:
        deep_questions = round(questions * DEEP_SHARE)
    if deep_questions < 0:
        raise ValueError("deep_questions must not be negative")
    wording = CHAIN_QUESTIONS
    if family == "B":
        from . import synth_family_b
        wording = synth_family_b.CHAIN_QUESTIONS
    # Each conflict question needs a changed value; the margin covers changes it cannot use
    # (the old value still occurs elsewhere in the v2 document, so "stale" would be ambiguous).
    changes = math.ceil(_quota(questions)["conflict"] * 1.3) + 2
    n = max(2, round(units_target / UNITS_PER_SYSTEM))
    best = None
    # The size is searched by counting units, not by formula: the chunker is the reference.
    for _ in range(MAX_SIZE_ROUNDS):
        world = build_world(seed, n, changes)
        if family == "B":  # its own random stream: the world (names, values, revision) stays family A's
            synth_family_b.restyle(world, random.Random(f"{seed}:family-b"))
        texts = {v: {d.path: d.render(v) for d in world.docs} for v in (1, 2)}
        units = {v: {p: _unit_texts(t) for p, t in texts[v].items()} for v in (1, 2)}
        total = sum(map(len, units[2].values()))
        if best is None or abs(total - units_target) < abs(best[3] - units_target):
            best = (world, texts, units, total)
        if abs(total - units_target) <= 0.05 * units_target:
            break
        step = round(n * units_target / total)
        n = max(2, step if step != n else n + (1 if total < units_target else -1))
    world, texts, units, total = best
    records = _questions(random.Random(f"{seed}:questions"), world, questions, texts, units, wording)
    # A stream of their own, so that adding the deep questions left every earlier question as it was.
    deep = _deep_questions(random.Random(f"{seed}:deep-questions"), world, deep_questions, wording)
    records += [{"qid": f"q{i:04d}", **q} for i, q in enumerate(deep, len(records) + 1)]

    out = Path(out_dir)
    for v in (1, 2):
        for path, text in texts[v].items():
            target = out / "docs" / f"v{v}" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    _write_corpus(out, world, records)
    report = SynthReport(out, seed, len(world.docs), sum(d.revised is not None for d in world.docs),
                         sum(map(len, units[1].values())), total,
                         {k: sum(r["type"] == k for r in records) for k in ALL_TYPES}, family)
    (out / "README.md").write_text(_readme(report, world, units_target), encoding="utf-8", newline="\n")
    return report


def _write_corpus(out: Path, world: World, records: list[dict]) -> None:
    """The v2 knowledge base as ``corpus.jsonl`` (one passage a document: the pid is the document
    id, the text its Markdown body) and the questions as ``corpus.queries.jsonl`` (``gold_pids``
    are the gold documents), the format ``asmr eval retrieval --corpus --queries`` reads."""
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for d in world.docs:
            body = d.render(2).split("\n---\n", 1)[1].lstrip("\n")  # front matter is carried as fields
            f.write(json.dumps({"pid": d.doc_id, "title": d.title, "text": body, "type": d.doc_type,
                                "effective_date": d.revised or d.date}, ensure_ascii=False) + "\n")
    with open(out / "corpus.queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps({"qid": r["qid"], "question": r["question"], "answers": r["answers"],
                                "gold_pids": list(dict.fromkeys(r["gold_docs"])),
                                "answerable": r["type"] != "unanswerable", "category": r["type"]},
                               ensure_ascii=False) + "\n")


def _readme(report: SynthReport, world: World, units_target: int) -> str:
    areas: dict[str, int] = {}
    for d in world.docs:
        area = d.path.split("/")[0]
        areas[area] = areas.get(area, 0) + 1
    lines = [
        "# Synthetic enterprise knowledge base",
        "",
        (f"Generated by `asmr.eval.synth.generate` with seed {report.seed}, units_target {units_target}"
         + ("." if report.family == "A" else f", template family {report.family}.")),
        ("Format: see the docstring of `asmr/eval/synth.py`. `corpus.jsonl` and `corpus.queries.jsonl` hold "
         "the v2 documents and the questions in the format `asmr eval retrieval --corpus --queries` reads."),
        "",
        f"- documents: {report.documents} in `docs/v1/` and the same paths in `docs/v2/`; "
        f"{report.revised} revised in v2",
        f"- units after chunking: {report.units_v1} in v1, {report.units_v2} in v2",
        f"- systems: {len(world.systems)}",
        "",
        "| area | documents |",
        "|---|---|",
        *(f"| {a} | {n} |" for a, n in sorted(areas.items())),
        "",
        "| question type | count |",
        "|---|---|",
        *(f"| {k} | {report.questions[k]} |" for k in ALL_TYPES),
        f"| total | {sum(report.questions.values())} |",
        "",
    ]
    return "\n".join(lines)


# -- reading the questions back -------------------------------------------------------------

_LISTS = ("answers", "key_facts", "gold_docs", "gold_texts", "stale_answers")


def load_queries(path: str | Path) -> list[dict]:
    """The questions of a ``queries.jsonl``; a ValueError naming ``path:line`` for a bad one."""
    out = []
    seen: set[str] = set()
    for where, r in records(path):
        _check_query(r, where)
        if r["qid"] in seen:
            raise ValueError(f"{where}: duplicate qid {r['qid']!r}")
        seen.add(r["qid"])
        out.append(r)
    if not out:
        raise ValueError(f"{path}: no queries")
    return out


def _check_query(r, where: str) -> None:
    if not isinstance(r, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(r).__name__}")
    for key in ("qid", "question"):
        if not isinstance(r.get(key), str) or not r[key].strip():
            raise ValueError(f"{where}: {key!r} must be a non-empty string")
    if r.get("type") not in ALL_TYPES:
        raise ValueError(f"{where}: 'type' {r.get('type')!r} is not one of {', '.join(ALL_TYPES)}")
    for key in _LISTS:
        value = r.get(key)
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ValueError(f"{where}: {key!r} must be a list of strings")
    if len(r["gold_docs"]) != len(r["gold_texts"]):
        raise ValueError(f"{where}: 'gold_docs' and 'gold_texts' differ in length")
    if r["type"] == "unanswerable":
        if r["answers"] or r["gold_docs"]:
            raise ValueError(f"{where}: an unanswerable question has no answers and no gold documents")
    elif not r["answers"] or not r["key_facts"] or not r["gold_docs"]:
        raise ValueError(f"{where}: a {r['type']} question needs answers, key_facts and gold_docs")
    if r["type"] == "conflict" and not r["stale_answers"]:
        raise ValueError(f"{where}: a conflict question needs stale_answers")
