"""A generated chat log over dated sessions, and questions about what its people said.

``generate_chat(out_dir, seed=0, sessions=20, people=10, turns=400, titles="speaker", corrections=0)``
writes, deterministically for a seed::

    out_dir/corpus.jsonl    one turn a line: {"pid", "title", "text", "effective_date",
                            "session", "speaker"}; the title is "<speaker>, <session date>", or
                            with titles="session" "Group chat <n>, <session date>" and the
                            text starts "<speaker>: " (the same log, titled another way)
    out_dir/queries.jsonl   {"qid", "question", "answers", "gold_pids", "answerable",
                            "category", "subject", "attribute", "stale_answers"}; an
                            adversarial question also has "said_by" (whose fact it borrows)
    out_dir/README.md       counts and the seed

A group of invented friends chats in sessions a few days to a few weeks apart, three to five of
them at a time. Each person states facts about themselves in their own turns: a city and a job
(everyone), a pet, a hobby, a planned trip, a car, an instrument, a birthday (some of them); some
facts change in a later session (a move, a new job, a new hobby); and each person tells one to
three life events (a concert, a race, a course finished, a broken bone, an exhibition, a
wedding). A move, a new job or hobby, a pet, a trip booked and every life event is told with a
relative time ("last week I adopted a dog", "I moved to Ghent two months ago", "today"), so the
date of what happened is the session's date only when the turn says "today": otherwise it takes
resolving the words against the session's date. News comes up again in later sessions without a
date: its teller mentions it ("Still humming Moss Harbour songs") and others ask about it by name
("Oona, how was the Moss Harbour concert?"); people also answer each other by name ("Congrats,
Oona!"). The rest is small talk that states no fact. Every kind of statement and
every question has several wordings, chosen at random, so that no single wording carries a
category.

Question categories:

- ``single``: a fact stated once and never changed, or a detail of a life event ("Which band
  did Oona see live?"); gold is the turn that states it.
- ``current``: an attribute that changed; the answer is the latest value, gold the turn that
  states it, ``stale_answers`` the earlier value.
- ``previous``: the value before the change ("before moving to ..."), gold the earlier turn.
- ``correction`` (only with ``corrections=N``): a fact stated once with a wrong value and corrected
  by the same person a few turns later in the same session ("Sorry, typo: I drive a Toyota Yaris,
  old but reliable.", or tersely "Ugh, wrong one: Toyota Yaris, not Fiat Panda."); the answer is the
  corrected value, gold the correcting turn, ``stale_answers`` the wrong one, ``correction_form``
  ``restated`` or ``terse``. The wrong value is one nobody in the log holds.
- ``temporal``: when something happened (a move, a new job or hobby, a pet adopted, a trip
  booked, a life event), asked with its detail ("When did Oona run the Riverside 10K?") or without
  ("When did Oona run a race?"); the answer is the day, week, month or year the turn's words mean
  on the session's date (``answers``: its ISO form first, then the same date written out), gold
  that turn (not the later mentions, which carry no date).
- ``multi_hop``: a fact of "the person who ..." described by a fact told in another session
  ("Where does the person who plays the cello live?"); both turns are gold.
- ``inference``: answered from a stated fact and common knowledge (the country of the city a
  person lives in, the continent of the place they are travelling to); gold the stated fact.
- ``adversarial`` (unanswerable): another person's news, asked of someone it did not happen to:
  a question that would be answerable of ``said_by`` names ``subject`` instead ("When did Tobias
  adopt Mochi?" where Mirela adopted Mochi). The subject never says the detail of themselves (they
  may ask its teller about it), no turn names them with it, and asked without the detail, the
  subject has no such news at all.
- ``unstated`` (unanswerable): an attribute some people state, asked of a person who never states
  it; nobody says it of them either.
- ``never_mentioned`` (unanswerable): an attribute no one in the log talks about.

Unanswerable questions carry ``gold_pids: []``, ``answers: []`` and ``answerable: false``. The
question wordings are shared by answerable and unanswerable questions, so only what the log
states tells them apart. Dates of relative time are computed here by plain calendar arithmetic
(weeks start on Monday; "last Saturday" said on a Saturday is a week back; "two years ago" is
the whole year), not by the resolver that ingest uses, so the answers check it.
"""
from __future__ import annotations

import calendar
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
COUNTRY = {"Tallinn": "Estonia", "Porto": "Portugal", "Ljubljana": "Slovenia", "Ghent": "Belgium",
           "Valencia": "Spain", "Tartu": "Estonia", "Bergen": "Norway", "Utrecht": "the Netherlands",
           "Aarhus": "Denmark", "Graz": "Austria", "Bologna": "Italy", "Kraków": "Poland"}
JOBS = ("nurse", "data analyst", "carpenter", "pastry chef", "translator", "architect", "physiotherapist",
        "bus driver", "librarian", "sound engineer", "veterinarian", "geography teacher")
PET_KINDS = ("dog", "cat", "parrot", "rabbit", "tortoise", "ferret")
PET_NAMES = ("Biscuit", "Pepper", "Mochi", "Juniper", "Captain", "Noodle", "Pistachio", "Olive")
HOBBIES = ("bouldering", "pottery", "birdwatching", "sourdough baking", "salsa dancing", "chess",
           "trail running", "watercolour painting", "beekeeping", "kayaking")
TRIPS = ("Iceland", "Morocco", "Peru", "Vietnam", "Patagonia", "the Azores", "Crete", "Lapland")
CONTINENT = {"Iceland": "Europe", "Morocco": "Africa", "Peru": "South America", "Vietnam": "Asia",
             "Patagonia": "South America", "the Azores": "Europe", "Crete": "Europe", "Lapland": "Europe"}
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
CARS = ("Fiat Panda", "Volvo estate", "Toyota Yaris", "Skoda Octavia", "Renault Kangoo", "Mini Cooper")
INSTRUMENTS = ("cello", "ukulele", "trumpet", "piano", "bass guitar", "accordion", "violin")
BANDS = ("Moss Harbour", "Paper Lanterns", "Quiet Comets", "Velvet Orchard", "Linden Street",
         "Salt and Static", "Northern Kites", "Glass Meridian")
RACES = ("Harbour Half Marathon", "Riverside 10K", "Old Town Night Run", "Lakeside Trail Race",
         "Bridge to Bridge Run", "Hillcrest Relay")
COURSES = ("first aid", "Italian cooking", "woodworking", "photography", "upholstery", "welding",
           "bookbinding", "sailing")
BONES = ("wrist", "ankle", "collarbone", "thumb", "elbow", "little toe")
EXHIBITS = ("Hokusai prints", "Bauhaus furniture", "Viking ships", "deep-sea creatures",
            "Art Nouveau posters", "Roman mosaics")
RELATIVES = ("sister", "brother", "cousin", "best friend", "aunt", "uncle")

# Relative time a fact is told with: (words, unit, amount): "day" -1 is yesterday, "weekday" 5 the
# last Saturday before the session day, "week" -1 the calendar week before the session's.
RELATIVE = (("today", "day", 0), ("yesterday", "day", -1), ("last night", "day", -1),
            ("the day before yesterday", "day", -2), ("two days ago", "day", -2), ("three days ago", "day", -3),
            ("last Saturday", "weekday", 5), ("last Sunday", "weekday", 6), ("last week", "week", -1),
            ("two weeks ago", "week", -2), ("last month", "month", -1), ("two months ago", "month", -2),
            ("last year", "year", -1), ("a year ago", "year", -1), ("two years ago", "year", -2))
_NEAR = ("today", "yesterday", "last night", "the day before yesterday", "two days ago", "three days ago",
         "last Saturday", "last Sunday", "last week")  # a pet adopted or a trip booked: recent news

# What a person says when stating an attribute; {v} is the value.
STATE = {
    "city": ("I live in {v}, right by the river.", "Things are quiet here in {v}, where I live.",
             "Home for me is a small flat in {v}.", "Rent in {v} keeps going up, but I love living here."),
    "job": ("I work as a {v}.", "Work has been hectic, being a {v} is never boring.",
            "As a {v} I at least get most weekends off.", "Another long shift, that's life as a {v}."),
    "hobby": ("I've been really into {v} lately.", "My free time mostly goes to {v} these days.",
              "Nothing relaxes me like {v}."),
    "car": ("My {v} broke down again on the way to work.", "I drive a {v}, old but reliable.",
            "Took my {v} in for a service, fingers crossed."),
    "instrument": ("I practised the {v} for two hours tonight.", "I play the {v} in a small band.",
                   "My neighbours must hate my {v} practice by now."),
    "birthday": ("My birthday is on {v}, you're all invited.", "Reminder that my birthday is {v}!",
                 "Party at mine on {v}, it's my birthday."),
}
# Changes and news, told with a relative time: {when} in place, {When} at the start of a sentence.
CHANGE = {
    "city": ("{When} I moved to {v}, boxes everywhere!", "I moved to {v} {when}, still unpacking.",
             "Big change: I moved to {v} {when}."),
    "job": ("I started a new job as a {v} {when}!", "{When} I began working as a {v}.",
            "I became a {v} {when}, wish me luck."),
    "hobby": ("I gave up {old} and took up {v} {when}.", "{When} I swapped {old} for {v}.",
              "I took up {v} {when}, {old} was getting boring."),
}
PET = ("We adopted a {kind} {when}! Its name is {name}.", "Meet {name}, the {kind} I brought home {when}.",
       "{When} I adopted a {kind} called {name}.")
TRIP = ("I booked a trip to {v} for {month} {when}!", "{When} I finally booked {month} in {v}.",
        "Flights to {v} for {month} are booked, I did it {when}.")

# Life events: how they are told ({v} the detail, {when} the relative time), what the "when"
# question calls them, the question for the detail, and a later mention without a date.
EVENTS = {
    "concert": {"values": BANDS,
                "tell": ("{When} I went to the {v} concert, still buzzing!", "I saw {v} live {when}, what a night.",
                         "Went to see {v} {when} with some friends from work."),
                "vp": ("go to the {v} concert", "see {v} live"),
                "ask": ("Which band did {p} see live?", "Whose concert did {p} go to?"),
                "later": ("Still humming {v} songs all day.", "Can't stop listening to {v} lately."),
                "react": ("{name}, how was the {v} concert?", "Jealous of your {v} night, {name}!")},
    "race": {"values": RACES,
             "tell": ("{When} I ran the {v}, my legs are done.", "Finished the {v} {when}!",
                      "I crossed the finish line of the {v} {when}."),
             "vp": ("run the {v}", "take part in the {v}"),
             "ask": ("Which race did {p} run?", "What race did {p} take part in?"),
             "later": ("The {v} photos are finally online.", "The {v} medal is hanging by my door now."),
             "react": ("{name}, what was your time in the {v}?", "Respect for the {v}, {name}!")},
    "course": {"values": COURSES,
               "tell": ("I finished my {v} course {when}.", "{When} I got my certificate for the {v} course.",
                        "The {v} course ended {when}, and I passed!"),
               "vp": ("finish the {v} course", "complete the {v} course"),
               "ask": ("What course did {p} complete?", "Which course did {p} finish?"),
               "later": ("My notes from the {v} course are all over the kitchen table.",),
               "react": ("{name}, was the {v} course worth it?",)},
    "injury": {"values": BONES,
               "tell": ("I broke my {v} {when}, so no typing for a while.",
                        "{When} I fell off my bike and broke my {v}.", "Broke my {v} {when}, cast for six weeks."),
               "vp": ("break their {v}", "fracture their {v}"),
               "ask": ("What did {p} break?", "Which bone did {p} break?"),
               "later": ("The cast on my {v} is itching like crazy.",),
               "react": ("How is your {v} healing, {name}?", "{name}, take care of that {v}!")},
    "exhibition": {"values": EXHIBITS,
                   "tell": ("{When} I saw the {v} exhibition at the city museum.",
                            "Went to the {v} exhibition {when}, stunning.",
                            "I finally made it to the {v} exhibition {when}."),
                   "vp": ("see the {v} exhibition", "go to the {v} exhibition"),
                   "ask": ("Which exhibition did {p} see?", "What exhibition did {p} go to?"),
                   "later": ("Bought a {v} poster, it's on my wall now.",),
                   "react": ("{name}, is the {v} exhibition worth a visit?",)},
    "wedding": {"values": RELATIVES,
                "tell": ("{When} I went to my {v}'s wedding, I danced all night.",
                         "My {v} got married {when}, such a lovely day.",
                         "I gave a speech at my {v}'s wedding {when}."),
                "vp": ("go to their {v}'s wedding", "attend their {v}'s wedding"),
                "ask": ("Whose wedding did {p} go to?", "Which relative's wedding did {p} attend?"),
                "later": ("The photos from my {v}'s wedding are finally online.",),
                "react": ("{name}, how was your {v}'s wedding?",)},
}
# A fact corrected in the same session: the statement said again with the right value after a lead-in
# (``restated``), or only the two values (``terse``). {s} is the statement, {v} the value, {w} the wrong one.
# The terse forms are worded apart from the examples that text.corrections is written and tested with.
CORRECT = {"restated": ("Sorry, typo. {s}", "Oops, I got that wrong: {s}", "Wait, let me correct that. {s}"),
           "terse": ("Ugh, wrong one: {v}, not {w}.", "Oops, make that {v}.", "{v}! Not {w}, sorry.",
                     "Hang on, I misspoke, it's {v}.")}
CORRECTABLE = {"city": CITIES, "job": JOBS, "car": CARS, "instrument": INSTRUMENTS, "birthday": None}
CORRECT_AFTER = (1, 4)  # turns between the wrong statement and its correction, at most (within the session)

# Later mentions of news, without a date.
LATER = {"pet": ("{name} chewed through my slippers again.", "{name} the {kind} says hi to everyone."),
         "trip": ("Counting the days until {v}.", "Guidebooks for {v} are piling up on my desk.")}
# What someone else says of news in a later session ({name} is who told it).
REACT = {"pet": ("How is {pet} settling in, {name}?", "{name}, send us pictures of {pet}!"),
         "trip": ("{name}, so jealous of your trip to {v}!",)}

# The questions, the same words whether the person has the attribute or not.
ASK = {
    "city": ("Where does {p} live now?", "Which city is {p} living in these days?", "Where is {p}'s home?"),
    "job": ("What does {p} do for a living now?", "What is {p}'s job?", "What does {p} work as?"),
    "pet_kind": ("What kind of pet does {p} have?", "What animal does {p} keep as a pet?"),
    "pet_name": ("What is the name of {p}'s pet?", "What is {p}'s pet called?"),
    "hobby": ("What hobby is {p} into?", "What does {p} do in their free time?"),
    "trip": ("Where is {p} planning to travel?", "Where is {p}'s next trip going?"),
    "car": ("What car does {p} drive?", "What kind of car does {p} have?"),
    "instrument": ("Which instrument does {p} play?", "What instrument is {p} learning to play?"),
    "birthday": ("When is {p}'s birthday?", "On what day is {p}'s birthday?"),
}
ASK_BEFORE = {"city": ("Where did {p} live before moving to {v}?", "Which city was {p}'s home before {v}?"),
              "job": ("What did {p} work as before becoming a {v}?", "What was {p}'s job before they became a {v}?"),
              "hobby": ("What hobby did {p} have before taking up {v}?", "What did {p} do for fun before {v}?")}
# "When" questions by how precise the answer is; {vp} is what happened.
ASK_WHEN = {"day": ("When did {p} {vp}?", "On what date did {p} {vp}?", "What day did {p} {vp}?"),
            "week": ("When did {p} {vp}?", "Which week did {p} {vp}?"),
            "month": ("When did {p} {vp}?", "In which month did {p} {vp}?"),
            "year": ("When did {p} {vp}?", "What year did {p} {vp}?", "In what year did {p} {vp}?")}
WHEN_VP = {"city": ("move to {v}",), "job": ("start working as a {v}", "become a {v}"),
           "hobby": ("take up {v}", "get into {v}"), "pet": ("adopt {v}", "get {v}"),
           "trip": ("book the trip to {v}", "book their trip to {v}")}
# The same, without the detail: "When did Oona go to a concert?" (each person has one piece of news a kind).
WHEN_ANY = {"concert": ("go to a concert", "see a band live"), "race": ("run a race", "take part in a race"),
            "course": ("finish a course", "complete a course"), "injury": ("break a bone", "get injured"),
            "exhibition": ("go to an exhibition", "visit an exhibition"), "wedding": ("go to a wedding",),
            "pet": ("adopt a pet", "get a pet"), "trip": ("book a trip",), "city": ("move", "move house"),
            "job": ("start a new job", "change jobs"), "hobby": ("take up a new hobby", "pick up a new hobby")}
# Details of news that name it: answerable of whoever told it, adversarial of anyone else.
ASK_DETAIL = {"pet": ("pet_kind", ("What kind of animal is {p}'s pet {name}?", "What sort of pet is {name}, {p}'s pet?")),
              "trip": ("trip_month", ("In which month is {p} going to {v}?", "What month is {p}'s trip to {v}?"))}
# "The person who ...": what picks the person out, and what is asked of them.
BRIDGE = {"instrument": "plays the {v}", "car": "drives a {v}", "pet": "has a pet called {v}",
          "race": "ran the {v}", "concert": "went to the {v} concert", "course": "finished the {v} course",
          "exhibition": "saw the {v} exhibition", "job": "works as a {v}", "city": "lives in {v}"}
ASK_OF = {"city": ("Where does the person who {b} live?", "Which city is the person who {b} living in?"),
          "job": ("What does the person who {b} do for a living?", "What is the job of the person who {b}?"),
          "instrument": ("Which instrument does the person who {b} play?",),
          "car": ("What car does the person who {b} drive?",),
          "pet_kind": ("What kind of pet does the person who {b} have?",),
          "hobby": ("What hobby is the person who {b} into?",)}
ASK_INFER = {"country": ("Which country does {p} live in?", "In which country is {p} based?",
                         "What country is {p}'s home in?"),
             "continent": ("Which continent is {p} travelling to?", "On which continent is {p}'s next trip?")}
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
# Small talk that names someone else in the session.
TO_SOMEONE = ("Congrats, {name}!", "{name}, that's amazing!", "Wow {name}, tell us more.",
              "{name}, you never stop!", "Miss you, {name}, come visit.", "Haha {name}, classic.")
# Attributes some people have and others do not: the unstated questions ask these.
OPTIONAL = ("pet", "hobby", "trip", "car", "instrument", "birthday")
OPTIONAL_SHARE = 0.5
LATER_SHARE = 0.6  # news that comes up again in a later session
REACT_SHARE = 0.25  # a session in which someone asks about earlier news (at most twice a piece of news)


@dataclass
class _Statement:
    attribute: str  # "city", "job", "pet", "hobby", "trip", "car", "instrument", "birthday", or an event kind
    text: str
    values: dict[str, str]  # what it states: {"city": ...} or {"pet_kind": ..., "pet_name": ...}
    change: bool = False  # it replaces an earlier value of the same attribute
    event: str = ""  # the value a "when" question names, for statements that tell news
    after: int = -1  # index into the person's statements that must come in an earlier session
    relative: tuple[str, str, int] | None = None  # the relative time it is told with, filled in when told
    later: bool = False  # a later mention of news (no date, no question of its own)


@dataclass
class _Turn:
    pid: str
    speaker: str
    day: str
    session: int
    text: str
    statement: _Statement | None = None
    corrects: tuple[str, str] | None = None  # (the wrong value it corrects, the correction's form)


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


CATEGORIES = ("single", "current", "previous", "correction", "temporal", "multi_hop", "inference",
              "adversarial", "unstated", "never_mentioned")
ANSWERABLE = CATEGORIES[:7]


# -- calendar arithmetic: what relative time means on a day ---------------------------------------

def meant(words: tuple[str, str, int], day: date) -> tuple[date, date, str]:
    """(first day, last day, precision) that ``RELATIVE`` words mean when said on ``day``."""
    _, unit, n = words
    if unit == "day":
        d = day + timedelta(days=n)
        return d, d, "day"
    if unit == "weekday":
        d = day - timedelta(days=(day.weekday() - n) % 7 or 7)
        return d, d, "day"
    if unit == "week":
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=n)
        return monday, monday + timedelta(days=6), "week"
    if unit == "month":
        year, month = divmod(day.year * 12 + day.month - 1 + n, 12)
        return (date(year, month + 1, 1), date(year, month + 1, calendar.monthrange(year, month + 1)[1]),
                "month")
    return date(day.year + n, 1, 1), date(day.year + n, 12, 31), "year"


def date_answers(first: date, last: date, precision: str) -> list[str]:
    """Ways an answer may write a date as precise as ``precision``: the ISO form first."""
    if precision == "day":
        return surface_forms(first.isoformat())
    if precision == "week":
        return [f"{first.isoformat()} to {last.isoformat()}", f"week of {first.isoformat()}",
                f"week of {MONTHS[first.month - 1]} {first.day}, {first.year}",
                f"week of {first.day} {MONTHS[first.month - 1]} {first.year}"]
    if precision == "month":
        return [f"{first.year:04d}-{first.month:02d}", f"{MONTHS[first.month - 1]} {first.year}"]
    return [f"{first.year:04d}"]


def _tell(template: str, words: str, **values) -> str:
    when = words
    return template.format(when=when, When=when[0].upper() + when[1:], **values)


# -- the people and what they say ----------------------------------------------------------------

def _people(rng: random.Random, count: int) -> list[_Person]:
    if not 2 <= count <= len(PEOPLE):
        raise ValueError(f"people must be between 2 and {len(PEOPLE)}")
    names = rng.sample(PEOPLE, count)
    # A life event's detail is one person's: "the Riverside 10K" picks out who ran it.
    pools = {kind: rng.sample(e["values"], len(e["values"])) for kind, e in EVENTS.items()}
    out = []
    for name in names:
        p = _Person(name)
        city, job = rng.choice(CITIES), rng.choice(JOBS)
        p.statements.append(_Statement("city", rng.choice(STATE["city"]).format(v=city), {"city": city}))
        p.statements.append(_Statement("job", rng.choice(STATE["job"]).format(v=job), {"job": job}))
        # Every optional attribute is held by some people and missing for others.
        for attribute in OPTIONAL:
            if rng.random() >= OPTIONAL_SHARE:
                continue
            if attribute == "pet":
                kind, pet = rng.choice(PET_KINDS), rng.choice(PET_NAMES)
                p.statements.append(_Statement("pet", rng.choice(PET), {"pet_kind": kind, "pet_name": pet},
                                               event=pet))
            elif attribute == "trip":
                place, month = rng.choice(TRIPS), rng.choice(MONTHS)
                p.statements.append(_Statement("trip", rng.choice(TRIP), {"trip": place, "trip_month": month},
                                               event=place))
            elif attribute == "birthday":
                day = f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"
                p.statements.append(_Statement("birthday", rng.choice(STATE["birthday"]).format(v=day),
                                               {"birthday": day}))
            else:
                v = rng.choice({"hobby": HOBBIES, "car": CARS, "instrument": INSTRUMENTS}[attribute])
                text = rng.choice(STATE[attribute]).format(v=v)
                p.statements.append(_Statement(attribute, text, {attribute: v}))
        for kind in rng.sample(sorted(EVENTS), rng.randint(1, 3)):
            if not pools[kind]:
                continue
            v = pools[kind].pop()
            p.statements.append(_Statement(kind, rng.choice(EVENTS[kind]["tell"]), {kind: v}, event=v))
        rng.shuffle(p.statements)
        # Some facts change later: a move, a new job, a new hobby.
        for attribute, pool, share in (("city", CITIES, 0.5), ("job", JOBS, 0.4), ("hobby", HOBBIES, 0.5)):
            first = next((i for i, s in enumerate(p.statements) if s.attribute == attribute), None)
            if first is None or rng.random() >= share:
                continue
            old = p.statements[first].values[attribute]
            new = rng.choice([v for v in pool if v != old])
            text = rng.choice(CHANGE[attribute]).replace("{old}", old)
            p.statements.append(_Statement(attribute, text, {attribute: new}, change=True, event=new, after=first))
        # News comes up again later, without a date.
        for i, s in enumerate(list(p.statements)):
            if s.event and (s.attribute in EVENTS or s.attribute in LATER) and rng.random() < LATER_SHARE:
                pool = EVENTS[s.attribute]["later"] if s.attribute in EVENTS else LATER[s.attribute]
                text = rng.choice(pool).format(v=s.event, name=s.values.get("pet_name", ""),
                                               kind=s.values.get("pet_kind", ""))
                p.statements.append(_Statement(s.attribute, text, dict(s.values), after=i, later=True))
        out.append(p)
    return out


def _relative(rng: random.Random, s: _Statement, day: date, since: date | None) -> tuple[str, str, int]:
    """Relative time to tell ``s`` with on ``day``: recent for a pet or a trip; for a change, one that
    falls after ``since`` (the session that stated the earlier value)."""
    choices = [r for r in RELATIVE if s.attribute not in ("pet", "trip") or r[0] in _NEAR]
    if since is not None:
        choices = [r for r in choices if meant(r, day)[0] > since]
    return rng.choice(choices or [RELATIVE[0]])


def _text(s: _Statement) -> str:
    """The words of a statement as told (news with its relative time)."""
    if s.relative is None or s.later:
        return s.text
    values = {"v": s.event, "name": s.values.get("pet_name", ""), "kind": s.values.get("pet_kind", ""),
              "month": s.values.get("trip_month", "")}
    return _tell(s.text, s.relative[0], **values)


def _log(rng: random.Random, people: list[_Person], sessions: int, turns: int) -> list[_Turn]:
    """The sessions' turns: each present person tells up to two pending statements a session (a
    change or a later mention only in a later session than what it follows), among small talk."""
    day = date(2023, 1, 1) + timedelta(days=rng.randrange(365))
    told: dict[tuple[str, int], tuple[int, date]] = {}  # (person, statement index) -> (session, day)
    pending = {p.name: list(range(len(p.statements))) for p in people}
    by_name = {p.name: p for p in people}
    log: list[_Turn] = []
    news: list[tuple[str, _Statement, int]] = []  # (who told it, the news, session)
    reactions: dict[int, int] = {}  # id(news statement) -> times asked about
    per_session = max(4, turns // sessions)
    for n in range(1, sessions + 1):
        day += timedelta(days=rng.randint(3, 20))
        present = rng.sample([p.name for p in people], min(len(people), rng.randint(3, 5)))
        facts: list[tuple[str, _Statement | str]] = []  # a statement, or a reaction's words
        for name in present:
            budget = rng.choice((1, 1, 2, 2))  # people do not tell everything the first time they talk
            for i in list(pending[name])[:budget]:
                s = by_name[name].statements[i]
                if s.after >= 0 and told.get((name, s.after), (n, day))[0] >= n:
                    continue
                if s.event and not s.later:
                    since = told[(name, s.after)][1] if s.change else None
                    s.relative = _relative(rng, s, day, since)
                    reactions[id(s)] = 0
                facts.append((name, s))
                told[(name, i)] = (n, day)
                pending[name].remove(i)
        # Someone asks about news told in an earlier session, naming who told it.
        for item in [x for x in news if x[2] < n and reactions[id(x[1])] < 2]:
            teller, st, _ = item
            others = [name for name in present if name != teller]
            if others and rng.random() < REACT_SHARE:
                pool = EVENTS[st.attribute]["react"] if st.attribute in EVENTS else REACT[st.attribute]
                text = rng.choice(pool).format(name=teller, v=st.event, pet=st.values.get("pet_name", ""))
                facts.append((rng.choice(others), text))
                reactions[id(st)] += 1
        news += [(name, st, n) for name, st in facts if isinstance(st, _Statement) and st.event and not st.later
                 and (st.attribute in EVENTS or st.attribute in REACT)]
        slots = [None] * max(0, per_session - len(facts)) + facts
        rng.shuffle(slots)
        for slot in slots:
            if isinstance(slot, tuple) and isinstance(slot[1], str):  # a reaction
                log.append(_Turn(f"s{n:02d}t{len(log) + 1:04d}", slot[0], day.isoformat(), n, slot[1]))
                continue
            if slot is None:
                speaker, st = rng.choice(present), None
                others = [p for p in present if p != speaker]
                if others and rng.random() < 0.15:
                    text = rng.choice(TO_SOMEONE).format(name=rng.choice(others))
                else:
                    text = rng.choice(SMALL_TALK)
            else:
                speaker, st = slot
                text = _text(st)
            log.append(_Turn(f"s{n:02d}t{len(log) + 1:04d}", speaker, day.isoformat(), n, text, st))
    return log


# -- the questions -------------------------------------------------------------------------------

def _questions(rng: random.Random, people: list[_Person], log: list[_Turn]) -> list[dict]:
    said: dict[str, dict[str, list[_Turn]]] = {}  # person -> attribute -> turns stating it, in order
    for t in log:
        if t.statement is not None and not t.statement.later:
            said.setdefault(t.speaker, {}).setdefault(t.statement.attribute, []).append(t)
    out: list[dict] = []
    seen: set[str] = set()

    def ask(category: str, question: str, subject: str, attribute: str, answers: list[str] | None = None,
            gold: list[_Turn] = (), stale: list[str] = (), **extra) -> None:
        if question in seen:  # one wording, one question
            return
        seen.add(question)
        out.append({"question": question, "answers": list(answers or []),
                    "gold_pids": [t.pid for t in gold], "answerable": answers is not None,
                    "category": category, "subject": subject, "attribute": attribute,
                    "stale_answers": list(stale), **extra})

    def forms(value: str, attribute: str) -> list[str]:
        out = surface_forms(value)
        if attribute == "birthday":  # "June 14" is also written "14 June"
            month, day = value.split()
            out.append(f"{day} {month}")
        return out

    def said_about(name: str, value: str) -> bool:
        """Whether ``value`` is said of ``name``: in a turn of theirs that names no one else (asking
        someone about their news is not news of one's own), or in a turn that names them."""
        return any(value in t.text for t in log if name in t.text or (
            t.speaker == name and not any(n in t.text for n in names if n != name)))

    names = [p.name for p in people]
    whens: list[tuple[_Turn, str, str, bool]] = []  # (telling turn, attribute, the question's {vp}, without detail)
    for p in people:
        mine = said.get(p.name, {})
        for attribute in ("city", "job", "hobby", "car", "instrument", "birthday", "trip", "pet", *EVENTS):
            turns = mine.get(attribute, [])
            keys = {"pet": ("pet_kind", "pet_name"), **{k: (k,) for k in EVENTS}}.get(attribute, (attribute,))
            if not turns:
                if attribute in OPTIONAL and any(attribute in s for s in said.values()):
                    for key in keys:
                        ask("unstated", rng.choice(ASK[key]).format(p=p.name), p.name, key)
                elif attribute in EVENTS and any(attribute in s for s in said.values()) and rng.random() < 0.5:
                    ask("unstated", rng.choice(EVENTS[attribute]["ask"]).format(p=p.name), p.name, attribute)
                continue
            last = turns[-1]
            for key in keys:
                value = last.statement.values[key]
                template = rng.choice(EVENTS[attribute]["ask"] if attribute in EVENTS else ASK[key])
                if len(turns) == 1 and last.corrects is not None:
                    ask("correction", template.format(p=p.name), p.name, key, forms(value, key), [last],
                        forms(last.corrects[0], key), correction_form=last.corrects[1])
                elif len(turns) == 1:
                    ask("single", template.format(p=p.name), p.name, key, forms(value, key), [last])
                else:
                    old = turns[-2].statement.values[key]
                    ask("current", template.format(p=p.name), p.name, key, forms(value, key), [last], [old])
                    ask("previous", rng.choice(ASK_BEFORE[key]).format(p=p.name, v=value), p.name, key,
                        forms(old, key), [turns[-2]])
            if attribute in ASK_DETAIL:
                key, templates = ASK_DETAIL[attribute]
                s = last.statement
                ask("single", rng.choice(templates).format(p=p.name, v=s.event, name=s.event), p.name, key,
                    forms(s.values[key], key), [last])
            for t in turns:
                s = t.statement
                if s.event and s.relative is not None:
                    if rng.random() < 0.5:
                        vp = rng.choice(EVENTS[attribute]["vp"] if attribute in EVENTS else WHEN_VP[attribute])
                        whens.append((t, attribute, vp.format(v=s.event), False))
                    else:
                        whens.append((t, attribute, rng.choice(WHEN_ANY[attribute]), True))
        if "city" in mine:
            last = mine["city"][-1]
            ask("inference", rng.choice(ASK_INFER["country"]).format(p=p.name), p.name, "country",
                [COUNTRY[last.statement.values["city"]]], [last])
        if "trip" in mine:
            last = mine["trip"][-1]
            ask("inference", rng.choice(ASK_INFER["continent"]).format(p=p.name), p.name, "continent",
                [CONTINENT[last.statement.values["trip"]]], [last])
        for key, question in rng.sample(NEVER, 3):
            ask("never_mentioned", question.format(p=p.name), p.name, key)

    # When something happened, asked of whoever told it (temporal) and of someone it did not happen to
    # (adversarial): the same wording.
    news = {(t.speaker, attribute) for t, attribute, _, _ in whens}  # who has news of which kind
    for t, attribute, vp, any_detail in whens:
        first, last, precision = meant(t.statement.relative, date.fromisoformat(t.day))
        template = rng.choice(ASK_WHEN[precision])
        ask("temporal", template.format(p=t.speaker, vp=vp), t.speaker, attribute,
            date_answers(first, last, precision), [t])
        # Of someone else: who never says the detail, and (asked without it) has no such news.
        others = [n for n in names if n != t.speaker and not said_about(n, t.statement.event)
                  and not (any_detail and (n, attribute) in news)]
        if others and rng.random() < 0.7:
            other = rng.choice(others)
            ask("adversarial", template.format(p=other, vp=vp), other, attribute, said_by=t.speaker)
    # Details of news that name it, asked of someone else.
    for p in people:
        for attribute, (key, templates) in ASK_DETAIL.items():
            for t in said.get(p.name, {}).get(attribute, [])[-1:]:
                others = [n for n in names if n != p.name and not said_about(n, t.statement.event)
                          and attribute not in said.get(n, {})]
                if others:
                    other = rng.choice(others)
                    ask("adversarial", rng.choice(templates).format(p=other, v=t.statement.event,
                                                                    name=t.statement.event),
                        other, key, said_by=p.name)
    # The person who ...: a fact that picks one person out, and a fact of theirs told in another session.
    for p in people:
        mine = said.get(p.name, {})
        bridges = []
        for attribute, turns in mine.items():
            if attribute not in BRIDGE or len(turns) != 1:
                continue
            key = {"pet": "pet_name"}.get(attribute, attribute)
            value = turns[0].statement.values[key]
            holders = {n for n, facts in said.items() for ts in facts.values() for x in ts
                       if x.statement.values.get(key) == value}
            if holders == {p.name}:
                bridges.append((attribute, value, turns[0]))
        targets = []  # (what is asked, the turn that says it): facts stated once
        for attribute, turns in mine.items():
            key = {"pet": "pet_kind"}.get(attribute, attribute)
            if key in ASK_OF and len(turns) == 1:
                targets.append((key, turns[0]))
        rng.shuffle(bridges)
        for attribute, value, bridge_turn in bridges[:2]:
            options = [(k, t) for k, t in targets if t.session != bridge_turn.session
                       and k != {"pet": "pet_kind"}.get(attribute, attribute)]
            if not options:
                continue
            key, target = rng.choice(options)
            question = rng.choice(ASK_OF[key]).format(b=BRIDGE[attribute].format(v=value))
            ask("multi_hop", question, p.name, key, forms(target.statement.values[key], key), [bridge_turn, target])
    return out


def _correct(rng: random.Random, log: list[_Turn], count: int) -> list[_Turn]:
    """``log`` with up to ``count`` facts first stated with a wrong value and corrected by the same
    person one to four turns later in the same session (a person at most once). Only attributes
    stated once by their person, and wrong values nobody holds, so that every other question stands."""
    stated: dict[tuple[str, str], list[_Turn]] = {}
    held: dict[str, set[str]] = {}
    for t in log:
        if t.statement is not None and not t.statement.later:
            stated.setdefault((t.speaker, t.statement.attribute), []).append(t)
            for key, value in t.statement.values.items():
                held.setdefault(key, set()).add(value)
    candidates = [ts[0] for (_, attribute), ts in stated.items() if attribute in CORRECTABLE and len(ts) == 1]
    rng.shuffle(candidates)
    out, chosen, people = list(log), 0, set()
    for t in candidates:
        attribute = t.statement.attribute
        if chosen == count or t.speaker in people:
            continue
        value = t.statement.values[attribute]
        if CORRECTABLE[attribute] is None:  # a birthday: another day of the month
            month, day = value.split()
            wrong = f"{month} {int(day) % 28 + 1}"
        else:
            pool = [v for v in CORRECTABLE[attribute] if v not in held[attribute]]
            if not pool:
                continue
            wrong = rng.choice(pool)
        held.setdefault(attribute, set()).add(wrong)
        at = out.index(t)
        session_end = next((i for i in range(at + 1, len(out)) if out[i].session != t.session), len(out))
        place = min(at + rng.randint(*CORRECT_AFTER), session_end)
        form = rng.choice(sorted(CORRECT))
        text = rng.choice(CORRECT[form]).format(s=t.text, v=value, w=wrong)
        out[at] = _Turn(t.pid, t.speaker, t.day, t.session, t.text.replace(value, wrong))
        out.insert(place + 1 if place > at else at + 1,
                   _Turn(f"{t.pid}c", t.speaker, t.day, t.session, text, t.statement, (wrong, form)))
        chosen += 1
        people.add(t.speaker)
    return out


TITLES = ("speaker", "session")


def generate_chat(out_dir: str | Path, *, seed: int = 0, sessions: int = 20, people: int = 10,
                  turns: int = 400, titles: str = "speaker", corrections: int = 0) -> ChatReport:
    """Write the chat log and its questions under ``out_dir`` (see the module doc). ``corrections``:
    facts stated wrongly and corrected in the same session (a seeded stream of its own: the rest of
    the log and its questions are the same as without)."""
    if sessions < 1 or turns < sessions:
        raise ValueError("sessions must be positive and turns at least sessions")
    if corrections < 0:
        raise ValueError("corrections must be 0 or more")
    if titles not in TITLES:
        raise ValueError(f"titles {titles!r} is not one of {', '.join(TITLES)}")
    rng = random.Random(f"{seed}:chat")
    cast = _people(rng, people)
    log = _log(rng, cast, sessions, turns)
    if corrections:
        log = _correct(random.Random(f"{seed}:chat-corrections"), log, corrections)
    queries = _questions(random.Random(f"{seed}:chat-questions"), cast, log)
    queries.sort(key=lambda q: CATEGORIES.index(q["category"]))
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
        f.writelines(json.dumps({"qid": f"c{i:04d}", **q}, ensure_ascii=False) + "\n"
                     for i, q in enumerate(queries, 1))
    counts = {c: sum(q["category"] == c for q in queries) for c in CATEGORIES}
    report = ChatReport(out, seed, sessions, len(log), counts)
    lines = ["# Generated chat log", "",
             (f"Generated by `asmr.eval.synth_chat.generate_chat`: seed {seed}, {sessions} sessions, "
              f"{people} people, titles {titles}, corrections {corrections}."),
             "Format: see the docstring of `asmr/eval/synth_chat.py`.",
             "", f"- turns (one passage each): {len(log)}", "", "| question category | count |", "|---|---|",
             *(f"| {c} | {n} |" for c, n in counts.items()), f"| total | {len(queries)} |", ""]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8", newline="\n")
    return report
