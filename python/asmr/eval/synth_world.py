"""The invented company behind ``asmr.eval.synth``: facts, the documents that hold them
(sections of unit-sized pieces, rendered per version), teams and systems, and ``build_world``,
which builds the whole company for a seed and revises it once."""
from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta

from ..units.ids import doc_id_from_path
from .synth_vocabulary import (ACTIONS, DEPENDENCY_PURPOSES, ERRORS, FEATURES, FIRST_NAMES, LAST_NAMES,
                               LIMITS, MILLISECONDS, MINUTES, MONTH_NAMES, NIGHT_TIMES, OBJECTS, OFFICES,
                               OVERVIEW_FILLER, PERCENT, PRACTICES, RECOVERY_STEPS, REGIONS, REPLICAS, ROLES,
                               ROTATIONS, SHORT_HOURS, SIZES, SYSTEM, SYSTEM_HEADS, SYSTEM_TAILS, TEAM_HEADS,
                               TEAM_TAILS, TOPICS, WEEKDAYS, Rule, Topic)


# -- the knowledge base's structure ---------------------------------------------------------

@dataclass(eq=False)
class Fact:
    subject: str
    label: str
    question: str
    value: str
    choices: tuple[str, ...] = ()  # values a revision may switch to; empty: never changes
    new: str | None = None  # the v2 value, when a revision changed it

    def at(self, version: int) -> str:
        return self.new if version == 2 and self.new is not None else self.value


def alive(only: int, version: int) -> bool:
    return only == 0 or only == version


@dataclass(eq=False)
class Piece:
    """One unit-sized place: a paragraph, a list item or a table row."""
    template: str  # "{0}", "{1}": the facts' values
    facts: tuple[Fact, ...] = ()
    only: int = 0  # 0: in both versions; 1: removed in v2; 2: added in v2

    def text(self, version: int) -> str:
        return self.template.format(*(f.at(version) for f in self.facts))


@dataclass(eq=False)
class Section:
    title: str  # "" for the text right under the document's title
    form: str  # "paragraphs", "bullets", "steps" or "table"
    pieces: list[Piece]
    header: str = ""  # a table's header row
    only: int = 0
    removable: bool = False  # a revision may drop it


class _Values:
    """Picks a document's values so that none contains another: a changed value's old form
    then occurs nowhere else in the document."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.used: list[str] = []

    def pick(self, choices: tuple[str, ...]) -> str:
        fresh = [c for c in choices if not any(c in u or u in c for u in self.used)]
        value = self.rng.choice(fresh or choices)
        self.used.append(value)
        return value


@dataclass(eq=False)
class Doc:
    path: str
    title: str
    doc_type: str
    date: str  # v1 effective date
    values: _Values
    sections: list[Section] = field(default_factory=list)
    revised: str | None = None  # v2 effective date, when the revision touched this document

    @property
    def doc_id(self) -> str:
        return doc_id_from_path(self.path)

    def fact(self, subject: str, label: str, question: str, choices: tuple[str, ...] = (),
             value: str | None = None, fixed: bool = False) -> Fact:
        """A fact of this document: a given value, or one picked from ``choices``."""
        if value is None:
            value = self.values.pick(choices)
        return Fact(subject, label, question, value, () if fixed else choices)

    def render(self, version: int) -> str:
        when = self.revised if version == 2 and self.revised else self.date
        out = ["---", f"title: {self.title}", f"type: {self.doc_type}", f"effective_date: {when}", "---", "",
               f"# {self.title}", ""]
        for s in self.sections:
            if not alive(s.only, version):
                continue
            texts = [p.text(version) for p in s.pieces if alive(p.only, version)]
            if s.title:
                out += [f"## {s.title}", ""]
            if s.form == "paragraphs":
                for t in texts:
                    out += [t, ""]
            elif s.form == "bullets":
                out += [f"- {t}" for t in texts] + [""]
            elif s.form == "steps":
                out += [f"{i}. {t}" for i, t in enumerate(texts, 1)] + [""]
            else:
                out += [s.header, "|" + "---|" * (s.header.count("|") - 1), *texts, ""]
        return "\n".join(out)


@dataclass(eq=False)
class Team:
    name: str
    doc: Doc
    lead: Fact
    rotation: Fact
    channel: Fact
    office: Fact | None = None  # the team page names it beside the lead: a chain's last hop


@dataclass(eq=False)
class System:
    name: str
    function: str
    team: Team
    owner: Fact
    manager: Fact
    spec: Doc
    codes: list[Fact] = field(default_factory=list)  # error code -> this system, in its runbook
    depends: list[Fact] = field(default_factory=list)  # purpose -> another system, in its spec


@dataclass
class World:
    docs: list[Doc]
    systems: list[System]
    routed: list[tuple[Rule, Fact]]  # topic rules naming a system
    # (subject, field label, question, whether other subjects of its kind state the field)
    absent: list[tuple[str, str, str, bool]]


def _day(d: date) -> str:
    return d.isoformat()


def _later(doc: Doc, rng: random.Random) -> str:
    """The document's v2 effective date, chosen the first time the revision touches it."""
    if doc.revised is None:
        doc.revised = _day(date.fromisoformat(doc.date) + timedelta(days=rng.randrange(45, 240)))
    return doc.revised


def _names(rng: random.Random, heads: tuple[str, ...], tails: tuple[str, ...], sep: str, k: int,
           what: str) -> list[str]:
    """``k`` names ``head + sep + tail``, none containing another (in any case).

    Every head is used once before any is used again (and so is every tail, while there are
    more tails than heads): names that share a part are rarer, as in a real company.
    """
    heads, tails = rng.sample(heads, len(heads)), rng.sample(tails, len(tails))
    chosen: list[str] = []
    for q in range(len(tails)):
        for r in range(len(heads)):
            c = heads[r] + sep + tails[(q + r) % len(tails)]
            low = c.lower()
            if not any(low in o.lower() or o.lower() in low for o in chosen):
                chosen.append(c)
                if len(chosen) == k:
                    return chosen
    raise ValueError(f"units_target too large: needs {k} {what} names, the generator has {len(chosen)}")


# -- building -------------------------------------------------------------------------------

def _what_is(label: str, of: str) -> str:
    return f"What is the {label[0].lower() + label[1:]} of {of}?"


def _team(rng: random.Random, name: str, people: Iterator[str], v1_date: str, absent: list) -> Team:
    slug = name.lower().replace(" ", "-")
    doc = Doc(f"teams/{slug}.md", f"{name} team", "notes", v1_date, _Values(rng))
    lead = doc.fact(name, "Lead", f"Who leads the {name} team?", value=next(people))
    office = doc.fact(name, "Office", f"Which office does the {name} team work from?", OFFICES, fixed=True)
    doc.sections.append(Section("", "paragraphs", [
        Piece(f"The {name} team is led by {{0}} and works from the {{1}} office.", (lead, office))]))

    def practice(label: str, choices: tuple[str, ...] | None, value: str | None = None) -> Piece:
        f = doc.fact(name, label, _what_is(label, f"the {name} team"), choices or (), value=value,
                     fixed=choices is None)
        return Piece(f"| {label} | {{0}} |", (f,))

    rotation = practice("On-call rotation", ROTATIONS)
    channel = practice("Escalation channel", None, value=f"#esc-{slug}")
    rows = [rotation, channel]
    optional = rng.sample(PRACTICES, len(PRACTICES))
    stated = rng.randint(2, 4)
    for label, choices in optional[:stated]:
        rows.append(practice(label, choices, value=None if choices else f"CC-{rng.randrange(1000, 10000)}"))
    absent.extend((name, label, _what_is(label, f"the {name} team"), True) for label, _ in optional[stated:])
    doc.sections.append(Section("Working agreements", "table", rows, header=f"| {name} practice | Detail |"))
    members = [Piece(f"{{0}} is the {name} team's {role}.",
                     (doc.fact(name, role, f"Who is the {name} team's {role}?", value=next(people)),))
               for role in rng.sample(ROLES, rng.randint(2, 3))]
    doc.sections.append(Section("Members", "bullets", members, removable=True))
    return Team(name, doc, lead, rotation.facts[0], channel.facts[0], office)


def _system(rng: random.Random, name: str, function: str, team: Team, others: list[str],
            people: Iterator[str], codes: Iterator[str], v1_date: str,
            absent: list) -> tuple[System, list[Doc]]:
    spec = Doc(f"systems/{name.lower()}.md", f"{name} service specification", "spec", v1_date, _Values(rng))
    owner = spec.fact(name, "Owner", f"Which team owns {name}?", value=team.name)
    launch = spec.fact(name, "Production start", f"When did {name} go into production?",
                       value=f"{rng.choice(MONTH_NAMES)} {rng.randrange(2016, 2023)}")
    filler = " ".join(rng.sample(OVERVIEW_FILLER, 2)).format(S=name)
    spec.sections.append(Section("Overview", "paragraphs", [
        Piece(f"{name} {function}. It is owned by the {{0}} team and went into production in {{1}}.",
              (owner, launch)),
        Piece(filler)]))

    limits = rng.sample(LIMITS, len(LIMITS))
    stated = rng.randint(6, 8)
    rows = [Piece(f"| {label} | {{0}} |", (spec.fact(name, label, _what_is(label, name), choices),))
            for label, choices in sorted(limits[:stated], key=LIMITS.index)]
    absent.extend((name, label, _what_is(label, name), True) for label, _ in limits[stated:])
    spec.sections.append(Section("Limits", "table", rows, header=f"| {name} setting | Value |"))

    window = f"the weekly maintenance window of {name}"
    replicas = spec.fact(name, "Replicas", f"How many replicas of {name} run in production?", REPLICAS)
    region = spec.fact(name, "Region", f"In which region does {name} run?", REGIONS, fixed=True)
    day = spec.fact(name, "Maintenance day", f"On which day is {window}?", WEEKDAYS)
    start = spec.fact(name, "Maintenance start", f"At what time does {window} start?", NIGHT_TIMES)
    length = spec.fact(name, "Maintenance length", f"How long does {window} last?", SHORT_HOURS)
    host = spec.fact(name, "Host group", f"Which host group does {name} deploy from?",
                     value=f"HG-{rng.randrange(1000, 10000)}")
    sku = spec.fact(name, "SKU", f"Under which SKU is {name} billed?",
                    value=f"SKU-{rng.randrange(10, 100)}-{rng.randrange(100, 1000)}")
    spec.sections.append(Section("Deployment", "bullets", [
        Piece(f"{name} runs {{0}} in the {{1}} region.", (replicas, region)),
        Piece(f"{name} has a weekly maintenance window on {{0}} starting at {{1}} and lasting {{2}}.",
              (day, start, length)),
        Piece(f"{name} deploys from host group {{0}}.", (host,)),
        Piece(f"{name} is billed under {{0}}.", (sku,))]))
    deps = zip(rng.sample(DEPENDENCY_PURPOSES, 2), rng.sample(others, min(2, len(others))))
    depends = [spec.fact(name, purpose, f"Which system does {name} depend on for {purpose}?", value=other)
               for purpose, other in deps]
    spec.sections.append(Section("Dependencies", "bullets", [
        Piece(f"{name} depends on {{0}} for {f.label}.", (f,)) for f in depends], removable=True))
    manager = spec.fact(name, "Product manager", f"Who is the product manager of {name}?", value=next(people))
    spec.sections.append(Section("Contacts", "paragraphs", [
        Piece(f"Product questions about {name} go to {{0}}, its product manager.", (manager,))]))
    if rng.random() < 0.15:  # a section the revision adds
        slo = spec.fact(name, "Availability target", f"What monthly availability does {name} target?",
                        ("99.5%", "99.9%", "99.95%", "99.99%"))
        board = spec.fact(name, "Dashboard", f"Which dashboard does {name} report to?",
                          value=f"DASH-{rng.randrange(100, 1000)}")
        spec.sections.append(Section("Observability", "bullets", [
            Piece(f"{name} targets {{0}} monthly availability.", (slo,)),
            Piece(f"{name} reports to the {{0}} dashboard.", (board,))], only=2))
    system = System(name, function, team, owner, manager, spec, depends=depends)
    return system, [spec, _runbook(rng, system, codes, v1_date), _changelog(rng, name, v1_date)]


def _runbook(rng: random.Random, system: System, codes: Iterator[str], v1_date: str) -> Doc:
    name, slug = system.name, system.name.lower()
    doc = Doc(f"runbooks/{slug}.md", f"{name} runbook", "manual", v1_date, _Values(rng))
    doc.sections.append(Section("", "paragraphs", [
        Piece(f"Use this runbook when {name} pages the on-call engineer or a customer reports failures.")]))
    rate = doc.fact(name, "Error-rate threshold",
                    f"Above what error rate does {name} page the on-call engineer?", PERCENT)
    window = doc.fact(name, "Error-rate window",
                      f"For how long must the error rate of {name} stay high before it pages?", MINUTES)
    latency = doc.fact(name, "Latency threshold",
                       f"At what p99 latency does {name} raise a latency alert?", MILLISECONDS)
    doc.sections.append(Section("Alerts", "bullets", [
        Piece(f"{name} pages the on-call engineer when the error rate stays above {{0}} for {{1}}.",
              (rate, window)),
        Piece(f"{name} raises a latency alert when p99 latency exceeds {{0}}.", (latency,))]))
    rows = []
    for meaning, response in rng.sample(ERRORS, 3):
        code = next(codes)
        f = doc.fact(code, "System", f"Which system raises error code {code}?", value=name)
        system.codes.append(f)
        rows.append(Piece(f"| {code} | {{0}} {meaning} | {response} |", (f,)))
    doc.sections.append(Section("Error codes", "table", rows,
                                header=f"| {name} error code | Meaning | First response |"))
    steps = sorted(rng.sample(range(len(RECOVERY_STEPS)), 4))
    doc.sections.append(Section("Recovery", "steps",
                                [Piece(RECOVERY_STEPS[i].format(S=name, slug=slug)) for i in steps]))
    deadline = doc.fact(name, "Escalation deadline",
                        f"Within what time must {name} recover before the incident is escalated?", MINUTES)
    doc.sections.append(Section("Escalation", "paragraphs", [
        Piece(f"If {name} is not recovered within {{0}}, escalate in the owning team's escalation channel "
              f"and open a {rng.choice(('SEV-1', 'SEV-2'))} incident.", (deadline,))]))
    if rng.random() < 0.15:  # a section the revision adds
        size = doc.fact(name, "Export limit", f"Above what export size can exports from {name} time out?",
                        SIZES)
        doc.sections.append(Section("Known issues", "paragraphs", [
            Piece(f"Exports from {name} larger than {{0}} can time out; split them into smaller batches.",
                  (size,))], only=2))
    return doc


def _changelog(rng: random.Random, name: str, v1_date: str) -> Doc:
    doc = Doc(f"changelogs/{name.lower()}.md", f"{name} changelog", "changelog", v1_date, _Values(rng))
    doc.sections.append(Section("", "paragraphs", [
        Piece(f"Releases of {name}, newest first. Each release reaches every region within a day.")]))
    features = rng.sample(FEATURES, 6)
    major, minor, patch = rng.randint(1, 4), rng.randint(0, 6), 0
    day = date.fromisoformat(v1_date) - timedelta(days=rng.randrange(500, 700))  # five releases fit before it

    def release(feature: str, when: date, only: int = 0) -> Piece:
        nonlocal minor, patch
        if rng.random() < 0.5:
            minor, patch = minor + 1, 0
        else:
            patch += 1
        version = f"v{major}.{minor}.{patch}"
        v = doc.fact(name, "Version", f"Which version of {name} added {feature}?", value=version)
        d = doc.fact(name, "Release date", f"When was {name} {version} released?", value=_day(when))
        return Piece(f"| {{0}} | {{1}} | Added {feature}. |", (v, d), only=only)

    rows = []
    for feature in features[:rng.randint(3, 5)]:
        day += timedelta(days=rng.randrange(30, 100))
        rows.insert(0, release(feature, day))
    if rng.random() < 0.3:  # a release the revision adds, published on the revision's date
        rows.insert(0, release(features[-1], date.fromisoformat(_later(doc, rng)), only=2))
    doc.sections.append(Section("Releases", "table", rows, header=f"| {name} version | Released | Change |"))
    v1 = date.fromisoformat(v1_date)
    support_dates = tuple(_day(v1 + timedelta(days=180 + 61 * k)) for k in range(12))
    support = doc.fact(name, "End of support", f"Until when is {name} {major}.x supported?", support_dates)
    doc.sections.append(Section("Support", "paragraphs", [
        Piece(f"{name} {major}.x is supported until {{0}}.", (support,))]))
    return doc


def _topic(rng: random.Random, topic: Topic, systems: list[System], v1_date: str,
           routed: list, absent: list) -> Doc:
    doc = Doc(topic.path, topic.title, topic.doc_type, v1_date, _Values(rng))
    # Rules held back: one may appear only in v2, the rest never appear (unanswerable). Never a
    # rule naming a system, and every section keeps at least two rules.
    left = [len(rs) for _, _, _, rs in topic.sections]
    n_held = 2 + sum(left) // 6
    eligible = [(i, r) for i, (_, _, _, rs) in enumerate(topic.sections) for r in rs
                if r.values is not SYSTEM]
    held = []
    for i, r in rng.sample(eligible, len(eligible)):
        if left[i] > 2 and len(held) < n_held:
            held.append(r)
            left[i] -= 1
    added = held[0] if rng.random() < 0.5 else None
    absent.extend((topic.title, r.label, r.question, False) for r in held if r is not added)

    def piece(rule: Rule) -> Piece:
        if rule.values is SYSTEM:
            f = doc.fact(topic.title, rule.label, rule.question, value=rng.choice(systems).name)
            routed.append((rule, f))
        else:
            f = doc.fact(topic.title, rule.label, rule.question, rule.values)
        return Piece(rule.template, (f,), only=2 if rule is added else 0)

    for title, form, header, rs in topic.sections:
        kept = [r for r in rs if r is added or r not in held]
        if form == "faq":  # one section an entry, headed by its question
            doc.sections.extend(Section(r.heading, "paragraphs", [piece(r)], only=2 if r is added else 0)
                                for r in kept)
        else:
            doc.sections.append(Section(title, form, [piece(r) for r in kept], header=header))
    return doc


def _revise(rng: random.Random, docs: list[Doc], changes: int) -> None:
    """Drop some removable sections, change ``changes`` values that both versions still hold,
    and date every document the revision touched (additions were made while building)."""
    removable = [s for d in docs for s in d.sections if s.removable]
    for s in rng.sample(removable, max(1, round(0.15 * len(removable)))):
        s.only = 1
    candidates = [(d, f) for d in docs for s in d.sections if s.only == 0
                  for p in s.pieces if p.only == 0 for f in p.facts if f.choices]
    for d, f in rng.sample(candidates, min(changes, len(candidates))):
        f.new = d.values.pick(tuple(c for c in f.choices if c != f.value))
    for d in docs:
        if (any(s.only or any(p.only for p in s.pieces) for s in d.sections)
                or any(f.new is not None for s in d.sections for p in s.pieces for f in p.facts)):
            _later(d, rng)


def build_world(seed: int, n_systems: int, changes: int) -> World:
    rng = random.Random(seed)
    n_teams = max(2, math.ceil(n_systems / 3))
    system_names = _names(rng, SYSTEM_HEADS, SYSTEM_TAILS, "", n_systems, "system")
    team_names = _names(rng, TEAM_HEADS, TEAM_TAILS, " ", n_teams, "team")
    functions = _names(rng, ACTIONS, OBJECTS, " ", n_systems, "system function")
    people = iter(_names(rng, FIRST_NAMES, LAST_NAMES, " ", n_teams * 4 + n_systems, "person"))
    codes = iter(f"ERR-{c}" for c in rng.sample(range(1000, 10000), 3 * n_systems))

    def v1_date() -> str:
        return _day(date(2024, 1, 1) + timedelta(days=rng.randrange(540)))

    docs: list[Doc] = []
    absent: list[tuple[str, str, str, bool]] = []
    teams = [_team(rng, name, people, v1_date(), absent) for name in team_names]
    docs += [t.doc for t in teams]
    systems = []
    for i, name in enumerate(system_names):
        others = [o for o in system_names if o != name]
        system, system_docs = _system(rng, name, functions[i], teams[i % n_teams], others, people, codes,
                                      v1_date(), absent)
        systems.append(system)
        docs += system_docs
    routed: list[tuple[Rule, Fact]] = []
    n_topics = min(len(TOPICS), max(3, math.ceil(n_systems / 6)))
    docs += [_topic(rng, t, systems, v1_date(), routed, absent) for t in TOPICS[:n_topics]]
    _revise(rng, docs, changes)
    return World(docs, systems, routed, absent)
