"""Template family B of the generated knowledge base: the same company, other words.

``restyle(world, rng)`` rewrites a world that ``synth_world.build_world`` built (family A's
wording) in place: every document keeps its path, facts, values and revision, but its title,
section titles, sentences and table shapes are written another way, and so is every question
asked of it. ``CHAIN_QUESTIONS`` words the questions that follow a chain of documents, under the
keys of ``synth.CHAIN_QUESTIONS``.

Family B was written apart from family A and from the code that reads the documents, as a
second writer of the same company's pages would: system pages say "the job of X is ..."
instead of "X reconciles ...", error codes and limits become bulleted lines instead of table
rows, release tables become bullets, and questions come as "Which ...", "Tell me ...", "Where
does ...", imperatives and lower-case names. Policy, handbook and FAQ rules get B's own
sentences (``RULES``, by the rule's label) in bulleted lines instead of tables; their section
titles and FAQ headings stay.

The invariants of ``synth`` hold: each fact stays in one line that names its subject, the labels
of optional fields stay in their lines (an unanswerable question is checked by its label), and
fact-free lines are drawn from B's own lists with ``rng``.
"""
from __future__ import annotations

import random
import re

from .synth_vocabulary import DEPENDENCY_PURPOSES, LIMITS, PRACTICES, ROLES
from .synth_world import Doc, Piece, Section, System, World

CHAIN_QUESTIONS = {
    "owner_rotation": ("tell me which team runs the system that {function} and how often that team rotates "
                       "on-call"),
    "owner_lead": "Which team is responsible for the system that {function}, and who is its lead?",
    "channel": "Where does an incident of {lname} get escalated?",
    "code_lead": "Name the lead of the team behind the system that throws {code}.",
    "rule_manager": "Tell me who the product manager is for the system where {via}.",
    "code_office": "Where does the team sit that owns the system throwing {code}?",
    "code_channel": "which channel do i escalate {code} to",
    "rule_lead": "Name the lead of the team that owns the system where {via}.",
    "dependency_lead": "Tell me who runs the team behind the service that {lname} relies on for {purpose}.",
    "code_dependency_lead": "Which person leads the team owning the service that the {code} system relies "
                            "on for {purpose}?",
    "code_dependency_office": "Find the office of the team that owns the service the {code} system relies "
                              "on for {purpose}.",
    "rule_dependency_lead": "who leads the team behind the service that the system where {via} relies on "
                            "for {purpose}?",
}


SECTION_TITLES = {
    "Overview": "What it does", "Limits": "Configured limits", "Deployment": "Where and how it runs",
    "Dependencies": "Upstream services", "Contacts": "Who to ask", "Observability": "Monitoring",
    "Alerts": "When it pages", "Error codes": "Error reference", "Recovery": "Getting it back",
    "Escalation": "If that fails", "Known issues": "Caveats", "Releases": "Release history",
    "Support": "Support window", "Working agreements": "How the team works", "Members": "People",
}
FILLER = (
    "Internal clients reach {S} over a versioned HTTP API; it also emits events when its data changes.",
    "Only services call {S}; every call carries a service token.",
    "Any configuration change to {S} is reviewed like a code change before it ships.",
    "State lives in a managed relational database, restorable to any point in time, for {S}.",
    "Each quarter someone compares the capacity of {S} with the traffic forecast.",
)
RECOVERY = (
    "Look at the {S} dashboard for a jump in errors over the past hour.",
    "Take the broken node out of rotation: `{slug}ctl drain NODE`.",
    "Bounce the workers: `{slug}ctl restart workers`.",
    "Make sure every {S} replica answers 200 on `/healthz`.",
    "Re-run whatever landed in the {S} dead-letter queue.",
    "Tell people in the incident channel what is going on.",
    "Still failing? Go back to the last good {S} release.",
)
_LIMIT_LABELS = {label for label, _ in LIMITS}
_PRACTICE_LABELS = {label for label, _ in PRACTICES} | {"On-call rotation", "Escalation channel"}


def _low(label: str) -> str:
    return label[0].lower() + label[1:]


def _limit_question(rng: random.Random, label: str, name: str) -> str:
    forms = (f"Tell me the {_low(label)} configured for {name}.", f"{_low(label)} of {name.lower()}?",
             f"Which {_low(label)} does {name} use?", f"Look up the {_low(label)} set for {name}.")
    return rng.choice(forms)


def _practice_question(rng: random.Random, label: str, team: str) -> str:
    if label == "On-call rotation":
        return f"How often does the {team} team rotate on-call?"
    if label == "Escalation channel":
        return f"Where do incidents for team {team.lower()} get escalated?"
    forms = (f"Tell me the {_low(label)} of team {team}.", f"which {_low(label)} does team {team} have",
             f"Look up the {_low(label)} of the {team} team.")
    return rng.choice(forms)


_TOPIC_REWRITES = (
    (re.compile(r"^What is the (.+)\?$"), lambda m: f"Tell me the {m[1]}."),
    (re.compile(r"^In which system (is|are) (.+) (\w+)\?$"),
     lambda m: f"Name the system where {m[2]} {m[1]} {m[3]}."),
    (re.compile(r"^How (much|many|long|large|far|big) (.+)\?$"), lambda m: f"tell me how {m[1]} {m[2]}"),
    (re.compile(r"^Within how long (.+)\?$"), lambda m: f"Which deadline applies: within how long {m[1]}?"),
    (re.compile(r"^Which (.+)\?$"), lambda m: f"Look up which {m[1]}."),
)


def _topic_question(rng: random.Random, question: str) -> str:
    for pattern, rewrite in _TOPIC_REWRITES:
        if m := pattern.match(question):
            return rewrite(m)
    return rng.choice(("Quick question: ", "I need to know: ", "Policy check. ")) + _low(question)


# Specification lines of fixed labels: the sentence ({name}; {0}, {1}... the facts' values) and a
# question for each fact ({name}, or {lname} lower-cased).
_SPEC_WORDING = {
    ("Replicas", "Region"): ("In production, {name} is deployed to {1} with {0}.",
                             ("Tell me how many replicas {name} has in production.", "Where does {name} run?")),
    ("Maintenance day", "Maintenance start", "Maintenance length"): (
        "Planned maintenance on {name} happens every {0}, begins at {1} and takes {2}.",
        ("Which weekday is {name} maintained on?", "When does planned maintenance of {lname} begin?",
         "Tell me how long the planned maintenance of {name} takes.")),
    ("Host group",): ("Deployments of {name} come from the {0} host group.",
                      ("Which host group are {name} deployments rolled out from?",)),
    ("SKU",): ("Billing for {name} is booked against {0}.", ("Give the SKU that {name} is billed under.",)),
    ("Product manager",): ("{0} is the product manager for {name} and takes its product questions.",
                           ("who do i ask product questions about {lname}?",)),
    ("Availability target",): ("The monthly availability goal of {name} is {0}.",
                               ("Tell me the monthly availability goal of {name}.",)),
    ("Dashboard",): ("Metrics of {name} are shown on dashboard {0}.",
                     ("Which dashboard shows the metrics of {name}?",)),
}


def _system_piece(rng: random.Random, s: System, p: Piece) -> None:
    name, labels = s.name, tuple(f.label for f in p.facts)
    if labels == ("Owner", "Production start"):
        p.template = (f"The job of {name} is simple: it {s.function}. The {{0}} team looks after it, and it "
                      "has been live since {1}.")
        p.facts[0].question = f"which team is responsible for {name.lower()}?"
        p.facts[1].question = f"Since when has {name} been live?"
    elif not p.facts:
        p.template = rng.choice(FILLER).format(S=name)
    elif labels[0] in _LIMIT_LABELS:
        p.template = f"{labels[0]} ({name}): {{0}}"
        p.facts[0].question = _limit_question(rng, labels[0], name)
    elif labels in _SPEC_WORDING:
        template, questions = _SPEC_WORDING[labels]
        p.template = template.replace("{name}", name)
        for fact, question in zip(p.facts, questions):
            fact.question = question.format(name=name, lname=name.lower())
    elif labels[0] in DEPENDENCY_PURPOSES:
        p.template = f"For {labels[0]}, {name} calls {{0}}."
        p.facts[0].question = f"Which service does {name} call for {labels[0]}?"
    else:
        raise ValueError(f"family B has no wording for the {name} specification line {p.template!r}")


def _runbook_piece(rng: random.Random, s: System, section: Section, p: Piece, steps: list[str]) -> None:
    name, labels = s.name, tuple(f.label for f in p.facts)
    if section.form == "steps":
        p.template = steps.pop(0)
    elif not p.facts:
        p.template = f"On-call guide for {name}: start here when it pages you or customers see errors."
    elif labels == ("Error-rate threshold", "Error-rate window"):
        p.template = f"An error rate over {{0}} lasting {{1}} pages the {name} on-call engineer."
        p.facts[0].question = f"what error rate makes {name.lower()} page on-call?"
        p.facts[1].question = (f"How long does the error rate of {name} have to stay high before anyone "
                               "is paged?")
    elif labels == ("Latency threshold",):
        p.template = f"A p99 latency above {{0}} triggers a latency alert for {name}."
        p.facts[0].question = f"Which p99 latency triggers a latency alert for {name}?"
    elif labels == ("System",):
        code, meaning, response = (c.strip() for c in p.template.strip().strip("|").split(" | "))
        meaning = meaning.removeprefix("{0} ")
        p.template = f"{code} means that {{0}} {meaning}; first response: {_low(response)}"
        p.facts[0].question = rng.choice((f"Where does error code {code} come from?",
                                          f"Which system throws {code}?",
                                          f"{code} is raised by what system?"))
    elif labels == ("Escalation deadline",):
        sev = re.search(r"SEV-\d", p.template)[0]
        p.template = (f"Not recovered after {{0}}? Then {name} goes to the owning team's escalation channel "
                      f"as a {sev} incident.")
        p.facts[0].question = f"Tell me how long {name} may stay broken before the incident is escalated."
    elif labels == ("Export limit",):
        p.template = f"Large exports can fail: {name} may time out on anything over {{0}}."
        p.facts[0].question = f"Above which export size do exports from {name} time out?"
    else:
        raise ValueError(f"family B has no wording for the {name} runbook line {p.template!r}")


def _changelog_piece(s: System, p: Piece) -> None:
    name, labels = s.name, tuple(f.label for f in p.facts)
    if not p.facts:
        p.template = f"Release notes for {name}; the latest release is listed first."
    elif labels == ("Version", "Release date"):
        feature = re.search(r"Added (.*)\. \|$", p.template)[1]
        version = p.facts[0].value
        p.template = f"{name} {{0}}, released {{1}}, brought {feature}."
        p.facts[0].question = f"In which release did {name} get {feature}?"
        p.facts[1].question = f"Tell me the release date of {name} {version}."
    elif labels == ("End of support",):
        major = re.search(r" (\d+)\.x ", p.template)[1]
        p.template = f"Support for the {major}.x line of {name} ends on {{0}}."
        p.facts[0].question = f"When does support for {name} {major}.x end?"
    else:
        raise ValueError(f"family B has no wording for the {name} changelog line {p.template!r}")


def _team_piece(rng: random.Random, team: str, p: Piece) -> None:
    labels = tuple(f.label for f in p.facts)
    if labels == ("Lead", "Office"):
        p.template = f"{team} is a team based in the {{1}} office under {{0}}."
        p.facts[0].question = f"who is the lead of team {team.lower()}?"
        p.facts[1].question = f"Where does the {team} team sit?"
    elif labels[0] in _PRACTICE_LABELS:
        p.template = f"{labels[0]} for team {team}: {{0}}"
        p.facts[0].question = _practice_question(rng, labels[0], team)
    elif labels[0] in ROLES:
        p.template = f"Team {team} has {{0}} as its {labels[0]}."
        p.facts[0].question = f"Which person is the {labels[0]} on the {team} team?"
    else:
        raise ValueError(f"family B has no wording for the {team} team line {p.template!r}")


def _topic_piece(rng: random.Random, p: Piece) -> None:
    (f,) = p.facts  # a rule states one value
    p.template = RULES[f.label]
    f.question = _topic_question(rng, f.question)


def _restyle_doc(rng: random.Random, d: Doc, systems: dict[str, System], teams: dict[str, str]) -> None:
    area, slug = d.path.split("/")[0], d.path.split("/")[-1].removesuffix(".md")
    s = systems.get(slug)
    if area == "systems":
        d.title = f"{s.name}: service sheet"
    elif area == "runbooks":
        d.title = f"On-call guide for {s.name}"
    elif area == "changelogs":
        d.title = f"{s.name} release notes"
    elif area == "teams":
        d.title = f"Team {teams[slug]}"
    steps = [t.format(S=s.name, slug=slug) for t in rng.sample(RECOVERY, len(RECOVERY))] if s else []
    for section in d.sections:
        if area in ("systems", "runbooks", "changelogs", "teams"):  # a policy's or FAQ's titles stay
            section.title = SECTION_TITLES.get(section.title, section.title)
        if section.form == "table":  # every family B table is a list of "label: value" lines
            section.form, section.header = "bullets", ""
        for p in section.pieces:
            if area == "systems":
                _system_piece(rng, s, p)
            elif area == "runbooks":
                _runbook_piece(rng, s, section, p, steps)
            elif area == "changelogs":
                _changelog_piece(s, p)
            elif area == "teams":
                _team_piece(rng, teams[slug], p)
            else:
                _topic_piece(rng, p)


def restyle(world: World, rng: random.Random) -> None:
    """Rewrite ``world`` in family B's wording, in place (see the module doc)."""
    systems = {s.name.lower(): s for s in world.systems}
    teams = {d.path.split("/")[-1].removesuffix(".md"): d.title.removesuffix(" team")
             for d in world.docs if d.path.startswith("teams/")}
    for d in world.docs:
        _restyle_doc(rng, d, systems, teams)
    names = {s.name for s in world.systems}
    team_names = set(teams.values())
    absent = []
    for subject, label, question, peers in world.absent:
        if subject in names:
            question = _limit_question(rng, label, subject)
        elif subject in team_names:
            question = _practice_question(rng, label, subject)
        else:
            question = _topic_question(rng, question)
        absent.append((subject, label, question, peers))
    world.absent[:] = absent


# Family B's sentence for each policy, handbook and FAQ rule, by the rule's label.
RULES = {
    "booked at least": "Book flights no later than {0} ahead of departure.",
    "economy class": "Any flight under {0} is flown in economy class.",
    "vice president": "A vice president signs off on any trip that runs past {0}.",
    "rail is required": "Take the train whenever the journey is under {0}; rail is required there.",
    "hotel cap": "Hotels: we cover at most {0} a night (the hotel cap).",
    "meal allowance": "Meals on the road: a daily meal allowance of {0}.",
    "airport parking": "Airport parking is paid back up to {0} per day.",
    "insurance excess": "If you claim on travel insurance, the insurance excess is {0}.",
    "travel expenses are claimed": "Put your travel expenses in {0}.",
    "travel claims must": "Once you are back, you have {0} to file travel claims.",
    "boarding passes": "Lost your boarding pass? A signed statement replaces it, handed in within {0}.",
    "paid vacation": "Everyone gets {0} of paid vacation per year.",
    "carries over": "Up to {0} of unused vacation can be moved into next year.",
    "vacation is requested": "Ask for vacation through {0}.",
    "in a row needs approval": "Planning more than {0} off in a row? Get it approved a month before.",
    "parental leave": "Parental leave: {0}, paid in full.",
    "bereavement": "After a death in the family, bereavement leave of {0} applies.",
    "sabbatical": "A sabbatical becomes possible once you have {0} of service.",
    "volunteering": "Each year you can take {0} as volunteering days.",
    "doctor's note": "Off sick for more than {0} in a row? Then we need a doctor's note.",
    "reported to the manager": "On your first sick day, tell your manager by {0}.",
    "long-term sick pay": "During long illness, full salary is paid for {0}.",
    "password resets": "You can reset your own password in {0}.",
    "vpn sessions": "With no traffic for {0}, the VPN drops the session.",
    "email attachments": "The biggest attachment you can email is {0}.",
    "shared drive": "Your personal share of the shared drive is {0}.",
    "staffed from": "On weekdays the help desk picks up from {0}.",
    "replacement keyboards": "A replacement keyboard or mouse reaches you within {0}.",
    "director's approval": "A director has to approve any expense claim over {0}.",
    "client entertainment": "When you entertain clients, spend no more than {0} on each guest.",
    "software subscriptions": "Subscriptions for software costing less than {0} monthly can go on a company card.",
    "expense claims are submitted": "Submit expense claims through {0}.",
    "receipts are required": "Keep a receipt for each item over {0}.",
    "claims older than": "We reject any expense claim more than {0} old.",
    "approved expenses": "Once approved, expenses are reimbursed within {0}.",
    "laptops are replaced": "You get a new laptop every {0}.",
    "laptop delivery": "Expect a standard laptop to arrive in {0}.",
    "hardware requests": "Request hardware through {0}.",
    "second monitors": "A second monitor is fine if it costs no more than {0}.",
    "home-office budget": "For setting up a home office you get a one-time {0}.",
    "internet costs": "Home internet is covered up to {0} monthly.",
    "mobile phone": "Your mobile phone plan is paid up to {0} monthly.",
    "ergonomic chair": "An ergonomic chair can cost up to {0}.",
    "passwords must be": "Use passwords of {0} or more.",
    "laptops lock": "After {0} without input, a laptop locks itself.",
    "access reviews": "Every {0}, all access is reviewed again.",
    "production access": "Approval for production access comes through {0}.",
    "stolen laptop": "Report a lost or stolen laptop within {0}.",
    "phishing": "Clicked a phishing link? Report it within {0}.",
    "leaked credential": "A leaked credential must be reported within {0}.",
    "usb device": "Found a USB device nobody knows? Report it within {0}.",
    "new hires receive": "Accounts for new hires are ready {0} ahead of their first day.",
    "onboarding tasks": "We track onboarding tasks in {0}.",
    "welcome packs": "The welcome pack goes out {0} ahead of the first day.",
    "probation": "New employees are on probation for {0}.",
    "buddy": "For the first {0}, every new hire is paired with a buddy.",
    "security training": "Finish the security training in your first {0}.",
    "first check-in": "Your manager holds a first check-in with you {0} in.",
    "office opens": "Weekdays, the doors of the main office open at {0}.",
    "meeting rooms are booked": "Grab a meeting room in {0}.",
    "room booking": "No single room booking can exceed {0}.",
    "visitors must": "Register any visitor at least {0} before they arrive.",
    "bike garage": "Bikes go in the bike garage, which holds {0}.",
    "staff canteen": "Lunch in the staff canteen costs {0} for the menu of the day.",
    "supplier contracts": "We keep supplier contracts for {0} once they expire.",
    "employee records": "Records of an employee who left are kept {0}.",
    "chat transcripts": "Transcripts of support chats are held for {0}.",
    "cctv": "Recorded CCTV video is held for {0}.",
    "job applications": "Applications from job candidates are kept for {0}.",
    "deletion requests": "Requests from customers to delete data are tracked in {0}.",
    "legal holds": "Every {0} someone reviews each legal hold.",
    "backups containing": "A backup that still holds deleted records expires in {0} at most.",
    "sev-1": "A SEV-1 incident gets its first response within {0}.",
    "sev-2": "A SEV-2 incident gets its first response within {0}.",
    "sev-3": "A SEV-3 incident gets its first response within {0}.",
    "post-incident reviews": "Hold the post-incident review no later than {0} after resolution.",
    "incidents are declared": "Declare an incident in {0}.",
    "status page": "While a major incident lasts, update the status page every {0}.",
    "follow-up actions": "Close the follow-up actions of a review within {0}.",
    "reviews take place": "We hold performance reviews every {0}.",
    "self-assessments": "Hand in your self-assessment {0} ahead of the review meeting.",
    "promotion cases": "Managers submit promotion cases through {0}.",
    "salary adjustments": "New salaries apply from {0}.",
    "bonus pool": "Each year the bonus pool is worth {0} of base salary.",
    "spot awards": "Nobody receives more than {0} a year in spot awards.",
    "competing quotes": "Buying something over {0}? Collect three competing quotes first.",
    "purchase orders": "Raise purchase orders through {0}.",
    "new suppliers": "Vetting a new supplier takes at most {0}.",
    "to stop renewal": "To stop a supplier contract renewing, cancel it {0} before it ends.",
    "payment terms": "Suppliers are paid on {0} net terms.",
    "legal review": "Legal reviews every contract worth more than {0}.",
}
