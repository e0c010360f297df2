"""Fit the verifier's support classifier on AttributionBench dev and write its weights.

    python bench/calibrate_support.py [--data ../shared/data/attributionbench_dev.jsonl]
                                      [--out python/asmr/verify/support_model.json] [--json]

Each row is a (claim, evidence) pair: the claim, its references joined, and the label
``attributable`` / ``not attributable``. The script computes asmr.verify.support's
features for every pair (MiniLM runs offline; sentence vectors are cached in
``--cache`` between runs, outside the repository), then reports, never in-sample:

- 5-fold cross-validated accuracy and macro-F1: folds keep rows of one question
  together and balance source dataset and label; the L2 strength is chosen by an
  inner cross-validation on the training folds, the decision threshold on the
  training folds' own out-of-fold predictions;
- leave-one-source-dataset-out macro-F1: fit on three sources, test on the fourth;
- the same numbers for two baselines (max sentence cosine alone; cosine + key-fact
  share + lexical recall) so the gain of the full feature set is visible.

The shipped model is then fitted on all rows. Its thresholds come from the 5-fold
out-of-fold probabilities: ``hard`` maximises macro-F1, ``soft`` is the highest
threshold at which 95 % of supported claims are still kept or rewritten (capped at
``hard``). The data file is read, never copied.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from asmr.eval.fit import sign_bounds, signed_logistic
from asmr.verify.claims import core_claim
from asmr.verify.support import FEATURES, FLIP_FEATURES, GATE_FEATURES, pair_features
from asmr.verify.support_model import SupportModel, standardised
from asmr.verify.verifier import VerifierConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "attributionbench_dev.jsonl"
DEFAULT_OUT = ROOT / "python" / "asmr" / "verify" / "support_model.json"
BASELINES = {
    "cosine": ("cos_max",),
    "cosine+facts+lexical": ("cos_max", "facts_share", "recall"),
}
L2_GRID = (0.1, 1.0, 10.0, 100.0)
# Cues that can only speak against support, and cues that can only speak for it: each weight is held
# to that sign (0 where the fit would cross it), so a missing number or a negated claim never raises a
# score and more of the claim found in the evidence never lowers one. Fitted free, the overlap cues
# took weights of both signs, traded against each other on a small dev set (cosine -0.11 beside
# the document's cosine +0.34); held to their signs, 5-fold macro-F1 and the leave-one-source-out
# mean both rose (bench/README.md). The rest (lengths, the number of key facts, hedges) are free.
NONPOSITIVE = ("missing_number", "missing_date", "missing_entity", "missing_code", "neg_mismatch",
               "negation_conflicts", "antonym", "novel_log", "aligned_neg_mismatch", "aligned_replaced",
               "aligned_replaced_names", "aligned_added", "quantifier_change")
NONNEGATIVE = ("cos_max", "cos_top2", "cos_doc", "cos_best_lex", "recall", "recall_soft", "recall_best_sent",
               "recall_best_pair", "recall_cos_sent", "bigram_recall", "trigram_recall", "facts_share",
               "clause_min_cos", "clause_min_recall")


def signs_of(features) -> np.ndarray:
    """The sign each of ``features``' weights must take: -1, +1, or 0 (free)."""
    return np.array([-1 if f in NONPOSITIVE else 1 if f in NONNEGATIVE else 0 for f in features])
SOFT_RECALL = 0.95
FLIP_L2 = 1.0
# The claim sources the contradiction weights are fitted on by default. The swap cue fires on few claims of
# the first two (their swaps are mostly names, flip_names' cue): fitted on them alone, its weight followed
# which few claims the generator happened to write (3.49 in the shipped fit, 2.21 on the same generator's
# claims a week later, and five to ten times the handbooks' swaps kept). The design family's pages swap
# "the X" nouns, so the cue has claims of both labels to be fitted on; family B and the handbooks stay out
# of the fit (bench/README.md, "A fit the documented command rebuilds").
FIT_CLAIMS = ("hotpotqa", "cmrc", "synth-a")


# ---- data and features ------------------------------------------------------------------------

def load_rows(path: Path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            label = r.get("attribution_label")
            if label not in ("attributable", "not attributable"):
                raise ValueError(f"{path}:{n}: attribution_label {label!r} is neither 'attributable' nor "
                                 "'not attributable'")
            rows.append(r)
    return rows


class CachedEmbedder:
    """An embedder whose vectors are kept on disk by text hash, so reruns embed nothing."""

    def __init__(self, inner, path: Path):
        self.inner, self.path = inner, path
        self.name, self.dim = inner.name, inner.dim
        self.scripts = getattr(inner, "scripts", None)  # what it reads (None: every script)
        self.rows: dict[bytes, np.ndarray] = {}
        if path.exists():
            z = np.load(path)
            self.rows = dict(zip((bytes(k) for k in z["keys"]), z["vecs"]))
        self.dirty = False

    @staticmethod
    def _key(text: str) -> bytes:
        return hashlib.blake2b(text.encode(), digest_size=16).digest()

    def embed(self, texts, *, progress: bool = False) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self.rows]
        if todo:
            vecs = self.inner.embed([texts[i] for i in todo], progress=progress)
            for i, v in zip(todo, vecs):
                self.rows[keys[i]] = v
            self.dirty = True
        return np.stack([self.rows[k] for k in keys]) if keys else np.zeros((0, self.dim), np.float32)

    def save(self) -> None:
        if self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            keys = np.array([np.frombuffer(k, np.uint8) for k in self.rows])
            np.savez(self.path, keys=keys, vecs=np.stack(list(self.rows.values())))


# ---- generated claims (bench/support_claims.py) -------------------------------------------------

def load_claim_sets(folder: Path) -> dict:
    from asmr.eval.contradictions import Claim
    sets = {}
    for path in sorted(folder.glob("*.jsonl")):
        sets[path.stem] = [Claim(**json.loads(line)) for line in path.open(encoding="utf-8") if line.strip()]
    if not sets:
        raise SystemExit(f"calibrate_support: {folder}: no claim files (run bench/support_claims.py --out {folder})")
    return sets


def claim_features(claims, emb) -> np.ndarray:
    return pair_features([core_claim(c.text) for c in claims], [c.evidence for c in claims], embedder=emb)


def sample_per_kind(claims, per_kind: int, rng) -> list[int]:
    by_kind: dict[str, list[int]] = {}
    for i, c in enumerate(claims):
        by_kind.setdefault(c.kind, []).append(i)
    take = []
    for kind in sorted(by_kind):
        idx = by_kind[kind]
        take += sorted(rng.choice(idx, size=min(per_kind, len(idx)), replace=False).tolist())
    return take


def claims_kept(claims, prob: np.ndarray, model: SupportModel) -> dict:
    """The verifier's rule on generated claims, tallied as asmr.eval.verification.contradictions does."""
    from asmr.eval.verification import kept_by_rule, tally_claims
    return tally_claims(claims, kept_by_rule(claims, prob, VerifierConfig.from_support(model)))


def unread_part_kept(path: Path, hard: float) -> SupportModel | None:
    """The ``unread`` part of the model at ``path`` (bench/calibrate_unread_support.py), if any, its bias
    moved from that model's ``hard`` onto ``hard``: it decides every pair as before."""
    try:
        old = SupportModel.load(path)
    except ValueError:
        return None
    if old.unread is None:
        return None
    old.unread.bias += float(np.log(hard / (1 - hard)) - np.log(old.hard / (1 - old.hard)))
    return old.unread


# ---- logistic regression, folds, metrics --------------------------------------------------------

def standardize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, signs: np.ndarray | None = None,
                 offset: np.ndarray | None = None,
                 weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """L2-penalised logistic regression on standardised features (the bias unpenalised), each weight of
    the sign ``signs`` gives its column (-1 at most 0, +1 at least 0, 0 free; default all free). With
    ``offset`` (a fixed log-odds per row) the model is ``offset + x @ w`` with no bias: the weights of
    a correction added to another model's log-odds. ``weight``: each row's weight in the loss (default 1)."""
    biased = offset is None
    a = np.hstack([np.ones((len(x), 1)), x]) if biased else x
    reg = np.full(a.shape[1], l2)
    if biased:
        reg[0] = 0.0
    signs = np.zeros(x.shape[1]) if signs is None else signs
    w = signed_logistic(a, y, reg, sign_bounds(([0] if biased else []) + list(signs)), weight=weight,
                        offset=offset)
    return (w[1:], float(w[0])) if biased else (w, 0.0)


def predict(x, mean, scale, w, b):
    return 1 / (1 + np.exp(-np.clip(((x - mean) / scale) @ w + b, -40, 40)))


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    f = []
    for c in (0, 1):
        tp = np.sum((pred == c) & (y == c))
        fp = np.sum((pred == c) & (y != c))
        fn = np.sum((pred != c) & (y == c))
        f.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(f))


def best_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The threshold maximising macro-F1 (midpoint between neighbouring scores)."""
    s = np.unique(p)
    cands = np.concatenate([[0.0], (s[:-1] + s[1:]) / 2, [1.0]]) if len(s) > 1 else np.array([0.5])
    scores = [macro_f1(y, (p >= t).astype(int)) for t in cands]
    return float(cands[int(np.argmax(scores))])


def recall_threshold(y: np.ndarray, p: np.ndarray, recall: float) -> float:
    """The highest threshold at which at least ``recall`` of the positives score at or above it."""
    pos = np.sort(p[y == 1])
    k = int(np.floor((1 - recall) * len(pos)))
    return float(pos[k]) if len(pos) else 0.0


def group_folds(groups: list[str], strata: list[str], k: int, seed: int) -> np.ndarray:
    """A fold per row: rows of one group share a fold; folds balance the strata (greedy)."""
    rng = np.random.default_rng(seed)
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    order = list(members)
    rng.shuffle(order)
    order.sort(key=lambda g: -len(members[g]))  # big groups first, ties in random order
    counts: dict[tuple[int, str], int] = {}
    size = np.zeros(k)
    fold = np.empty(len(groups), np.int64)
    for g in order:
        need: dict[str, int] = {}
        for i in members[g]:
            need[strata[i]] = need.get(strata[i], 0) + 1
        cost = [sum(counts.get((f, s), 0) * c for s, c in need.items()) + 1e-3 * size[f] for f in range(k)]
        f = int(np.argmin(cost))
        for s, c in need.items():
            counts[(f, s)] = counts.get((f, s), 0) + c
        size[f] += len(members[g])
        fold[members[g]] = f
    return fold


def fit_select(x: np.ndarray, y: np.ndarray, groups: list[str], strata: list[str], seed: int,
               signs: np.ndarray):
    """Fit with the L2 strength chosen by inner 4-fold CV (log-loss); returns params and threshold."""
    inner = group_folds(groups, strata, 4, seed + 1)
    best = None
    for l2 in L2_GRID:
        oof = np.empty(len(y))
        for f in range(4):
            tr, te = inner != f, inner == f
            mean, scale = standardize(x[tr])
            w, b = fit_logistic((x[tr] - mean) / scale, y[tr], l2, signs)
            oof[te] = predict(x[te], mean, scale, w, b)
        loss = -np.mean(y * np.log(oof + 1e-12) + (1 - y) * np.log(1 - oof + 1e-12))
        if best is None or loss < best[0]:
            best = (loss, l2, oof)
    _, l2, oof = best
    mean, scale = standardize(x)
    w, b = fit_logistic((x - mean) / scale, y, l2, signs)
    return mean, scale, w, b, l2, best_threshold(y, oof), oof


def evaluate(x, y, groups, strata, sources, seed: int, signs: np.ndarray) -> dict:
    folds = group_folds(groups, strata, 5, seed)
    oof = np.empty(len(y))
    pred = np.empty(len(y), np.int64)
    for f in range(5):
        tr, te = folds != f, folds == f
        g_tr = [g for g, t in zip(groups, tr) if t]
        s_tr = [s for s, t in zip(strata, tr) if t]
        mean, scale, w, b, _, thr, _ = fit_select(x[tr], y[tr], g_tr, s_tr, seed, signs)
        oof[te] = predict(x[te], mean, scale, w, b)
        pred[te] = oof[te] >= thr
    out = {"cv5": {"accuracy": float(np.mean(pred == y)), "macro_f1": macro_f1(y, pred)}, "_pred": pred}
    per_source = {}
    for src in sorted(set(sources)):
        m = np.array([s == src for s in sources])
        per_source[src] = {"n": int(m.sum()), "macro_f1": macro_f1(y[m], pred[m])}
    out["cv5"]["by_source"] = per_source
    lodo = {}
    for src in sorted(set(sources)):
        te = np.array([s == src for s in sources])
        tr = ~te
        g_tr = [g for g, t in zip(groups, tr) if t]
        s_tr = [s for s, t in zip(strata, tr) if t]
        mean, scale, w, b, _, thr, _ = fit_select(x[tr], y[tr], g_tr, s_tr, seed, signs)
        p = predict(x[te], mean, scale, w, b)
        lodo[src] = {"n": int(te.sum()), "accuracy": float(np.mean((p >= thr) == y[te])),
                     "macro_f1": macro_f1(y[te], (p >= thr).astype(int))}
    out["leave_one_source_out"] = lodo
    out["leave_one_source_out_mean_macro_f1"] = float(np.mean([v["macro_f1"] for v in lodo.values()]))
    return out, oof, folds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where the fitted model goes")
    ap.add_argument("--no-write", action="store_true", help="report only; leave the shipped model alone")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "asmr" / "support_vectors.npz",
                    help="sentence-vector cache (outside the repository)")
    ap.add_argument("--embedder", default="all-MiniLM-L6-v2")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--claims", type=Path, default=None, metavar="DIR",
                    help="generated claims (bench/support_claims.py --out DIR): fit on --fit-claims sources beside "
                         "AttributionBench dev, report every other source out of sample")
    ap.add_argument("--fit-claims", nargs="*", default=list(FIT_CLAIMS), metavar="SOURCE",
                    help=f"claim sources the contradiction weights are fitted on (default: "
                         f"{' '.join(FIT_CLAIMS)}: the sources in ../shared/data and the generated "
                         "knowledge base's design family, whose swapped nouns give the swap cue claims to be "
                         "fitted on); none: no contradiction part")
    ap.add_argument("--claims-per-kind", type=int, default=60,
                    help="claims of each kind and source drawn for the fit (default 60)")
    ap.add_argument("--flip-l2", type=float, default=FLIP_L2,
                    help=f"L2 strength of the contradiction weights' fit (default {FLIP_L2}; larger: smaller weights)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.data.exists():
        print(f"calibrate_support: {args.data} not found (AttributionBench dev lives in ../shared/data)",
              file=sys.stderr)
        return 2
    rows = load_rows(args.data)
    claims = [r["claim"] for r in rows]
    evidences = ["\n\n".join(r["references"]) for r in rows]
    y = np.array([r["attribution_label"] == "attributable" for r in rows], float)
    sources = [r.get("src_dataset", "?") for r in rows]
    groups = [r.get("question") or r.get("id") or str(i) for i, r in enumerate(rows)]
    strata = [f"{s}|{int(t)}" for s, t in zip(sources, y)]

    from asmr.embed.models import get_embedder
    emb = CachedEmbedder(get_embedder(args.embedder), args.cache)
    t0 = time.perf_counter()
    x = pair_features(claims, evidences, embedder=emb)
    t_feat = time.perf_counter() - t0
    emb.save()

    claim_sets = load_claim_sets(args.claims) if args.claims else {}
    unknown = [c for c in args.fit_claims if claim_sets and c not in claim_sets]
    if unknown:
        print(f"calibrate_support: --fit-claims {' '.join(unknown)}: no such file in {args.claims}", file=sys.stderr)
        return 2
    claim_x = {src: claim_features(cs, emb) for src, cs in claim_sets.items()}
    emb.save()
    fit_sources = [c for c in args.fit_claims if c in claim_sets]

    # The support part: a logistic regression on AttributionBench dev over every feature but the flips.
    base = tuple(f for f in FEATURES if f not in FLIP_FEATURES + GATE_FEATURES)
    report: dict = {"n": len(rows), "fit_claims": fit_sources, "features_seconds": round(t_feat, 1), "models": {}}
    for name, feats in {**BASELINES, "full": base}.items():
        cols = [FEATURES.index(f) for f in feats]
        res, oof, _ = evaluate(x[:, cols], y, groups, strata, sources, args.seed, signs_of(feats))
        res.pop("_pred")
        report["models"][name] = res
        if name == "full":
            full_oof = oof
    cols = [FEATURES.index(f) for f in base]
    hard0 = best_threshold(y, full_oof)  # the support part's own threshold
    mean, scale, w, b, l2, _, _ = fit_select(x[:, cols], y, groups, strata, args.seed,
                                             signs_of(base))

    # The contradiction part: weights of the flip cues, fitted on generated claims of the fit sources only
    # (supported against contradicted and unsupported), subtracted from the support part's log-odds.
    contradiction = None
    if fit_sources:
        rng = np.random.default_rng(args.seed)
        fcols = [FEATURES.index(f) for f in FLIP_FEATURES]
        xs, ys, zs = [], [], []
        facts_drop = VerifierConfig(hard=0.5, soft=0.5).missing  # only its fact kinds are read
        for src in fit_sources:
            # the claims the key-fact check keeps: the flips decide only those
            take = [i for i in sample_per_kind(claim_sets[src], args.claims_per_kind, rng)
                    if not facts_drop(core_claim(claim_sets[src][i].text), claim_sets[src][i].evidence)]
            xs.append(claim_x[src][take][:, fcols])
            ys.append([claim_sets[src][i].label == "supported" for i in take])
            # the support part's log-odds, less its threshold: the flips correct the rule as it decides
            zs.append(standardised(claim_x[src][take], base, mean, scale) @ w + b - np.log(hard0 / (1 - hard0)))
        wf, _ = fit_logistic(np.vstack(xs), np.concatenate(ys).astype(float), args.flip_l2,
                             -np.ones(len(fcols)), offset=np.concatenate(zs))
        contradiction = {"features": list(FLIP_FEATURES), "weights": (-wf).tolist()}
        report["n_claims_fitted"] = int(sum(len(v) for v in ys))
        full_oof = 1 / (1 + np.exp(-(np.log(full_oof / (1 - full_oof)) - x[:, fcols] @ -wf)))
        report["models"]["full+flips"] = {"cv5": {"accuracy": float(np.mean((full_oof >= best_threshold(y, full_oof))
                                                                             == y)),
                                                  "macro_f1": macro_f1(y, (full_oof >= best_threshold(y, full_oof))
                                                                       .astype(int))}}
    hard = best_threshold(y, full_oof)
    soft = min(recall_threshold(y, full_oof, SOFT_RECALL), hard)
    full = report["models"]["full"]
    fitted_on = "AttributionBench dev" + (f" + generated claims of {', '.join(fit_sources)}" if fit_sources else "")
    meta = {
        "trained_on": f"AttributionBench dev ({len(rows)} pairs), by bench/calibrate_support.py"
                      + (f"; contradiction weights on {report['n_claims_fitted']} generated claims of "
                         f"{', '.join(fit_sources)} (asmr.eval.contradictions)" if fit_sources else ""),
        "fitted_on": fitted_on,
        "l2": l2,
        "thresholds": {"rule": "hard: the threshold maximising macro-F1 of the 5-fold out-of-fold probabilities; "
                               f"soft: the highest threshold keeping {SOFT_RECALL:.0%} of supported claims at or "
                               "above it (out-of-fold), capped at hard"},
        "cv": {"accuracy": round(full["cv5"]["accuracy"], 4), "macro_f1": round(full["cv5"]["macro_f1"], 4),
               "leave_one_source_out_macro_f1": {k: round(v["macro_f1"], 4)
                                                 for k, v in full["leave_one_source_out"].items()}},
    }
    if contradiction:
        meta["cv"]["macro_f1_with_contradiction"] = round(report["models"]["full+flips"]["cv5"]["macro_f1"], 4)
    model = SupportModel(features=base, mean=mean, scale=scale, weights=w, bias=b, hard=hard, soft=soft,
                         embedder=args.embedder, contradiction=contradiction, meta=meta)
    report["claims"] = {src: {"in_sample": src in fit_sources,
                              **claims_kept(claim_sets[src], model.predict(claim_x[src]), model)}
                        for src in claim_sets}
    report["thresholds"] = {"hard": hard, "soft": soft}
    report["weights"] = {f: round(float(v), 3) for f, v in zip(base, w)}
    if contradiction:
        report["contradiction_weights"] = {f: round(v, 3) for f, v in zip(FLIP_FEATURES, contradiction["weights"])}
    if not args.no_write:
        model.unread = unread_part_kept(args.out, hard)
        model.save(args.out)
        report["written"] = str(args.out)

    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"AttributionBench dev: {len(rows)} pairs, features in {t_feat:.1f} s")
    print(f"{'model':<24}{'cv5 acc':>9}{'cv5 F1':>9}  leave-one-source-out macro-F1")
    for name, res in report["models"].items():
        lodo = "  ".join(f"{k}={v['macro_f1']:.3f}" for k, v in res.get("leave_one_source_out", {}).items())
        mean_lodo = res.get("leave_one_source_out_mean_macro_f1")
        print(f"{name:<24}{res['cv5']['accuracy']:>9.3f}{res['cv5']['macro_f1']:>9.3f}  {lodo}  "
              + (f"mean={mean_lodo:.3f}" if mean_lodo is not None else "(the flips' weights fixed from the claims)"))
    print("cv5 macro-F1 by source (full): " + "  ".join(
        f"{k}={v['macro_f1']:.3f}" for k, v in full["cv5"]["by_source"].items()))
    print(f"thresholds: hard={hard:.3f} soft={soft:.3f}  (l2={l2})")
    for src, r in report.get("claims", {}).items():
        print(f"claims of {src} ({'in sample' if r['in_sample'] else 'out of sample'}): contradicted kept "
              f"{r['kept']}/{r['n']}, supported kept {r['supported_kept']}/{r['supported_n']}, unsupported kept "
              f"{r['unsupported']['kept']}/{r['unsupported']['n']}")
        print("   " + "  ".join(f"{k}={t['kept']}/{t['n']}" for k, t in
                               {**r["by_kind"], **r["unsupported"]["by_kind"], **r["supported_by_kind"]}.items()))
    print("weights: " + ", ".join(f"{f}={v:+.2f}" for f, v in report["weights"].items()))
    if contradiction:
        print("contradiction weights (subtracted from the log-odds): " + ", ".join(
            f"{f}={v:.2f}" for f, v in report["contradiction_weights"].items()))
    if not args.no_write:
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
