"""A generated chat log over dated sessions, and questions about what its people said.

``generate_chat(out_dir, seed=0, sessions=20, people=10, turns=400, titles="speaker")``
writes, deterministically for a seed::

    out_dir/corpus.jsonl    one turn a line: {"pid", "title", "text", "effective_date",
                            "session", "speaker"}; the title is "<speaker>, <session date>", or
                            with titles="session" "Group chat <n>, <session date>" and the
                            text starts "<speaker>: " (the same log, titled another way)
    out_dir/queries.jsonl   {"qid", "question", "answers", "gold_pids", "answerable",
                            "category", "subject", "attribute", "stale_answers"}
    out_dir/README.md       counts and the seed

A group of invented friends chats in sessions a few days to a few weeks apart, three to five of
them at a time. Each person states facts about themselves in their own turns (a city, a job, a
pet, a hobby, a planned trip, a car, an instrument, a birthday: everyone has a city and a job,
each other attribute only some of them), and some facts change in a later session ("I moved to
..." / a new job / a new hobby). The other turns are small talk that states no such fact.

Question categories:

- ``single``: an attribute stated once and never changed; gold is the turn that states it.
- ``current``: an attribute that changed; the answer is the latest value, gold the turn that
  states it, ``stale_answers`` the earlier value.
- ``previous``: the value before the change ("before moving to ..."), gold the earlier turn.
- ``temporal``: when an event happened (a move, a new job, a new hobby, a pet adopted, a trip
  booked); the answer is the date of the session whose turn tells it, gold that turn.
- ``adversarial`` (unanswerable): an attribute some people state, asked of a person who never
  states it; nobody says it of them either.
- ``never_mentioned`` (unanswerable): an attribute no one in the log talks about.

Unanswerable questions carry ``gold_pids: []``, ``answers: []`` and ``answerable: false``. The
same question wording serves an attribute whether or not the person has it, so only what the
log states tells the two apart.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from .synth import surface_forms

PEOPLE = ("Mirela", "Tobias", "Oona", "Kasimir", "Ines", "Lucan", "Sabine", "Rafe", "Greta", "Dorian",
          "Yara", "Emrik")
CITIES = ("Tallinn", "Porto", "Ljubljana", "Ghent", "Valencia", "Tartu", "Bergen", "Utrecht", "Aarhus",
          "Graz", "Bologna", "Kraków")
JOBS = ("nurse", "data analyst", "carpenter", "pastry chef", "translator", "architect", "physiotherapist",
        "bus driver", "librarian", "sound engineer", "veterinarian", "geography teacher")
PET_KINDS = ("dog", "cat", "parrot", "rabbit", "tortoise", "ferret")
PET_NAMES = ("Biscuit", "Pepper", "Mochi", "Juniper", "Captain", "Noodle", "Pistachio", "Olive")
HOBBIES = ("bouldering", "pottery", "birdwatching", "sourdough baking", "salsa dancing", "chess",
           "trail running", "watercolour painting", "beekeeping", "kayaking")
TRIPS = ("Iceland", "Morocco", "Peru", "Vietnam", "Patagonia", "the Azores", "Crete", "Lapland")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
CARS = ("Fiat Panda", "Volvo estate", "Toyota Yaris", "Skoda Octavia", "Renault Kangoo", "Mini Cooper")
INSTRUMENTS = ("cello", "ukulele", "trumpet", "piano", "bass guitar", "accordion", "violin")

# What a person says when stating an attribute; {v} is the value.
STATE = {
    "city": ("I live in {v}, right by the river.", "Things are quiet here in {v}, where I live.",
             "Home for me is a small flat in {v}."),
    "job": ("I work as a {v}.", "Work has been hectic, being a {v} is never boring.",
            "As a {v} I at least get most weekends off."),
    "hobby": ("I've been really into {v} lately.", "My free time mostly goes to {v} these days."),
    "car": ("My {v} broke down again on the way to work.", "I drive a {v}, old but reliable."),
    "instrument": ("I practised the {v} for two hours tonight.", "I play the {v} in a small band."),
    "birthday": ("My birthday is on {v}, you're all invited.", "Reminder that my birthday is {v}!"),
}
CHANGE = {
    "city": ("Today I moved to {v}, boxes everywhere!", "Big change: as of today I live in {v}."),
    "job": ("I started a new job today: I'm a {v} now!", "First day as a {v} today, wish me luck."),
    "hobby": ("I gave up {old} and had my first go at {v} today.", "Today I swapped {old} for {v}."),
}
PET = ("We adopted a {kind} today! Its name is {name}.", "Meet {name}, the {kind} I brought home today.")
TRIP = ("I booked a trip to {v} for {month} today!", "Today I finally booked {month} in {v}.")

# The questions, the same words whether the person has the attribute or not.
ASK = {
    "city": ("Where does {p} live now?", "Which city is {p} living in these days?"),
    "job": ("What does {p} do for a living now?", "What is {p}'s job?"),
    "pet_kind": ("What kind of pet does {p} have?",),
    "pet_name": ("What is the name of {p}'s pet?",),
    "hobby": ("What hobby is {p} into?", "What does {p} do in their free time?"),
    "trip": ("Where is {p} planning to travel?",),
    "car": ("What car does {p} drive?",),
    "instrument": ("Which instrument does {p} play?",),
    "birthday": ("When is {p}'s birthday?",),
}
ASK_BEFORE = {"city": "Where did {p} live before moving to {v}?",
              "job": "What did {p} work as before becoming a {v}?",
              "hobby": "What hobby did {p} have before taking up {v}?"}
ASK_WHEN = {"city": "When did {p} move to {v}?", "job": "When did {p} start working as a {v}?",
            "hobby": "When did {p} take up {v}?", "pet": "When did {p} get {v}?",
            "trip": "When did {p} book the trip to {v}?"}
# Attributes nobody in the log talks about.
NEVER = (("football_club", "Which football club does {p} support?"),
         ("university", "Where did {p} go to university?"),
         ("language", "What language is {p} learning?"), ("favourite_book", "What is {p}'s favourite book?"),
         ("siblings", "How many siblings does {p} have?"), ("shoe_size", "What is {p}'s shoe size?"))
SMALL_TALK = (
    "Morning everyone!", "How's everybody doing?", "Ha, that's great.", "Congrats!",
    "Oh no, sorry to hear that.",
    "Anyone watched anything good recently?", "The weather has been strange all week.", "I need more coffee.",
    "Lunch was excellent today.", "Same here, honestly.", "That made me laugh.",
    "Long day, heading to bed soon.",
    "Did anyone see the news this morning?", "We should all meet up soon.", "Good luck with it!",
    "Sounds like a plan.", "I'm so tired today.", "Happy Friday, people.", "Wait, really?", "Love that.",
    "Can't believe it's already this late in the year.", "Sending good vibes.", "Tell us more next time!",
    "Ugh, Mondays.", "That's wonderful news.", "Haha, classic.", "Fair enough.",
    "Let's catch up properly soon.",
)
# Attributes some people have and others do not: the adversarial questions ask these.
OPTIONAL = ("pet", "hobby", "trip", "car", "instrument", "birthday")
OPTIONAL_SHARE = 0.5


@dataclass
class _Statement:
    attribute: str  # "city", "job", "pet", "hobby", "trip", "car", "instrument", "birthday"
    text: str
    values: dict[str, str]  # what it states: {"city": ...} or {"pet_kind": ..., "pet_name": ...}
    change: bool = False  # it replaces an earlier value of the same attribute
    event: str = ""  # the value a "when" question names, for statements that tell an event
    after: int = -1  # index into the person's statements that must come in an earlier session


@dataclass
class _Turn:
    pid: str
    speaker: str
    day: str
    session: int
    text: str
    statement: _Statement | None = None


@dataclass
class _Person:
    name: str
    statements: list[_Statement] = field(default_factory=list)


@dataclass(frozen=True)
class ChatReport:
    out_dir: Path
    seed: int
    sessions: int
    turns: int
    questions: dict[str, int]  # per category

    def to_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "seed": self.seed, "sessions": self.sessions,
                "turns": self.turns, "questions": dict(self.questions)}


CATEGORIES = ("single", "current", "previous", "temporal", "adversarial", "never_mentioned")


def _people(rng: random.Random, count: int) -> list[_Person]:
    if not 2 <= count <= len(PEOPLE):
        raise ValueError(f"people must be between 2 and {len(PEOPLE)}")
    names = rng.sample(PEOPLE, count)
    out = []
    for name in names:
        p = _Person(name)
        city, job = rng.sample(CITIES, 1)[0], rng.choice(JOBS)
        p.statements.append(_Statement("city", rng.choice(STATE["city"]).format(v=city), {"city": city}))
        p.statements.append(_Statement("job", rng.choice(STATE["job"]).format(v=job), {"job": job}))
        # Every optional attribute is held by some people and missing for others.
        for attribute in OPTIONAL:
            if rng.random() >= OPTIONAL_SHARE:
                continue
            if attribute == "pet":
                kind, pet = rng.choice(PET_KINDS), rng.choice(PET_NAMES)
                p.statements.append(_Statement("pet", rng.choice(PET).format(kind=kind, name=pet),
                                               {"pet_kind": kind, "pet_name": pet}, event=pet))
            elif attribute == "trip":
                place = rng.choice(TRIPS)
                text = rng.choice(TRIP).format(v=place, month=rng.choice(MONTHS))
                p.statements.append(_Statement("trip", text, {"trip": place}, event=place))
            elif attribute == "birthday":
                day = f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"
                p.statements.append(_Statement("birthday", rng.choice(STATE["birthday"]).format(v=day),
                                               {"birthday": day}))
            else:
                v = rng.choice({"hobby": HOBBIES, "car": CARS, "instrument": INSTRUMENTS}[attribute])
                text = rng.choice(STATE[attribute]).format(v=v)
                p.statements.append(_Statement(attribute, text, {attribute: v}))
        rng.shuffle(p.statements)
        # Some facts change later: a move, a new job, a new hobby.
        for attribute, pool, share in (("city", CITIES, 0.5), ("job", JOBS, 0.4), ("hobby", HOBBIES, 0.5)):
            first = next((i for i, s in enumerate(p.statements) if s.attribute == attribute), None)
            if first is None or rng.random() >= share:
                continue
            old = p.statements[first].values[attribute]
            new = rng.choice([v for v in pool if v != old])
            p.statements.append(_Statement(attribute, rng.choice(CHANGE[attribute]).format(v=new, old=old),
                                           {attribute: new}, change=True, event=new, after=first))
        out.append(p)
    return out


def _log(rng: random.Random, people: list[_Person], sessions: int, turns: int) -> list[_Turn]:
    """The sessions' turns: each present person tells up to two pending statements a session (a
    change only in a later session than what it changes), among small talk."""
    day = date(2023, 1, 1) + timedelta(days=rng.randrange(365))
    told: dict[tuple[str, int], int] = {}  # (person, statement index) -> session
    pending = {p.name: list(range(len(p.statements))) for p in people}
    by_name = {p.name: p for p in people}
    log: list[_Turn] = []
    per_session = max(4, turns // sessions)
    for n in range(1, sessions + 1):
        day += timedelta(days=rng.randint(3, 20))
        present = rng.sample([p.name for p in people], min(len(people), rng.randint(3, 5)))
        facts: list[tuple[str, _Statement]] = []
        for name in present:
            budget = rng.choice((0, 1, 1, 2))  # people do not tell everything the first time they talk
            for i in list(pending[name])[:budget]:
                s = by_name[name].statements[i]
                if s.after >= 0 and told.get((name, s.after), n) >= n:
                    continue
                facts.append((name, s))
                told[(name, i)] = n
                pending[name].remove(i)
        slots = [None] * max(0, per_session - len(facts)) + facts
        rng.shuffle(slots)
        for slot in slots:
            if slot is None:
                speaker, text, st = rng.choice(present), rng.choice(SMALL_TALK), None
            else:
                speaker, st = slot
                text = st.text
            log.append(_Turn(f"s{n:02d}t{len(log) + 1:04d}", speaker, day.isoformat(), n, text, st))
    return log


def _questions(rng: random.Random, people: list[_Person], log: list[_Turn]) -> list[dict]:
    said: dict[str, dict[str, list[_Turn]]] = {}  # person -> attribute -> turns stating it, in order
    for t in log:
        if t.statement is not None:
            said.setdefault(t.speaker, {}).setdefault(t.statement.attribute, []).append(t)
    out = []

    def ask(category: str, question: str, subject: str, attribute: str, answer: str | None = None,
            gold: list[_Turn] = (), stale: list[str] = ()) -> None:
        forms = surface_forms(answer) if answer else []
        if attribute == "birthday" and answer:  # "June 14" is also written "14 June"
            month, day = answer.split()
            forms.append(f"{day} {month}")
        out.append({"question": question, "answers": forms,
                    "gold_pids": [t.pid for t in gold], "answerable": answer is not None,
                    "category": category, "subject": subject, "attribute": attribute,
                    "stale_answers": list(stale)})

    for p in people:
        mine = said.get(p.name, {})
        for attribute in ("city", "job", "hobby", "car", "instrument", "birthday", "trip", "pet"):
            keys = ("pet_kind", "pet_name") if attribute == "pet" else (attribute,)
            turns = mine.get(attribute, [])
            if not turns:
                if attribute in OPTIONAL and any(attribute in s for s in said.values()):
                    for key in keys:
                        ask("adversarial", rng.choice(ASK[key]).format(p=p.name), p.name, key)
                continue
            last = turns[-1]
            for key in keys:
                value = last.statement.values[key]
                if len(turns) == 1:
                    ask("single", rng.choice(ASK[key]).format(p=p.name), p.name, key, value, [last])
                else:
                    old = turns[-2].statement.values[key]
                    ask("current", rng.choice(ASK[key]).format(p=p.name), p.name, key, value, [last], [old])
                    ask("previous", ASK_BEFORE[key].format(p=p.name, v=value), p.name, key, old, [turns[-2]])
            for t in turns:
                if t.statement.event:
                    ask("temporal", ASK_WHEN[attribute].format(p=p.name, v=t.statement.event), p.name,
                        attribute, t.day, [t])
        for key, question in rng.sample(NEVER, 3):
            ask("never_mentioned", question.format(p=p.name), p.name, key)
    return out


TITLES = ("speaker", "session")


def generate_chat(out_dir: str | Path, *, seed: int = 0, sessions: int = 20, people: int = 10,
                  turns: int = 400, titles: str = "speaker") -> ChatReport:
    """Write the chat log and its questions under ``out_dir`` (see the module doc)."""
    if sessions < 1 or turns < sessions:
        raise ValueError("sessions must be positive and turns at least sessions")
    if titles not in TITLES:
        raise ValueError(f"titles {titles!r} is not one of {', '.join(TITLES)}")
    rng = random.Random(f"{seed}:chat")
    cast = _people(rng, people)
    log = _log(rng, cast, sessions, turns)
    queries = _questions(random.Random(f"{seed}:chat-questions"), cast, log)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for t in log:
            # Who speaks is what ties a turn to its person: in the title, or else in the text.
            if titles == "speaker":
                title, text = f"{t.speaker}, {t.day}", t.text
            else:
                title, text = f"Group chat {t.session}, {t.day}", f"{t.speaker}: {t.text}"
            f.write(json.dumps({"pid": t.pid, "title": title, "text": text,
                                "effective_date": t.day, "session": t.session, "speaker": t.speaker},
                               ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for i, q in enumerate(queries, 1):
            f.write(json.dumps({"qid": f"c{i:04d}", **q}, ensure_ascii=False) + "\n")
    counts = {c: sum(q["category"] == c for q in queries) for c in CATEGORIES}
    report = ChatReport(out, seed, sessions, len(log), counts)
    lines = ["# Generated chat log", "",
             (f"Generated by `asmr.eval.synth_chat.generate_chat`: seed {seed}, {sessions} sessions, "
              f"{people} people, titles {titles}."),
             "Format: see the docstring of `asmr/eval/synth_chat.py`.",
             "", f"- turns (one passage each): {len(log)}", "", "| question category | count |", "|---|---|",
             *(f"| {c} | {n} |" for c, n in counts.items()), f"| total | {len(queries)} |", ""]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8", newline="\n")
    return report
