"""The vocabulary of the generated knowledge base (``asmr.eval.synth``): value lists, the parts
invented names are made of, what specifications, runbooks and team pages may state, and the
policy, handbook and FAQ topics as ``Rule``s grouped in ``Topic``s (``TOPICS``)."""
from __future__ import annotations

from typing import NamedTuple


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

