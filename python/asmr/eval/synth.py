"""A generated enterprise knowledge base and its questions, for the answer-accuracy benchmark.

``generate(out_dir, seed=0, units_target=5000, questions=800)`` writes, deterministically for
a seed (no clock, no set iteration)::

    out_dir/docs/v1/<area>/<name>.md   the knowledge base as first published
    out_dir/docs/v2/<area>/<name>.md   one revision round: the same paths
    out_dir/queries.jsonl              the questions
    out_dir/README.md                  counts per type, documents, units, seed

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

    {"qid": "q0001", "question": "...", "type": "single|multi|conflict|unanswerable",
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

``load_queries(path)`` reads the questions back, checking each line; ``surface_forms(value)``
gives the accepted forms of one value.
"""
from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

from ..units.ids import doc_id_from_path
from .jsonl import records
from ..units.model import Document
from ..units.read import chunk_document

TYPES = ("single", "multi", "conflict", "unanswerable")
MIX = {"single": 0.45, "multi": 0.20, "conflict": 0.15, "unanswerable": 0.20}
UNITS_PER_SYSTEM = 60  # first guess for the size search; measured units decide
MAX_SIZE_ROUNDS = 6


def _n(fmt: str, values) -> tuple[str, ...]:
    return tuple(fmt.format(v) for v in values)


# -- value vocabularies ---------------------------------------------------------------------

SIZES = ("64 MB", "128 MB", "256 MB", "512 MB", "1 GB", "2 GB", "4 GB", "8 GB")
SMALL_SIZES = _n("{} MB", (10, 20, 25, 35, 50))
DRIVE_SIZES = _n("{} GB", (50, 100, 200, 250, 500))
SECONDS = _n("{} seconds", (5, 10, 15, 20, 30, 45, 60, 90, 120))
MILLISECONDS = _n("{} ms", (200, 300, 400, 500, 800, 1000, 1500, 2000))
MINUTES = _n("{} minutes", (2, 5, 10, 15, 20, 30, 45, 60, 90))
HOURS = _n("{} hours", (2, 3, 4, 6, 8, 12))
SHORT_HOURS = ("1 hour", "2 hours", "3 hours", "4 hours")
DAYS = _n("{} days", (7, 14, 21, 30, 45, 60, 90, 180, 365))
FEW_DAYS = _n("{} days", (2, 3, 4, 5, 8, 10))
WEEKS = _n("{} weeks", (2, 4, 6, 8, 12, 16, 20, 26))
MONTHS = _n("{} months", (3, 4, 6, 9, 12, 18, 24))
YEARS = _n("{} years", (2, 3, 4, 5, 7, 10))
BUSINESS_DAYS = _n("{} business days", (2, 3, 4, 5, 7, 10))
EUR_SMALL = _n("{} EUR", (5, 10, 15, 20, 25, 30, 40, 50))
EUR = _n("{} EUR", range(60, 400, 20))
EUR_LARGE = _n("{:,} EUR", range(1000, 10001, 500))
PERCENT = _n("{}%", (1, 2, 3, 5, 8, 10, 12, 15))
DAY_TIMES = tuple(f"{h:02d}:{m:02d} UTC" for h in range(6, 11) for m in (0, 30))
NIGHT_TIMES = tuple(f"{h:02d}:{m:02d} UTC" for h in range(0, 5) for m in (0, 30))
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ROTATIONS = ("daily", "weekly", "every two weeks", "every three weeks", "monthly")
REPLICAS = _n("{} replicas", range(2, 10))
REGIONS = ("eu-west-2", "eu-central-1", "eu-north-1", "us-east-1", "us-west-2", "ap-southeast-1")
OFFICES = ("Kestrel Point", "Harrowgate", "Lindenfeld", "Port Averne", "Solby", "Marrick Bay")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
SYSTEM = None  # a Rule whose value is the name of a system

# -- invented names -------------------------------------------------------------------------

SYSTEM_HEADS = ("Vant", "Bris", "Quor", "Zel", "Tamr", "Orv", "Kest", "Lum", "Marr", "Nov", "Pell",
                "Rhon", "Sarn", "Thal", "Ulm", "Wess", "Yar", "Cald", "Dorn", "Ferr", "Gald", "Ivr",
                "Jorv", "Brel")
SYSTEM_TAILS = ("orel", "ade", "ion", "ix", "ara", "ent", "ova", "une", "isk", "ant", "ello", "ium")
TEAM_HEADS = ("Cobalt", "Amber", "Saffron", "Slate", "Juniper", "Vermilion", "Ochre", "Indigo",
              "Russet", "Celadon", "Umber", "Garnet")
TEAM_TAILS = ("Heron", "Lynx", "Marten", "Osprey", "Ibex", "Wren", "Otter", "Kestrel", "Tapir",
              "Puffin", "Bison", "Gecko")
FIRST_NAMES = ("Ilsa", "Teodor", "Maren", "Quinlan", "Odile", "Bastien", "Rowena", "Anselm", "Ysolde",
               "Caspian", "Liesel", "Dorian", "Fenna", "Lazlo", "Mireille", "Soren", "Talia", "Emrys",
               "Katrin", "Nils", "Oriane", "Fabian", "Henrike", "Tobiah")
LAST_NAMES = ("Marrowby", "Quillfeather", "Ashgrove", "Thistlewood", "Brackenridge", "Fairweather",
              "Holloway", "Lindqvist", "Oakenshaw", "Penhallow", "Ravensworth", "Stormont",
              "Vantreight", "Whitlock", "Yarborough", "Castellane", "Dunmore", "Kettleby")
ACTIONS = ("reconciles", "schedules", "archives", "routes", "validates", "forecasts",
           "deduplicates", "encrypts", "indexes", "prices", "audits", "batches")
OBJECTS = ("supplier invoices", "warehouse pickups", "payroll exports", "customer refunds",
           "loyalty points", "shipping labels", "tax filings", "contract renewals", "fleet telemetry",
           "support tickets", "marketing consents", "inventory counts", "partner payouts",
           "badge access logs")

# -- what the documents say -----------------------------------------------------------------

# (label, values): each system states some of these; an absent one is an unanswerable question.
LIMITS = (
    ("Maximum upload size", SIZES),
    ("Request timeout", SECONDS),
    ("Rate limit", _n("{:,} requests per minute", range(300, 6001, 300))),
    ("Log retention", DAYS),
    ("Cache TTL", MINUTES),
    ("Maximum concurrent connections", _n("{:,} connections", range(500, 10001, 500))),
    ("Backup frequency", _n("every {} hours", (2, 3, 4, 6, 8, 12, 24))),
    ("Recovery point objective", MINUTES),
    ("Recovery time objective", HOURS),
    ("Session idle timeout", MINUTES),
    ("Maximum batch size", _n("{:,} records", range(1000, 50001, 1000))),
)
# (label, values): the team page's optional rows, handled like LIMITS.
PRACTICES = (
    ("Stand-up time", DAY_TIMES),
    ("Headcount", _n("{} engineers", range(3, 15))),
    ("Budget code", None),  # a fresh CC- code
    ("Sprint length", ("1 week", "2 weeks", "3 weeks")),
    ("Code review turnaround", _n("{} business hours", (4, 8, 16, 24))),
)
ROLES = ("site reliability engineer", "quality engineer", "data engineer", "security champion",
         "product designer")
DEPENDENCY_PURPOSES = ("identity checks", "message delivery", "currency conversion", "document storage",
                       "full-text search", "feature flags")
ERRORS = (  # (meaning after the system's name, first response)
    ("rejected a request over its size limit", "Ask the caller to retry with a smaller payload."),
    ("lost its connection to the database", "Check the database failover status."),
    ("timed out waiting for an upstream service", "Check the upstream health dashboards."),
    ("refused an expired service token", "Rotate the service token."),
    ("found a schema mismatch in an incoming record", "Quarantine the record and notify the sender."),
    ("ran out of worker capacity", "Scale out the worker pool."),
    ("could not acquire a lock", "Clear stale locks with the admin tool."),
    ("received a malformed signature", "Verify the signing key rotation."),
)
RECOVERY_STEPS = (
    "Check the {S} dashboard for error spikes in the last hour.",
    "Drain the failing node with `{slug}ctl drain NODE`.",
    "Restart the worker pool with `{slug}ctl restart workers`.",
    "Confirm that `/healthz` returns 200 on every {S} replica.",
    "Replay failed jobs from the {S} dead-letter queue.",
    "Post a status update in the incident channel.",
    "Roll back to the previous {S} release if the error rate does not drop.",
)
OVERVIEW_FILLER = (
    "{S} exposes a versioned HTTP API to internal clients and publishes change events for its consumers.",
    "Requests to {S} are authenticated with service tokens; end users never call it directly.",
    "Configuration changes to {S} go through the standard change review before release.",
    "{S} keeps its state in a managed relational database with point-in-time recovery.",
    "Capacity of {S} is reviewed each quarter against the traffic forecast.",
)
FEATURES = ("bulk export to CSV", "per-tenant rate limits", "a dry-run mode for migrations",
            "audit log streaming", "retry budgets for outbound calls", "hardware-key sign-in for operators",
            "schema validation on ingest", "a read-only maintenance mode", "compressed payloads",
            "webhook signing", "regional failover drills", "field-level encryption",
            "an admin console for quotas", "idempotency keys", "paginated search results",
            "scheduled reports", "a cost dashboard", "multi-currency support", "batch cancellation",
            "streaming uploads", "tenant-level feature flags", "a sandbox environment",
            "SAML single sign-on", "structured error payloads")


class Rule(NamedTuple):
    """One rule of a policy, handbook chapter or FAQ."""
    template: str  # "{0}" marks the value
    question: str
    label: str  # a phrase only this rule's text holds: an absent rule is checked by it
    values: tuple[str, ...] | None  # SYSTEM (None): the value is the name of a system
    via: str = ""  # a rule naming a system: the clause a multi-hop question goes through
    heading: str = ""  # a FAQ entry: its question heading


class Topic(NamedTuple):
    path: str
    title: str
    doc_type: str
    sections: tuple[tuple[str, str, str, tuple[Rule, ...]], ...]  # (title, form, table header, rules)


TOPICS = (
    Topic("policies/travel.md", "Travel policy", "other", (
        ("Booking", "bullets", "", (
            Rule("Flights must be booked at least {0} before departure.",
                 "How far in advance must flights be booked under the travel policy?",
                 "booked at least", _n("{} days", (7, 10, 14, 21, 28))),
            Rule("Economy class applies to flights shorter than {0}.",
                 "Below what flight duration is economy class required?", "economy class", HOURS),
            Rule("Trips longer than {0} need approval from a vice president.",
                 "How long can a business trip last before it needs a vice president's approval?",
                 "vice president", FEW_DAYS),
            Rule("Rail is required for journeys shorter than {0}.",
                 "Below what journey time is rail travel required?", "rail is required", SHORT_HOURS),
        )),
        ("Allowances", "table", "| Travel allowance | Amount |", (
            Rule("| Nightly hotel cap | {0} |", "What is the nightly hotel cap in the travel policy?",
                 "hotel cap", EUR),
            Rule("| Daily meal allowance | {0} |", "What is the daily meal allowance for business travel?",
                 "meal allowance", EUR_SMALL),
            Rule("| Airport parking | {0} per day |", "How much airport parking is reimbursed per day?",
                 "airport parking", EUR_SMALL),
            Rule("| Travel insurance excess | {0} |", "What is the travel insurance excess?",
                 "insurance excess", EUR),
        )),
        ("Claims", "paragraphs", "", (
            Rule("Travel expenses are claimed in {0}.", "In which system are travel expenses claimed?",
                 "travel expenses are claimed", SYSTEM, via="travel expenses are claimed"),
            Rule("Travel claims must be filed within {0} of returning.",
                 "Within how long of returning must travel claims be filed?", "travel claims must", DAYS),
            Rule("Lost boarding passes are replaced by a signed statement within {0}.",
                 "Within how long must a lost boarding pass be replaced by a signed statement?",
                 "boarding passes", FEW_DAYS),
        )),
    )),
    Topic("handbook/leave.md", "Leave and time off", "manual", (
        ("Vacation", "bullets", "", (
            Rule("Employees receive {0} of paid vacation a year.",
                 "How much paid vacation do employees get a year?",
                 "paid vacation", _n("{} days", (24, 25, 26, 27, 28, 30))),
            Rule("Unused vacation of up to {0} carries over to the next year.",
                 "How much unused vacation carries over to the next year?", "carries over", FEW_DAYS),
            Rule("Vacation is requested in {0}.", "In which system is vacation requested?",
                 "vacation is requested", SYSTEM, via="vacation is requested"),
            Rule("Vacation longer than {0} in a row needs approval a month ahead.",
                 "How long can a vacation last before it needs approval a month ahead?",
                 "in a row needs approval", _n("{} weeks", (2, 3, 4))),
        )),
        ("Other leave", "table", "| Leave type | Allowance |", (
            Rule("| Parental leave | {0} at full pay |", "How long is parental leave at full pay?",
                 "parental leave", WEEKS),
            Rule("| Bereavement leave | {0} |", "How much bereavement leave do employees get?",
                 "bereavement", FEW_DAYS),
            Rule("| Sabbatical | after {0} of service |",
                 "After how many years of service is a sabbatical available?",
                 "sabbatical", YEARS),
            Rule("| Volunteering days | {0} a year |", "How many volunteering days do employees get a year?",
                 "volunteering", FEW_DAYS),
        )),
        ("Sickness", "paragraphs", "", (
            Rule("Sick leave longer than {0} in a row needs a doctor's note.",
                 "After how many consecutive sick days is a doctor's note needed?",
                 "doctor's note", FEW_DAYS),
            Rule("Sick leave is reported to the manager before {0} on the first day.",
                 "By what time must sick leave be reported on the first day?", "reported to the manager",
                 DAY_TIMES),
            Rule("Long-term sick pay continues at full salary for {0}.",
                 "How long does long-term sick pay continue at full salary?", "long-term sick pay", MONTHS),
        )),
    )),
    Topic("faq/it-help-desk.md", "IT help desk FAQ", "faq", (
        ("", "faq", "", (
            Rule("Password resets are self-service in {0}.", "In which system are password resets done?",
                 "password resets",
                 SYSTEM, via="password resets are done", heading="How do I reset my password?"),
            Rule("VPN sessions disconnect after {0} without traffic.",
                 "After how long without traffic do VPN sessions disconnect?", "vpn sessions", HOURS,
                 heading="Why does my VPN disconnect?"),
            Rule("Email attachments may be up to {0}.", "How large may email attachments be?",
                 "email attachments", SMALL_SIZES, heading="How big can email attachments be?"),
            Rule("Each employee gets {0} of shared drive space.",
                 "How much shared drive space does each employee get?",
                 "shared drive", DRIVE_SIZES, heading="How much storage do I get?"),
            Rule("The help desk is staffed from {0} on weekdays.",
                 "From what time is the help desk staffed on weekdays?",
                 "staffed from", DAY_TIMES, heading="When can I call the help desk?"),
            Rule("Replacement keyboards and mice ship within {0}.",
                 "Within how long do replacement keyboards and mice ship?", "replacement keyboards",
                 BUSINESS_DAYS, heading="My keyboard broke. What now?"),
        )),
    )),
    Topic("policies/expenses.md", "Expense policy", "other", (
        ("Limits", "bullets", "", (
            Rule("Expense claims above {0} need a director's approval.",
                 "Above what amount do expense claims need a director's approval?",
                 "director's approval", EUR_LARGE),
            Rule("Client entertainment is capped at {0} per guest.",
                 "What is the per-guest cap for client entertainment?", "client entertainment", EUR),
            Rule("Software subscriptions under {0} a month may be bought on a company card.",
                 "Up to what monthly price may software subscriptions be bought on a company card?",
                 "software subscriptions", EUR),
        )),
        ("Submitting claims", "paragraphs", "", (
            Rule("Expense claims are submitted in {0}.", "In which system are expense claims submitted?",
                 "expense claims are submitted", SYSTEM, via="expense claims are submitted"),
            Rule("Receipts are required for every expense item above {0}.",
                 "Above what amount is a receipt required for an expense item?",
                 "receipts are required", EUR_SMALL),
            Rule("Expense claims older than {0} are rejected.",
                 "After how long are expense claims rejected as too old?",
                 "claims older than", MONTHS),
            Rule("Approved expenses are paid within {0}.", "Within how long are approved expenses paid?",
                 "approved expenses", BUSINESS_DAYS),
        )),
    )),
    Topic("handbook/equipment.md", "Equipment and home office", "manual", (
        ("Hardware", "bullets", "", (
            Rule("Laptops are replaced every {0}.", "How often are laptops replaced?", "laptops are replaced",
                 _n("{} years", (2, 3, 4, 5))),
            Rule("Standard laptop delivery takes {0}.", "How long does standard laptop delivery take?",
                 "laptop delivery", BUSINESS_DAYS),
            Rule("Hardware requests are filed in {0}.", "In which system are hardware requests filed?",
                 "hardware requests", SYSTEM, via="hardware requests are filed"),
            Rule("Second monitors are approved up to {0}.", "Up to what price are second monitors approved?",
                 "second monitors", EUR),
        )),
        ("Home office", "table", "| Home-office item | Allowance |", (
            Rule("| Home-office budget | {0} once |", "What is the one-time home-office budget?",
                 "home-office budget", EUR_LARGE),
            Rule("| Internet costs | {0} a month |", "How much of internet costs is reimbursed a month?",
                 "internet costs", EUR_SMALL),
            Rule("| Mobile phone plan | {0} a month |",
                 "How much of a mobile phone plan is reimbursed a month?",
                 "mobile phone", EUR_SMALL),
            Rule("| Ergonomic chair | {0} |",
                 "How much is allowed for an ergonomic chair?", "ergonomic chair", EUR),
        )),
    )),
    Topic("policies/security.md", "Information security policy", "other", (
        ("Passwords and access", "bullets", "", (
            Rule("Passwords must be at least {0} long.", "What is the minimum password length?",
                 "passwords must be", _n("{} characters", (12, 14, 16, 18, 20))),
            Rule("Laptops lock after {0} of inactivity.", "After how long do inactive laptops lock?",
                 "laptops lock", MINUTES),
            Rule("Access reviews run every {0}.", "How often do access reviews run?", "access reviews", DAYS),
            Rule("Production access requests are approved in {0}.",
                 "In which system are production access requests approved?", "production access", SYSTEM,
                 via="production access requests are approved"),
        )),
        ("Reporting incidents", "table", "| Security incident | Report within |", (
            Rule("| Lost or stolen laptop | {0} |",
                 "Within how long must a lost or stolen laptop be reported?",
                 "stolen laptop", SHORT_HOURS),
            Rule("| Clicked phishing link | {0} |",
                 "Within how long must a clicked phishing link be reported?",
                 "phishing", MINUTES),
            Rule("| Leaked credential | {0} |", "Within how long must a leaked credential be reported?",
                 "leaked credential", MINUTES),
            Rule("| Unknown USB device found | {0} |",
                 "Within how long must a found unknown USB device be reported?", "usb device", SHORT_HOURS),
        )),
    )),
    Topic("handbook/onboarding.md", "Onboarding", "manual", (
        ("Before day one", "bullets", "", (
            Rule("New hires receive their accounts {0} before their start date.",
                 "How long before their start date do new hires receive their accounts?", "new hires receive",
                 BUSINESS_DAYS),
            Rule("Onboarding tasks are tracked in {0}.", "In which system are onboarding tasks tracked?",
                 "onboarding tasks", SYSTEM, via="onboarding tasks are tracked"),
            Rule("Welcome packs are shipped {0} before the start date.",
                 "How long before the start date are welcome packs shipped?", "welcome packs", FEW_DAYS),
        )),
        ("First months", "bullets", "", (
            Rule("The probation period is {0}.", "How long is the probation period?", "probation",
                 _n("{} months", (3, 4, 6))),
            Rule("Each new hire has a buddy for the first {0}.", "For how long does a new hire have a buddy?",
                 "buddy", WEEKS),
            Rule("Security training must be completed within {0} of starting.",
                 "Within how long of starting must security training be completed?",
                 "security training", DAYS),
            Rule("The first check-in with the manager happens after {0}.",
                 "When does the first check-in with the manager happen?", "first check-in", WEEKS),
        )),
    )),
    Topic("faq/office.md", "Office FAQ", "faq", (
        ("", "faq", "", (
            Rule("The main office opens at {0} on weekdays.",
                 "At what time does the main office open on weekdays?",
                 "office opens", DAY_TIMES, heading="When does the office open?"),
            Rule("Meeting rooms are booked in {0}.", "In which system are meeting rooms booked?",
                 "meeting rooms are booked", SYSTEM, via="meeting rooms are booked",
                 heading="How do I book a meeting room?"),
            Rule("A meeting room booking may last at most {0}.", "How long may a meeting room booking last?",
                 "room booking", SHORT_HOURS, heading="How long can I keep a room?"),
            Rule("Visitors must be registered {0} in advance.",
                 "How far in advance must visitors be registered?",
                 "visitors must", HOURS, heading="Can I bring a visitor?"),
            Rule("The bike garage has {0}.", "How many spaces does the bike garage have?", "bike garage",
                 _n("{} spaces", range(20, 121, 10)), heading="Is there bike parking?"),
            Rule("The staff canteen charges {0} for the daily menu.",
                 "How much does the staff canteen charge for the daily menu?", "staff canteen", EUR_SMALL,
                 heading="How much is lunch?"),
        )),
    )),
    Topic("policies/data-retention.md", "Data retention policy", "other", (
        ("Retention periods", "table", "| Record type | Retention period |", (
            Rule("| Supplier contracts | {0} after expiry |",
                 "How long are supplier contracts kept after expiry?",
                 "supplier contracts", YEARS),
            Rule("| Employee records | {0} after leaving |",
                 "How long are employee records kept after an employee leaves?", "employee records", YEARS),
            Rule("| Support chat transcripts | {0} |", "How long are support chat transcripts kept?",
                 "chat transcripts", MONTHS),
            Rule("| CCTV footage | {0} |", "How long is CCTV footage kept?", "cctv", DAYS),
            Rule("| Job applications | {0} |",
                 "How long are job applications kept?", "job applications", MONTHS),
        )),
        ("Deletion", "paragraphs", "", (
            Rule("Customer deletion requests are tracked in {0}.",
                 "In which system are customer deletion requests tracked?", "deletion requests", SYSTEM,
                 via="customer deletion requests are tracked"),
            Rule("Legal holds are reviewed every {0}.",
                 "How often are legal holds reviewed?", "legal holds", MONTHS),
            Rule("Backups containing deleted records expire within {0}.",
                 "Within how long do backups containing deleted records expire?", "backups containing", DAYS),
        )),
    )),
    Topic("policies/incident-management.md", "Incident management policy", "other", (
        ("Response times", "table", "| Incident severity | First response within |", (
            Rule("| SEV-1 | {0} |",
                 "What is the first-response time for a SEV-1 incident?", "sev-1",
                 _n("{} minutes", (5, 10, 15))),
            Rule("| SEV-2 | {0} |",
                 "What is the first-response time for a SEV-2 incident?", "sev-2",
                 _n("{} minutes", (30, 45, 60, 90))),
            Rule("| SEV-3 | {0} |", "What is the first-response time for a SEV-3 incident?", "sev-3", HOURS),
        )),
        ("After an incident", "bullets", "", (
            Rule("Post-incident reviews are held within {0} of resolution.",
                 "Within how long of resolution are post-incident reviews held?", "post-incident reviews",
                 BUSINESS_DAYS),
            Rule("Incidents are declared in {0}.",
                 "In which system are incidents declared?", "incidents are declared",
                 SYSTEM, via="incidents are declared"),
            Rule("Status page updates are posted every {0} during a major incident.",
                 "How often are status page updates posted during a major incident?", "status page", MINUTES),
            Rule("Follow-up actions from a review are due within {0}.",
                 "Within how long are follow-up actions from an incident review due?",
                 "follow-up actions", DAYS),
        )),
    )),
    Topic("handbook/reviews.md", "Performance reviews", "manual", (
        ("Cycle", "bullets", "", (
            Rule("Performance reviews take place every {0}.", "How often do performance reviews take place?",
                 "reviews take place", _n("{} months", (6, 12))),
            Rule("Self-assessments are due {0} before the review meeting.",
                 "How long before the review meeting are self-assessments due?", "self-assessments", DAYS),
            Rule("Promotion cases are submitted in {0}.", "In which system are promotion cases submitted?",
                 "promotion cases", SYSTEM, via="promotion cases are submitted"),
        )),
        ("Pay", "bullets", "", (
            Rule("Salary adjustments take effect on {0}.", "On what date do salary adjustments take effect?",
                 "salary adjustments", ("1 January", "1 April", "1 July", "1 October")),
            Rule("The annual bonus pool is {0} of base salary.", "How large is the annual bonus pool?",
                 "bonus pool", PERCENT),
            Rule("Spot awards are capped at {0} per person a year.",
                 "What is the yearly cap on spot awards per person?",
                 "spot awards", EUR),
        )),
    )),
    Topic("policies/procurement.md", "Procurement policy", "other", (
        ("Buying", "bullets", "", (
            Rule("Purchases above {0} need three competing quotes.",
                 "Above what amount do purchases need three competing quotes?",
                 "competing quotes", EUR_LARGE),
            Rule("Purchase orders are raised in {0}.", "In which system are purchase orders raised?",
                 "purchase orders", SYSTEM, via="purchase orders are raised"),
            Rule("New suppliers are vetted within {0}.", "Within how long are new suppliers vetted?",
                 "new suppliers", BUSINESS_DAYS),
        )),
        ("Contracts", "bullets", "", (
            Rule("Supplier contracts must be cancelled {0} before their end date to stop renewal.",
                 "How long before the end date must a supplier contract be cancelled to stop renewal?",
                 "to stop renewal", DAYS),
            Rule("Payment terms for suppliers are {0} net.", "What are the payment terms for suppliers?",
                 "payment terms", _n("{} days", (14, 30, 45, 60))),
            Rule("Contracts above {0} need legal review.", "Above what value do contracts need legal review?",
                 "legal review", EUR_LARGE),
        )),
    )),
)


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


def _alive(only: int, version: int) -> bool:
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
            if not _alive(s.only, version):
                continue
            texts = [p.text(version) for p in s.pieces if _alive(p.only, version)]
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


@dataclass(eq=False)
class System:
    name: str
    function: str
    team: Team
    owner: Fact
    manager: Fact
    spec: Doc
    codes: list[Fact] = field(default_factory=list)  # error code -> this system, in its runbook


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
    return Team(name, doc, lead, rotation.facts[0], channel.facts[0])


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
    spec.sections.append(Section("Dependencies", "bullets", [
        Piece(f"{name} depends on {{0}} for {purpose}.",
              (spec.fact(name, purpose, f"Which system does {name} depend on for {purpose}?", value=other),))
        for purpose, other in deps], removable=True))
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
    system = System(name, function, team, owner, manager, spec)
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


def _build(seed: int, n_systems: int, changes: int) -> World:
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


def _questions(rng: random.Random, world: World, count: int, texts: dict[int, dict[str, str]],
               units: dict[int, dict[str, list[str]]]) -> list[dict]:
    where: dict[Fact, tuple[Doc, Piece]] = {}
    for d in world.docs:
        for s in d.sections:
            for p in s.pieces:
                if _alive(s.only, 2) and _alive(p.only, 2):
                    for f in p.facts:
                        where[f] = (d, p)

    single = [_record("single", f.question, [f.value], [where[f]]) for f in where if f.new is None]
    conflict = [_record("conflict", f.question, [f.new], [where[f]], stale_answers=[f.value])
                for f, (d, _) in where.items()
                if f.new is not None and f.value in texts[1][d.path] and f.value not in texts[2][d.path]]
    chains: list[list[dict]] = [[], [], [], [], []]
    for s in world.systems:
        team = s.team
        chains[0].append(_record(
            "multi",
            f"Which team owns the system that {s.function}, and what is that team's on-call rotation?",
            [team.name, team.rotation.at(2)], [where[s.owner], where[team.rotation]]))
        chains[1].append(_record(
            "multi", f"Which team owns the system that {s.function}, and who leads that team?",
            [team.name, team.lead.value], [where[s.owner], where[team.lead]]))
        chains[2].append(_record(
            "multi", f"In which channel are incidents of {s.name} escalated?",
            [team.channel.value], [where[s.owner], where[team.channel]]))
        for code in s.codes:
            chains[3].append(_record(
                "multi", f"Who leads the team that owns the system raising error code {code.subject}?",
                [team.lead.value], [where[code], where[s.owner], where[team.lead]]))
    by_name = {s.name: s for s in world.systems}
    for rule, f in world.routed:
        s = by_name[f.value]
        chains[4].append(_record("multi", f"Who is the product manager of the system in which {rule.via}?",
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

    def to_dict(self) -> dict:
        return {"out_dir": str(self.out_dir), "seed": self.seed, "documents": self.documents,
                "revised": self.revised, "units_v1": self.units_v1, "units_v2": self.units_v2,
                "questions": dict(self.questions)}


def generate(out_dir: str | Path, *, seed: int = 0, units_target: int = 5000,
             questions: int = 800) -> SynthReport:
    """Write the knowledge base, its revision and its questions under ``out_dir`` (see the module doc)."""
    if units_target < 1 or questions < 1:
        raise ValueError("units_target and questions must be positive")
    # Each conflict question needs a changed value; the margin covers changes it cannot use
    # (the old value still occurs elsewhere in the v2 document, so "stale" would be ambiguous).
    changes = math.ceil(_quota(questions)["conflict"] * 1.3) + 2
    n = max(2, round(units_target / UNITS_PER_SYSTEM))
    best = None
    # The size is searched by counting units, not by formula: the chunker is the reference.
    for _ in range(MAX_SIZE_ROUNDS):
        world = _build(seed, n, changes)
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
    records = _questions(random.Random(f"{seed}:questions"), world, questions, texts, units)

    out = Path(out_dir)
    for v in (1, 2):
        for path, text in texts[v].items():
            target = out / "docs" / f"v{v}" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    report = SynthReport(out, seed, len(world.docs), sum(d.revised is not None for d in world.docs),
                         sum(map(len, units[1].values())), total,
                         {k: sum(r["type"] == k for r in records) for k in TYPES})
    (out / "README.md").write_text(_readme(report, world, units_target), encoding="utf-8", newline="\n")
    return report


def _readme(report: SynthReport, world: World, units_target: int) -> str:
    areas: dict[str, int] = {}
    for d in world.docs:
        area = d.path.split("/")[0]
        areas[area] = areas.get(area, 0) + 1
    lines = [
        "# Synthetic enterprise knowledge base",
        "",
        f"Generated by `asmr.eval.synth.generate` with seed {report.seed}, units_target {units_target}.",
        "Format: see the docstring of `asmr/eval/synth.py`.",
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
        *(f"| {k} | {report.questions[k]} |" for k in TYPES),
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
    if r.get("type") not in TYPES:
        raise ValueError(f"{where}: 'type' {r.get('type')!r} is not one of {', '.join(TYPES)}")
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
