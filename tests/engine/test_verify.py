"""The verifier: turn allowlists, citation parsing, the four checks, keep/weaken/drop, audit, CLI."""
import hashlib
import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asmr.cli import main
from asmr.decoding.markers import DEFAULT_MARKERS, MAX_ID_CHARS, Marker
from asmr.retrieve import Hit, Result
from asmr.store import Memory, MemoryStateError, ingest
from asmr.units.model import Document
from asmr.verify import audit
from asmr.verify.allowlist import Allowlist, Conversation
from asmr.verify.citations import parse_answer, scan_markers, strip_markers
from asmr.verify.verifier import DROPPED, DROPPED_CJK, Verifier, VerifierConfig

GUIDE_V1 = """# Server guide

The server listens on port 8080 by default.

## Logs

Logs are kept for 14 days in the log directory.

The cache holds 512 entries per worker.
"""
GUIDE_V2 = GUIDE_V1.replace("port 8080", "port 9090").replace("The cache holds 512 entries per worker.\n", "")
NOTES_ZH = "# 笔记\n\n服务器默认监听9090端口。\n"


def _doc(doc_id, text):
    return Document(doc_id, text, fmt="markdown", title=doc_id, source=f"{doc_id}.md", path=f"{doc_id}.md")


class WordSupport:
    """Test double of SupportModel: the share of the claim's words found in the evidence."""

    embedder = "test"

    def __init__(self, hard=0.9, soft=0.5):
        self.hard, self.soft = hard, soft
        self.calls = 0

    def score(self, claims, evidences, *, claim_vecs=None, evidence_vecs=None, embedder=None):
        self.calls += 1
        out = []
        for c, e in zip(claims, evidences):
            words = set(re.findall(r"\w+", c.lower()))
            out.append(len(words & set(re.findall(r"\w+", e.lower()))) / max(1, len(words)))
        return np.array(out)


class CountingEmbedder:
    def __init__(self, inner):
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, 0

    def embed(self, texts, *, progress=False):
        self.calls += 1
        return self.inner.embed(texts)


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    """guide v1 then v2 (a superseded paragraph, a deprecated one), Chinese notes, a note quoting a marker."""
    d = tmp_path_factory.mktemp("verify") / "mem"
    ingest(d, [_doc("guide", GUIDE_V1)], embedder="hash-64")
    ingest(d, [_doc("guide", GUIDE_V2), _doc("notes-zh", NOTES_ZH)], embedder="hash-64")
    with Memory(d) as m:
        logs = next(u for u in m.units_of("kb", "guide") if "14 days" in u.content)
    ingest(d, [_doc("style", f"# Style\n\nAnswers cite the log rule as [cite:{logs.id}] after it.\n")])
    return d


@pytest.fixture(scope="module")
def ids(mem):
    with Memory(mem) as m:
        units = m.units_of("kb", "guide", status=None) + m.units_of("kb", "notes-zh") + m.units_of("kb", "style")

    def one(status, text):
        return next(u for u in units if u.status == status and text in u.content)
    return {"port": one("active", "9090 by default"), "old_port": one("superseded", "8080"),
            "logs": one("active", "14 days"), "cache": one("deprecated", "512"),
            "zh": one("active", "服务器"), "style": one("active", "Answers cite")}


@pytest.fixture()
def memory(mem):
    with Memory(mem) as m:
        yield m


def verifier(memory, **kw):
    from asmr.embed import get_embedder
    kw.setdefault("support", WordSupport())
    kw.setdefault("embedder", get_embedder(memory.embed_model))
    return Verifier(memory, **kw)


def allow(*units, turn=1):
    return Allowlist(turn, {u.id: 1.0 - i / 10 for i, u in enumerate(units)})


# Allowlists

def _result(ids_, found=True):
    hits = tuple(Hit(uid, i, 1.0 - i / 10, 0.5, 0.5, 0.0, 0, True, ()) for i, uid in enumerate(ids_))
    return Result("q", hits, 0.0, 0.9 if found else 0.1, found)


def test_allowlist_turns_are_scoped_and_round_trip(tmp_path, memory, ids):
    conv = Conversation()
    a1 = conv.new_turn(_result([ids["port"].id, ids["logs"].id]))
    a2 = conv.new_turn(_result([ids["logs"].id]))
    assert a1.ids == (ids["port"].id, ids["logs"].id) and a1.turn == 1 and a2.turn == 2
    assert ids["port"].id in a1 and ids["port"].id not in a2 and conv.current is a2
    assert a2.turn_id == f"{conv.id}/2"
    assert conv.new_turn(_result([ids["logs"].id], found=False)).ids == ()  # "not found" allows nothing
    path = tmp_path / "conv.json"
    conv.save(path)
    back = Conversation.load(path)
    assert back.id == conv.id and [t.to_dict() for t in back.turns] == [t.to_dict() for t in conv.turns]
    # the port unit was allowed in turn 1 only: citing it in turn 2 is not allowed
    v = verifier(memory).verify(f"The server listens on port 9090 by default [cite:{ids['port'].id}].", a2)
    assert v.audit[0]["citations"][0]["verdict"] == "not allowed" and "[cite:" not in v.text
    assert verifier(memory).verify(f"The server listens on port 9090 by default [cite:{ids['port'].id}].",
                                   a1).counts["keep"] == 1
    for bad in (lambda: Allowlist(0, {}), lambda: Allowlist(1, {"a b": 1.0}),
                lambda: Allowlist(1, {"x": float("nan")}), lambda: Allowlist.from_dict({"turn": 1}),
                lambda: Allowlist(1, {"memo://kb/a/\ud800": 1.0})):
        with pytest.raises(ValueError):
            bad()
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        Conversation.load(path)


# Parsing

def test_parse_both_markers_runs_and_placement():
    text = ("Port is 9090 [cite:memo://kb/a/1][cite:memo://kb/a/2]. Logs last 14 days.[cite:memo://kb/a/3] "
            "端口是9090【引用:memo://kb/b/1】。回滚很快。【引用:memo://kb/b/2】\n- item [cite:memo://kb/c/1]\n- other")
    p = parse_answer(text)
    got = [(s.text, [c.unit_id for c in s.citations]) for s in p.sentences]
    assert got == [("Port is 9090.", ["memo://kb/a/1", "memo://kb/a/2"]),
                   ("Logs last 14 days.", ["memo://kb/a/3"]),  # a marker after the full stop is the sentence's
                   ("端口是9090。", ["memo://kb/b/1"]), ("回滚很快。", ["memo://kb/b/2"]),
                   ("- item", ["memo://kb/c/1"]), ("- other", [])]
    assert all(text[c.start:c.end] == c.marker.spell(c.unit_id) for c in p.citations)
    assert parse_answer("[cite:memo://kb/a/1] Leading.").sentences[0].citations[0].unit_id == "memo://kb/a/1"


@pytest.mark.parametrize("text, fragment, reason", [
    ("Port is 9090 [cite:", "[cite:", "truncated"),
    ("Port is 9090 [cite:memo://kb/a", "[cite:memo://kb/a", "truncated"),
    ("Port is 9090 [ci", "[ci", "truncated"),
    ("Port is 9090 [ci \n", "[ci", "truncated"),  # the shown answer is stripped: "[ci" would end it
    ("端口是9090【引", "【引", "truncated"),
    ("Port is 9090 [cite:] ok.", "[cite:]", "empty id"),
    ("Port is 9090 [cite:  ] ok.", "[cite:  ]", "empty id"),
    ("Port is 9090 [cite: memo://kb/a/1] ok.", "[cite: memo://kb/a/1]", "blank in id"),
    ("Port is 9090 [cite:memo://kb/a/1 and more.", "[cite:memo://kb/a/1", "unclosed"),
    ("Port [cite:[cite:memo://kb/a/1] ok.", "[cite:", "unclosed"),
    ("Port is 9090 [cite:memo://kb/a/\ud800] ok.", "[cite:memo://kb/a/\ud800]", "surrogate in id"),
])
def test_parse_malformed(text, fragment, reason):
    p = parse_answer(text)
    assert [(m.text, m.reason) for m in p.malformed] == [(fragment, reason)]
    assert fragment not in strip_markers(text) and "[c" not in strip_markers(text)


def test_parse_reads_ids_as_long_as_the_decoder_may_spell():
    """The parser looks for the closer as far as the decoder's compile allows an id to run."""
    uid = "memo://kb/doc/" + "k" * (MAX_ID_CHARS - len("memo://kb/doc/"))
    for markers in (DEFAULT_MARKERS, (Marker("[[", "]]"),)):
        m = markers[0]
        p = parse_answer(f"Fact {m.spell(uid)}. More.", markers)
        assert [c.unit_id for c in p.citations] == [uid] and not p.malformed
        p = parse_answer(f"Fact {m.spell(uid + 'k')}. More.", markers)
        assert [x.reason for x in p.malformed] == ["unclosed"] and not p.citations


def test_parse_hidden_markers():
    quoted = "The guide reads “logs last 14 days [cite:memo://kb/a/1]”. Fine [cite:memo://kb/a/2]."
    p = parse_answer(quoted)
    assert [(c.unit_id, c.hidden) for c in p.citations] == [("memo://kb/a/1", "quoted"), ("memo://kb/a/2", "")]
    copied = "Answers cite the log rule as [cite:memo://kb/a/1] after it."
    p = parse_answer(copied, sources=["x", copied])
    assert [c.hidden for c in p.citations] == ["copied"] and p.sentences[0].cited == ()
    assert parse_answer(copied, sources=["unrelated"]).citations[0].hidden == ""


# The checks and the outcomes, on a real memory

def test_keep_weaken_drop_and_each_check(memory, ids):
    port, old, logs, cache = ids["port"], ids["old_port"], ids["logs"], ids["cache"]
    answer = (f"The server listens on port 9090 by default [cite:{port.id}][cite:memo://kb/guide/0123456789ab]. "
              f"Logs are kept for 14 days in the log directory [cite:memo://kb/guide/0123456789ab]. "
              f"The server listens on port 8080 by default [cite:{old.id}]. "
              f"The cache holds 512 entries per worker [cite:{cache.id}]. "
              f"The server listens on port 8080 by default [cite:{port.id}]. "
              f"Backups run every night at two in the morning [cite:{logs.id}]. "
              f"Logs are kept for 14 days in the log directory [cite:{ids['style'].id}]. "
              f"Uncited prose stays. Cut off here [cite:memo://kb/gu")
    emb = CountingEmbedder(__import__("asmr.embed", fromlist=["get_embedder"]).get_embedder("hash-64"))
    support = WordSupport()
    v = Verifier(memory, support=support, embedder=emb).verify(answer, allow(port, logs))
    assert support.calls == 1 and emb.calls == 1  # one batched call for every sentence and citation
    d = v.audit
    outcomes = [x["outcome"] for x in d]
    assert outcomes == ["keep", "weaken", "drop", "drop", "drop", "drop", "weaken", "uncited", "weaken"]
    first = d[0]["citations"]
    assert first[0]["checks"] == {"exists": True, "allowed": True, "active": True, "supports": True}
    assert first[1]["checks"] == {"exists": False, "allowed": False} and first[1]["verdict"] == "invented"
    assert d[1]["reason"] == "no valid citation: invented"
    sup = d[2]["citations"][0]
    assert (sup["verdict"], sup["status"], sup["successor"]) == ("superseded", "superseded", port.id)
    assert d[3]["citations"][0]["verdict"] == "deprecated"
    changed = d[4]["citations"][0]  # same words, another number: the key fact decides
    assert changed["verdict"] == "unsupported" and changed["missing_facts"] == ["8080"]
    assert changed["scores"]["support"] >= 0.8 and changed["checks"]["supports"] is False
    assert d[5]["citations"][0]["verdict"] == "unsupported"
    assert d[6]["citations"][0]["verdict"] == "not allowed"
    assert d[8]["malformed"][0]["reason"] == "truncated"
    assert v.text == (f"The server listens on port 9090 by default [cite:{port.id}]. Logs are kept for 14 days in "
                      f"the log directory. {DROPPED} Logs are kept for 14 days in the log directory. "
                      "Uncited prose stays. Cut off here")
    assert v.counts["keep"] == 1 and v.counts["drop"] == 4 and v.counts["valid"] == 1 and v.counts["malformed"] == 1
    assert v.flagged == [d[1]["sentence"], d[6]["sentence"], "Cut off here"]
    assert v.turn == "1" and v.config["hard"] == 0.9


def test_a_reused_verifier_sees_a_newer_commit_after_reopen(tmp_path):
    """Units read for one answer are kept for the next; a reopen on a newer commit drops them."""
    d = tmp_path / "mem"
    ingest(d, [_doc("guide", GUIDE_V1)], embedder="hash-64")
    with Memory(d) as m:
        port = next(u for u in m.units_of("kb", "guide") if "8080" in u.content)
        v = verifier(m)
        answer = f"The server listens on port 8080 by default [cite:{port.id}]."
        assert v.verify(answer, allow(port)).audit[0]["outcome"] == "keep"
        ingest(d, [_doc("guide", GUIDE_V2)], embedder="hash-64")
        assert v.verify(answer, allow(port)).audit[0]["outcome"] == "keep"  # the snapshot it opened
        m.reopen()
        cite = v.verify(answer, allow(port)).audit[0]["citations"][0]
        assert (cite["verdict"], cite["status"]) == ("superseded", "superseded")


def test_soft_zone_rewrite_and_hidden(memory, ids):
    port = ids["port"]
    soft = f"The server listens on port 9090 by default for all clients [cite:{port.id}]."
    v = verifier(memory).verify(soft, allow(port))
    assert v.audit[0]["outcome"] == "weaken" and v.audit[0]["citations"][0]["verdict"] == "uncertain"
    assert v.text == "The server listens on port 9090 by default for all clients."
    calls = []

    def rewrite(sentence, unit_text):
        calls.append((sentence, unit_text))
        return "The server listens on port 9090 by default [cite:memo://kb/x/1]."
    v = verifier(memory, rewrite=rewrite).verify(soft + f" Port 9090 [cite:{port.id}].", allow(port))
    assert calls == [("The server listens on port 9090 by default for all clients.", port.content)]
    assert v.audit[0]["outcome"] == "keep" and v.audit[0]["citations"][0]["verdict"] == "valid after rewrite"
    assert v.text.startswith(f"The server listens on port 9090 by default [cite:{port.id}]. Port 9090")
    # a rewrite that still fails leaves the sentence weakened
    v = verifier(memory, rewrite=lambda s, u: "Something else entirely.").verify(soft, allow(port))
    assert v.audit[0]["outcome"] == "weaken" and v.audit[0]["rewritten"]["verdict"] == "unsupported"
    # a valid, allowlisted marker copied out of a unit, or quoted, cites nothing; the unit it names
    # is still asked, and this one does not state the copied sentence
    style, logs = ids["style"], ids["logs"]
    copied = f"Answers cite the log rule as [cite:{logs.id}] after it."
    v = verifier(memory).verify(copied, allow(style, logs))
    assert v.audit[0]["citations"][0]["verdict"] == "copied" and v.text == DROPPED
    v = verifier(memory).verify(f"The guide says “Logs are kept for 14 days [cite:{logs.id}]”.", allow(logs))
    assert v.audit[0]["citations"][0]["verdict"] == "quoted" and "[cite:" not in v.text


def test_a_hidden_marker_still_lets_its_unit_drop_the_sentence(memory, ids):
    """A marker whose text an allowlisted unit also holds (or one in a quotation) cites nothing, but
    the unit it names is still asked: a sentence it does not support is dropped, not weakened."""
    style, logs = ids["style"], ids["logs"]
    false = f"Logs are kept for 90 days in the log directory [cite:{logs.id}]."
    v = verifier(memory).verify(false, allow(style, logs))
    entry = v.audit[0]["citations"][0]
    assert (entry["hidden"], entry["verdict"], entry["unit_verdict"], entry["kept"]) == \
        ("copied", "copied", "unsupported", False)
    assert entry["missing_facts"] == ["90 days"] and entry["checks"]["supports"] is False
    assert v.audit[0]["outcome"] == "drop" and v.text == DROPPED
    v = verifier(memory).verify(f"The guide says “Logs are kept for 90 days [cite:{logs.id}]”.", allow(logs))
    assert v.audit[0]["outcome"] == "drop" and v.audit[0]["citations"][0]["verdict"] == "quoted"
    # the unit supports the sentence: the copied marker is still removed, the sentence stays
    true = f"Logs are kept for 14 days in the log directory [cite:{logs.id}]."
    v = verifier(memory).verify(true, allow(style, logs))
    entry = v.audit[0]["citations"][0]
    assert (entry["verdict"], entry["unit_verdict"], entry["kept"]) == ("copied", "valid", False)
    assert v.audit[0]["outcome"] == "weaken" and v.text == "Logs are kept for 14 days in the log directory."


def test_cjk_answer_and_bad_input(memory, ids):
    zh = ids["zh"]
    v = verifier(memory).verify(f"服务器默认监听9090端口【引用:{zh.id}】。服务器默认监听8080端口【引用:{zh.id}】。",
                                allow(zh))
    assert [d["outcome"] for d in v.audit] == ["keep", "drop"]
    assert v.text == f"服务器默认监听9090端口【引用:{zh.id}】。{DROPPED_CJK}"
    with pytest.raises(ValueError, match="answer"):
        verifier(memory).verify(b"bytes", allow(zh))
    v = verifier(memory).verify("Port 9090 [cite:memo://kb/a/\ud800].", allow(zh))  # no lookup of it
    assert v.audit[0]["malformed"][0]["reason"] == "surrogate in id" and v.text == "Port 9090."
    with pytest.raises(ValueError, match="allowlist"):
        verifier(memory).verify("x", {zh.id: 1.0})
    with pytest.raises(ValueError, match="soft"):
        VerifierConfig(hard=0.5, soft=0.6)
    with pytest.raises(ValueError, match="fact_kinds"):
        VerifierConfig(hard=0.5, soft=0.2, fact_kinds=("colour",))
    claim, unit = "Ada Lovelace ran version 2.1 in 1843.", "Charles Babbage ran version 2.1 in 1843."
    assert VerifierConfig(hard=0.5, soft=0.2).missing(claim, unit) == []  # names: the model's call
    assert VerifierConfig(hard=0.5, soft=0.2, fact_kinds=("entity", "date")).missing(claim, unit) == ["Ada Lovelace"]
    with pytest.raises(ValueError, match="embedder"):
        from asmr.embed import get_embedder
        Verifier(memory, support=WordSupport(), embedder=get_embedder("hash-32"))


def test_real_support_model(memory, ids):
    """The shipped SupportModel (it embeds with its own model: this memory's vectors are hash vectors)."""
    from asmr.verify.support_model import SupportModel
    port = ids["port"]
    v = verifier(memory, support=SupportModel.load()).verify(
        f"The server listens on port 9090 by default [cite:{port.id}]. "
        f"The server listens on port 8080 by default [cite:{port.id}].", allow(port))
    assert [d["outcome"] for d in v.audit] == ["keep", "drop"]
    assert v.audit[0]["citations"][0]["scores"]["support"] >= v.config["hard"]


def test_cutting_a_marker_cannot_splice_another(memory, ids):
    port = ids["port"]
    answer = f"Port 9090 [ci[cite:memo://kb/guide/0123456789ab]te:{port.id}] ok."
    v = verifier(memory).verify(answer, allow(port))
    assert v.audit[0]["citations"][0]["verdict"] == "invented" and "[cite:" not in v.text


PIECES = ["The server listens on port 9090 by default", "Logs are kept for 14 days", " ", ". ", "。", "\n",
          "\n- ", "“", "”", '"', "[", "]", "【", "】", "[ci", "te:", "[cite:", "【引用:", "memo://kb/guide/",
          "0123456789ab", "x y"]


@given(st.lists(st.sampled_from(PIECES + ["ID_PORT", "ID_OLD", "ID_LOGS"]), max_size=30))
def test_no_malformed_or_unchecked_marker_is_ever_shown(mem, ids, pieces):
    """Whatever the text, the verified answer shows nothing malformed and only markers the audit kept."""
    names = {"ID_PORT": ids["port"].id, "ID_OLD": ids["old_port"].id, "ID_LOGS": ids["logs"].id}
    answer = "".join(names.get(p, p) for p in pieces)
    with Memory(mem) as m:
        v = verifier(m).verify(answer, allow(ids["port"], ids["logs"]))
    cites, bad = scan_markers(v.text)
    kept = sorted(e["id"] for d in v.audit for e in d["citations"] if e["kept"])
    assert not bad and sorted(c.unit_id for c in cites) == kept
    assert not any(v.text.endswith(o[:n]) for o in ("[cite:", "【引用:") for n in range(1, 7))


# Audit

def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_audit_round_trip_and_cli(mem, memory, ids, capsys):
    db = mem / "memory.sqlite"
    before = _sha(db)
    port = ids["port"]
    conv = Conversation("c1")
    a1 = conv.new_turn(_result([port.id]))
    v1 = verifier(memory).verify(f"The server listens on port 9090 by default [cite:{port.id}].", a1)
    a2 = conv.new_turn(_result([port.id]))
    v2 = verifier(memory).verify("Port is 9090 [cite:memo://kb/guide/0123456789ab].", a2)
    path = audit.append(mem, v1, answer="a1", question="Which port?")
    assert audit.append(mem, v2, answer="a2") == path and path.parent == mem / "audit"
    with open(path, "a") as f:
        f.write('{"cut short')  # a crash mid-line: readers skip it
    assert _sha(db) == before  # the audit never touches the store
    recs = audit.load(mem)
    assert [r["turn"] for r in recs] == ["c1/1", "c1/2"] and recs[0]["audit"] == v1.audit
    assert audit.load(mem, last=1)[0]["answer"] == "a2" and len(audit.load(mem, turn="c1")) == 2
    assert [r["answer"] for r in audit.load(mem, turn="c1/1")] == ["a1"]
    with pytest.raises(MemoryStateError):
        audit.append(mem / "audit", v1)

    assert main(["audit", "--memory", str(mem)]) == 0
    out = capsys.readouterr().out
    assert "turn c1/2" in out and "invented" in out and "exists=NO" in out and "[KEEP   ]" in out
    assert main(["audit", "--memory", str(mem), "--turn", "c1/2", "--json"]) == 0
    assert [r["turn"] for r in json.loads(capsys.readouterr().out)] == ["c1/2"]
    assert main(["audit", "--memory", str(mem), "--turn", "nope"]) == 3
    assert main(["audit", "--memory", str(mem), "--last", "0"]) == 2


def test_eval_verifier_cli(tmp_path, capsys):
    rows = [{"claim": "Milira sings the song 'Go Outside in the Rain'.", "references": [
        "\"Go Outside in the Rain\" is a R&B song by Milira released in 1990."], "attribution_label": "attributable"},
            {"claim": "The song was released in 1995.", "references": [
                "\"Go Outside in the Rain\" is a R&B song by Milira released in 1990."],
             "attribution_label": "not attributable"}]
    bench = tmp_path / "bench.jsonl"
    bench.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    code = main(["eval", "verifier", "--embedder", "hash-64", "--turns", "4", "--attribution", str(bench), "--json"])
    report = json.loads(capsys.readouterr().out)
    s = report["structural"]
    assert code == 0 and s["caught"] == s["injected"] >= 20
    assert all(k["injected"] > 0 for k in s["kinds"].values())
    assert s["baseline"]["valid"] > 0
    a = report["attribution"]
    assert a["n"] == 2 and 0.0 <= a["accuracy"] <= 1.0 and 0.0 <= a["macro_f1"] <= 1.0
    c = report["contradictions"]
    assert c["n"] == sum(k["n"] for k in c["by_kind"].values()) > 0 and 0 <= c["kept"] <= c["n"]
    assert c["supported_n"] > 0 and 0 <= c["supported_kept"] <= c["supported_n"]
    assert {"negation", "number", "entity"} <= set(c["by_kind"]) and c["fitted_on"]
    assert main(["eval", "verifier", "--attribution", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["eval", "verifier", "--memory", str(tmp_path / "nothing"), "--attribution", str(bench)]) == 4


# ---- generated claims (asmr.eval.contradictions) --------------------------------------------------

RETENTION_UNITS = [
    ("u1", "Logs are kept for 14 days in the central log store. The API server listens on port 9090."),
    ("u2", "Backups run daily at 02:00 UTC and are kept for 30 days. Release 2.3 added per-key rate limits."),
    ("u3", "The client retries a failed request at most 3 times before it gives up."),
    ("u4", "值班工程师在十五分钟内响应告警。数据库每天凌晨两点做全量备份，备份保留30天。"),
    ("u5", "All services are deployed to the Frankfurt region in 2021 by the platform team."),
]


def test_generated_claims_are_seeded_labelled_and_change_the_sentence():
    from asmr.eval.contradictions import LABELS, generate

    claims = generate(RETENTION_UNITS, seed=3, per_kind=None)
    assert [c.to_dict() for c in claims] == [c.to_dict() for c in generate(RETENTION_UNITS, seed=3, per_kind=None)]
    assert all(c.label == LABELS[c.kind] for c in claims)
    by_kind = {}
    for c in claims:
        by_kind.setdefault(c.kind, []).append(c)
    evidence = dict(RETENTION_UNITS)
    for c in claims:
        assert c.evidence == evidence[c.unit]
        if c.kind == "copy":
            assert c.text in c.evidence
        else:
            assert c.text not in c.evidence  # every other kind says something the unit does not say verbatim
    assert {"copy", "negation", "number", "unrelated"} <= set(by_kind)
    assert {c.lang for c in claims} == {"en", "zh"}
    for c in by_kind["negation"]:
        assert ("not" in c.text.split()) != ("not" in dict(RETENTION_UNITS)[c.unit].split()) or c.lang == "zh"
    # per_kind caps every kind
    capped = generate(RETENTION_UNITS, seed=3, per_kind=1)
    assert max(sum(c.kind == k for c in capped) for k in LABELS) == 1


def test_generated_contradictions_of_a_retention_rule():
    """The rules applied to one sentence make the claims the issue lists, and keep supported ones true."""
    import random

    from asmr.eval import contradictions as gen

    s = "Logs are kept for 14 days in the central log store."
    rng = random.Random(0)
    assert gen._en_negation(s, rng) == "Logs are not kept for 14 days in the central log store."
    assert gen._en_negation("Logs are not kept.", rng) == "Logs are kept."
    assert gen._en_number(s, rng) != s and "14" not in gen._en_number(s, rng)
    assert gen._en_unit(s, rng) == "Logs are kept for 14 weeks in the central log store."
    duration = gen._en_duration(s, rng)
    assert "14 days" not in duration and duration.startswith("Logs are kept ")
    assert gen._en_number_words(s, rng) == "Logs are kept for fourteen days in the central log store."
    assert gen._en_subset(s, rng) == "Logs are kept for 14 days."
    assert gen._en_frequency("Backups run daily at 02:00 UTC.", rng) != "Backups run daily at 02:00 UTC."
    assert gen._en_frequency("A bi-weekly report.", rng) is None  # not a frequency of its own
    assert gen._en_date("The team moved in 2021.", rng) != "The team moved in 2021."
    assert gen._zh_negation("数据库是主库。", rng) == "数据库不是主库。"
    # a synonym is put for a word in lower case only: "Big" in a name stays ("Big Sur" is no "Large Sur")
    assert gen._en_synonym("Big Sur is a big region.", rng) == "Big Sur is a large region."
    assert gen._en_synonym("They met in Big Sur.", rng) is None
    # 不过 ("but") negates nothing: the negation goes on the verb, not by cutting 不 out of 不过
    assert gen._zh_negation("数据库不过是主库。", rng) == "数据库不过不是主库。"
    assert gen._zh_negation("服务器不再监听端口。", rng) == "服务器再监听端口。"
    assert gen._zh_unit("2002年9月，他离开。", rng) is None  # a year, not a count of years
    assert gen._en_hedged("The logs are kept.", rng).endswith(", the logs are kept.")
    assert gen._en_hedged("Milira sings it.", rng).endswith(", Milira sings it.")  # a name keeps its capital


def test_learning_reads_the_verifiers_own_records(tmp_path):
    """The audit records the verifier writes feed `asmr graph learn`: kept citations count, a
    citation of a unit that does not exist does not, and each record is read once."""
    from asmr.graph import learn
    from asmr.store import UsageLog

    d = tmp_path / "mem"
    ingest(d, [_doc("ports", "The server listens on port 9090 by default.\n\nLogs are kept for 14 days.\n")],
           embedder="hash-64")
    with Memory(d) as m:
        port, logs = m.units_of("kb", "ports")
        for i in range(2):
            allow = Conversation().new_turn(_result([port.id, logs.id]))
            v = verifier(m).verify(f"The server listens on port 9090 by default [cite:{port.id}]. Logs are kept "
                                   f"for 14 days [cite:{logs.id}]. Ports are 1 [cite:memo://kb/x/0123456789ab].",
                                   allow)
            audit.append(d, v, question=f"question {i}")
        with UsageLog(d, create=True) as log:
            records, offsets = audit.read_new(d, log.offsets())
            report = learn(m, log, records, offsets)
            assert report["records"] == 2 and report["pairs"] == 2 and report["units"] == 4
            assert audit.read_new(d, log.offsets())[0] == []
            assert log.pairs_of(port.id, 0.0, 86400.0)[logs.id][0] == 2.0


def test_warming_up_the_verifier_loads_the_support_models_embedder_only_where_the_memory_lacks_it(
        tmp_path, monkeypatch):
    """Where the memory's embedder is the support model's, a verification hands it over, and so does the
    warm-up: no second copy of the model is loaded. Over another embedder the support model loads its own;
    a multilingual memory hands its embedder to the support model's part for text MiniLM cannot read."""
    import asmr.embed.models as models
    from asmr.store import Memory
    from asmr.store.writer import ingest
    from asmr.units.model import Document
    from asmr.verify import support_model
    from asmr.verify.support_model import SupportModel
    from asmr.verify.verifier import Verifier

    loaded, get = [], models.get_embedder
    monkeypatch.setattr(models, "get_embedder", lambda name: loaded.append(name) or get(name))
    docs = [Document("logs", "Logs are kept for 14 days in the central log store.", "text")]
    minilm = "all-MiniLM-L6-v2"
    for name, embedder, loads in (("minilm", minilm, []), ("hash", "hash-64", [minilm]),
                                  ("e5", "multilingual-e5-small", [minilm])):
        ingest(tmp_path / name, docs, embedder=embedder, progress=False)
        with Memory(tmp_path / name) as m:
            support_model._embedder_named.cache_clear()
            loaded.clear()
            Verifier(m, support=SupportModel.load()).warm_up()
            assert loaded == loads, name
