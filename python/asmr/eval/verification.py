"""Evaluating the verifier: faults injected into real answers, and the support check as a classifier.

Structural. Each turn of a conversation recalls units for a question made from
one active unit's first sentence; the clean answer is that sentence citing
that unit (a real answer: the sentence comes from the memory and the id from
the turn's allowlist). One fault at a time is then added to the clean answer,
and the verification of each faulty answer is inspected:

- ``invented``: a well-formed id that no unit has;
- ``deprecated`` / ``superseded``: a sentence of such a unit citing it (the
  successor must be named);
- ``earlier_turn``: a sentence of a unit that the previous turn allowed and this
  one did not recall, citing it;
- ``truncated``: the answer cut inside a marker (``[ci``, ``[cite:``,
  ``[cite:memo://…`` half an id, ``【引用:…``);
- ``malformed``: an empty id, a blank inside the id, an unclosed marker
  followed by more text;
- ``hidden``: a valid, allowlisted marker inside a quotation, and (where the
  memory holds a unit whose text contains a marker) that unit's text copied
  into the answer.

A fault is caught when the audit gives the marker the verdict its fault calls
for (or records the malformed fragment) and the marker text is not in the
verified answer. The clean answers are verified too (``baseline``): a verifier
that removed every marker would catch every fault, and would show here.

Attribution. The shipped support model (never refitted here) decides each
(claim, references) pair of an AttributionBench file with the verifier's own
rule: probability at least ``hard`` and none of the claim's checked key facts
(``VerifierConfig.fact_kinds``) missing. ``model_only`` is the probability
alone. The shipped model was fitted on the dev split: on it these are
in-sample figures; its cross-validated ones are in its ``support_model.json``.

Contradictions. Claims generated from the memory's own units (``eval.contradictions``: the
unit's sentence and paraphrases, perturbations that make it false, claims it does not
mention), each cited against its unit and decided by the same rule; the report counts how
many of each kind are kept and names the data the support model was fitted on.
"""
from __future__ import annotations

import random
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Sequence

import numpy as np

from ..decoding.markers import CITE, CITE_ZH, DEFAULT_MARKERS
from ..text.cjk import CJK_CHAR
from ..store.memory import Unit
from ..text.sentences import sentence_ends
from ..verify.allowlist import Conversation
from .contradictions import Claim, generate as generate_claims, units_of_memory
from .jsonl import records
from ..verify.citations import scan_markers
from ..verify.claims import core_claim
from ..verify.support_model import SupportModel
from ..verify.verifier import Verifier, VerifierConfig

FAULTS = ("invented", "deprecated", "superseded", "earlier_turn", "truncated", "malformed", "hidden")
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
_CJK_MARKS = "。！？"
_SENTENCE_KINDS = ("paragraph", "sentence", "list_item")


def first_sentence(text: str) -> str:
    """The first sentence of a unit's text, on one line."""
    ends = sentence_ends(text)
    return " ".join(text[:ends[0] if ends else len(text)].split())


def cite(sentence: str, uid: str) -> str:
    """``sentence`` citing ``uid`` before its final punctuation, with the marker of its script."""
    cjk = CJK_CHAR.search(sentence) is not None
    marker = (CITE_ZH if cjk else CITE).spell(uid)
    body = sentence.rstrip(".!?" + _CJK_MARKS)
    return f"{body}{'' if cjk else ' '}{marker}{sentence[len(body):] or ('。' if cjk else '.')}"


def build_example_memory(directory: str | Path, embedder: str) -> Path:
    """examples/handbook, then its revision examples/handbook-v2 (superseding and deprecating units),
    then a style note quoting a citation of a handbook unit (a unit whose text holds a marker)."""
    from ..store import Memory, Writer
    from ..units.model import Document
    from ..units.read import read_path

    for name in ("handbook", "handbook-v2"):
        if not (EXAMPLES / name).is_dir():
            raise ValueError(f"examples/{name}: not found next to the package ({EXAMPLES}); pass --memory")
    directory = Path(directory)
    for name in ("handbook", "handbook-v2"):
        root = EXAMPLES / name
        with Writer(directory, embedder=embedder, progress=False) as w:
            docs = [read_path(p, root=root) for p in sorted(root.rglob("*")) if p.suffix in (".md", ".html")]
            w.ingest(docs, kb="handbook")
    with Memory(directory, load_indexes=False) as m:
        port = next(u for u in m.units_of("handbook", "ops.deploy") if "listens on port" in u.content)
    note = (f"# Citation style\n\nAn answer about the API port cites the deployment guide as "
            f"{CITE.spell(port.id)} right after the sentence.\n")
    with Writer(directory, progress=False) as w:
        w.ingest([Document("style", note, fmt="markdown", title="Citation style", source="style.md",
                           path="style.md")], kb="handbook")
    return directory


def _has_marker(text: str) -> bool:
    return any(m.opener in text for m in DEFAULT_MARKERS)


def _usable(sentence: str) -> bool:
    """Long enough to be a claim: four words, or eight characters of CJK text."""
    return len(sentence.split()) >= 4 or (len(sentence) >= 8 and CJK_CHAR.search(sentence) is not None)


def _sentence_units(units: list[Unit]) -> list[Unit]:
    return [u for u in units if u.kind in _SENTENCE_KINDS and not _has_marker(u.content)
            and _usable(first_sentence(u.content))]


class _Tally:
    def __init__(self):
        self.kinds = {k: {"injected": 0, "caught": 0} for k in FAULTS}
        self.missed: list[dict] = []

    def add(self, kind: str, caught: bool, answer: str, verification) -> None:
        self.kinds[kind]["injected"] += 1
        self.kinds[kind]["caught"] += int(caught)
        if not caught:
            self.missed.append({"kind": kind, "answer": answer, "text": verification.text,
                                "audit": verification.audit})


def _clean(v) -> bool:
    """Nothing malformed in the verified text, and no marker there but those the audit kept."""
    cites, bad = scan_markers(v.text)
    kept = Counter(e["id"] for d in v.audit for e in d["citations"] if e["kept"])
    return not bad and Counter(c.unit_id for c in cites) == kept


def _cited_caught(v, uid: str, verdict: str, successor: str | None = None) -> bool:
    """The audit gives ``uid`` the fault's verdict (and successor) and the marker is not shown."""
    return _clean(v) and any(e["id"] == uid and e["verdict"] == verdict and not e["kept"]
                             and (successor is None or e["successor"] == successor)
                             for d in v.audit for e in d["citations"])


def _malformed_caught(v, fragment: str) -> bool:
    return _clean(v) and any(m["text"] == fragment for d in v.audit for m in d["malformed"])


def structural(memory, verifier: Verifier, retriever, *, turns: int = 8, seed: int = 0) -> dict:
    """Inject faults into real answers over ``memory``; counts per fault kind, and the clean baseline."""
    rng = random.Random(seed)
    tally = _Tally()
    baseline = {"answers": 0, "citations": 0, "valid": 0}
    candidates = _sentence_units(memory.units_with_status("active"))
    if not candidates:
        raise ValueError(f"memory {memory.directory}: no active unit with a sentence to build answers from")
    step = max(1, len(candidates) // turns)
    anchors = candidates[::step][:turns]
    deprecated = memory.units_with_status("deprecated")
    superseded = memory.units_with_status("superseded")
    copied = [u for u in memory.units_with_status("active") if _has_marker(u.content)]
    conversation = Conversation()
    previous = None
    for i, anchor in enumerate(anchors):
        claim = first_sentence(anchor.content)
        allow = conversation.new_turn(retriever.search(claim))
        if anchor.id not in allow:  # recall did not bring the unit back: no real answer to build on
            previous = allow
            continue
        base = cite(claim, anchor.id)
        v = verifier.verify(base, allow)
        baseline["answers"] += 1
        baseline["citations"] += v.counts["citations"]
        baseline["valid"] += v.counts["valid"]

        def inject(kind: str, extra: str, check) -> None:
            answer = f"{base} {extra}"
            out = verifier.verify(answer, allow)
            tally.add(kind, check(out), answer, out)

        fake = f"memo://{anchor.kb}/{anchor.doc_id}/{rng.getrandbits(48):012x}"
        if memory.unit(fake) is None:
            inject("invented", cite(claim, fake), lambda o, f=fake: _cited_caught(o, f, "invented"))
        stale = [(k, pool[i % len(pool)])
                 for k, pool in (("deprecated", deprecated), ("superseded", superseded)) if pool]
        if previous is not None:
            stale += [("earlier_turn", memory.unit(uid)) for uid in previous.ids if uid not in allow][:1]
        for kind, u in stale:
            verdict = "not allowed" if kind == "earlier_turn" else kind
            succ = u.superseded_by if kind == "superseded" else None
            inject(kind, cite(first_sentence(u.content) or "It is so.", u.id),
                   lambda o, u=u, verdict=verdict, succ=succ: _cited_caught(o, u.id, verdict, succ))
        body = claim.rstrip("." + _CJK_MARKS)
        cuts = (CITE.opener[:3], CITE.opener, CITE.opener + anchor.id[:len(anchor.id) // 2],
                CITE_ZH.opener + anchor.id)
        fragment = cuts[i % len(cuts)]
        inject("truncated", f"{body} {fragment}", lambda o, f=fragment: _malformed_caught(o, f))
        bad = (CITE.opener + CITE.closer, f"{CITE.opener} {anchor.id}{CITE.closer}",
               f"{CITE_ZH.opener}{anchor.id}")[i % 3]
        inject("malformed", f"{body} {bad} and more.", lambda o, f=bad: _malformed_caught(o, f))
        # A valid, allowlisted marker, but inside a quotation: source text, not a citation.
        inject("hidden", f"The source reads “{body} {CITE.spell(anchor.id)}”.",
               lambda o: _cited_caught(o, anchor.id, "quoted"))
        previous = allow
    for u in copied:  # the model copies a unit whose own text holds a marker
        allow = conversation.new_turn(retriever.search(first_sentence(u.content)))
        if u.id not in allow:
            continue
        answer = " ".join(u.content.split())
        out = verifier.verify(answer, allow)
        for c in scan_markers(answer)[0]:
            tally.add("hidden", _cited_caught(out, c.unit_id, "copied"), answer, out)
    injected = sum(k["injected"] for k in tally.kinds.values())
    caught = sum(k["caught"] for k in tally.kinds.values())
    return {"injected": injected, "caught": caught, "kinds": tally.kinds, "baseline": baseline,
            "turns": len(conversation.turns), "missed": tally.missed}


def load_attribution(path: str | Path) -> tuple[list[str], list[str], np.ndarray]:
    """Claims, references (joined) and labels (True: attributable) of an AttributionBench JSONL file."""
    claims, evidences, labels = [], [], []
    for where, r in records(path):
        try:
            refs = r["references"]
            label = r["attribution_label"]
            if not isinstance(refs, list) or label not in ("attributable", "not attributable"):
                raise ValueError("references must be a list, attribution_label "
                                 "'attributable' or 'not attributable'")
            claims.append(str(r["claim"]))
            evidences.append("\n\n".join(str(x) for x in refs))
            labels.append(label == "attributable")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: not an AttributionBench record ({exc})") from None
    if not claims:
        raise ValueError(f"{path}: no records")
    return claims, evidences, np.array(labels, bool)


def _metrics(pred: np.ndarray, gold: np.ndarray) -> dict:
    f1s = []
    for cls in (True, False):
        tp = int(np.sum((pred == cls) & (gold == cls)))
        fp = int(np.sum((pred == cls) & (gold != cls)))
        fn = int(np.sum((pred != cls) & (gold == cls)))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return {"accuracy": round(float(np.mean(pred == gold)), 4), "macro_f1": round(float(np.mean(f1s)), 4)}


def attribution(path: str | Path, support: SupportModel, config: VerifierConfig) -> dict:
    """The verifier's support rule as a classifier over an AttributionBench file."""
    claims, evidences, gold = load_attribution(path)
    cores = [core_claim(c) for c in claims]
    prob = support.score(cores, evidences)
    facts_ok = np.array([not config.missing(c, e) for c, e in zip(cores, evidences)])
    pred = (prob >= config.hard) & facts_ok
    return {"n": len(claims), **_metrics(pred, gold), "file": str(path), "threshold": config.hard,
            "fact_kinds": list(config.fact_kinds), "model_only": _metrics(prob >= config.hard, gold)}


def contradictions(claims: Sequence[Claim], support: SupportModel, config: VerifierConfig, *,
                   embedder=None) -> dict:
    """How many generated claims the verifier's support rule keeps, by label and kind.

    ``n``/``kept``: contradicted claims (the fewer kept the better); ``supported_*``: claims the
    unit does support (the more kept the better); ``unsupported``: claims it does not mention.
    """
    prob = support.score([core_claim(c.text) for c in claims], [c.evidence for c in claims], embedder=embedder)
    return tally_claims(claims, kept_by_rule(claims, prob, config))


def kept_by_rule(claims: Sequence[Claim], prob, config: VerifierConfig) -> list[bool]:
    """The verifier's rule on each claim: support probability at least ``hard`` and none of the core
    claim's checked key facts missing from the unit."""
    return [bool(p >= config.hard) and not config.missing(core_claim(c.text), c.evidence)
            for p, c in zip(prob, claims)]


def tally_claims(claims: Sequence[Claim], kept: Sequence[bool]) -> dict:
    """Claims kept, by label and kind, in the form of :func:`contradictions`."""
    tallies: dict[str, dict[str, dict[str, int]]] = {"contradicted": {}, "supported": {}, "unsupported": {}}
    for c, k in zip(claims, kept):
        t = tallies[c.label].setdefault(c.kind, {"n": 0, "kept": 0})
        t["n"] += 1
        t["kept"] += k

    def total(label: str, field: str) -> int:
        return sum(t[field] for t in tallies[label].values())

    return {"n": total("contradicted", "n"), "kept": total("contradicted", "kept"), "by_kind": tallies["contradicted"],
            "supported_n": total("supported", "n"), "supported_kept": total("supported", "kept"),
            "supported_by_kind": tallies["supported"],
            "unsupported": {"n": total("unsupported", "n"), "kept": total("unsupported", "kept"),
                            "by_kind": tallies["unsupported"]}}


def evaluate(memory_dir: str | Path | None, attribution_path: str | Path | None, *,
             embedder: str, turns: int = 8, claims_per_kind: int = 200) -> dict:
    """The full report; with no ``memory_dir``, a temporary memory built from the examples."""
    from ..embed import get_embedder
    from ..retrieve import Retriever
    from ..store import Memory

    support = SupportModel.load()
    config = VerifierConfig.from_support(support)
    with ExitStack() as stack:
        if memory_dir is None:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="asmr-eval-verifier-")))
            memory_dir = build_example_memory(tmp / "memory", embedder)
        m = stack.enter_context(Memory(memory_dir))
        if m.generation == 0:
            raise ValueError(f"memory {m.directory}: empty; run asmr ingest first")
        emb = get_embedder(m.embed_model)
        verifier = Verifier(m, support=support, embedder=emb, config=config)
        report = {"structural": structural(m, verifier, Retriever(m, emb), turns=turns)}
        claims = generate_claims(units_of_memory(m), seed=0, per_kind=claims_per_kind)
        report["contradictions"] = {**contradictions(claims, support, config), "units": str(memory_dir),
                                    "fitted_on": support.meta.get("fitted_on", "attributionbench dev")}
        report["params"] = {"memory": str(memory_dir), "embedder": m.embed_model, "config": config.to_dict()}
    if attribution_path is None:
        report["attribution"] = {"n": 0, "accuracy": None, "macro_f1": None, "skipped": "no attribution file"}
    else:
        report["attribution"] = attribution(attribution_path, support, config)
    return report
