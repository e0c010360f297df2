"""Straightforward NumPy references for the kernels. Used only by tests."""

import numpy as np


def diffuse_ref(indptr, indices, weights, x, *, steps, decay, restart, personalization=None,
                edge_threshold=0.0, node_threshold=0.0):
    n = len(indptr) - 1
    src = np.repeat(np.arange(n), np.diff(indptr))
    dst = np.asarray(indices, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    # the kernels take the threshold as a float32: a weight of float32(0.9) passes a threshold of 0.9
    keep = np.asarray(weights, dtype=np.float32) >= np.float32(edge_threshold)
    src, dst, w = src[keep], dst[keep], w[keep]
    x = np.asarray(x, dtype=np.float64)
    vec = x.ndim == 1
    X = x.reshape(n, -1)
    P = X if personalization is None else np.asarray(personalization, np.float64).reshape(n, -1)
    for _ in range(steps):
        Y = np.zeros_like(X)
        np.add.at(Y, dst, w[:, None] * X[src])
        Y = decay * Y + restart * P
        Y[Y < node_threshold] = 0.0
        X = Y
    return X.reshape(x.shape) if vec else X


def spread_ref(indptr, indices, weights, seeds, scores, *, depth, decay, restart,
               edge_threshold=0.0, node_threshold=0.0):
    """One query, in float32, in the kernel's order: returns a dict
    node -> (activation, hop, strength, predecessor) and the node order."""
    f32 = np.float32
    decay, restart = f32(decay), f32(restart)
    slot = {}  # node -> insertion order, as the kernel's slots
    seed, cur, hop, strength, pred, cand = {}, {}, {}, {}, {}, {}
    order = []

    def touch(v):
        if v not in slot:
            slot[v] = len(slot)
            seed[v] = f32(0)
            cur[v] = f32(0)
            hop[v] = -1
            strength[v] = f32(0)
            pred[v] = -1
            cand[v] = (f32(-1), -1)

    for v, s in zip(seeds, scores):
        v = int(v)
        touch(v)
        if hop[v] < 0:
            hop[v] = 0
            order.append(v)
        seed[v] = f32(seed[v] + f32(s))
    seed_nodes = list(order)
    for v in seed_nodes:
        cur[v] = seed[v]
        strength[v] = seed[v]
    active = [v for v in seed_nodes if cur[v] > 0]
    for step in range(1, depth + 1):
        nxt = {v: f32(0) for v in slot}
        for v in seed_nodes:
            nxt[v] = f32(restart * seed[v])
        for u in active:
            xu, su = cur[u], strength[u]
            for e in range(indptr[u], indptr[u + 1]):
                w = f32(weights[e])
                if not (w >= f32(edge_threshold)) or w == 0:  # compared in float32, as the kernel does
                    continue
                v = int(indices[e])
                touch(v)
                nxt.setdefault(v, f32(0))
                nxt[v] = f32(nxt[v] + f32(w * f32(decay * xu)))
                if hop[v] < 0:
                    c = f32(su * w)
                    cs, cp = cand[v]
                    if c > cs or (c == cs and u < cp):
                        cand[v] = (c, u)
        active = []
        for v in sorted(slot, key=slot.get):
            val = nxt[v]
            if val < node_threshold:
                val = f32(0)
            cur[v] = val
            if val > 0:
                active.append(v)
                if hop[v] < 0:
                    hop[v] = step
                    strength[v], pred[v] = cand[v]
                    order.append(v)
        if not active:
            break
    return {v: (cur[v], hop[v], strength[v], pred[v]) for v in order}, order


def pair_cosine_ref(claims, units, ci, ui, prenormalized=False):
    a = np.asarray(claims, dtype=np.float64)[np.asarray(ci, dtype=np.int64)]
    b = np.asarray(units, dtype=np.float64)[np.asarray(ui, dtype=np.int64)]
    dot = np.einsum("ij,ij->i", a, b)
    if prenormalized:
        return dot
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(den > 0, dot / np.where(den > 0, den, 1), 0.0)


def citation_prefix_ok(text: bytes, markers, ids) -> bool:
    """Is ``text`` a prefix of the citation language? markers: [(opener, closer)] as bytes; ids: bytes.

    Free text until the earliest point where an opener is complete; then the
    text must spell (a prefix of) one id followed by that marker's closer, and
    after the closer it is free again. An opener with nothing allowed after
    it (empty allowlist) is a dead end.
    """
    i = 0
    while True:
        best = None
        for opener, closer in markers:
            j = text.find(opener, i)
            if j >= 0 and (best is None or j + len(opener) < best[0]):
                best = (j + len(opener), closer)
        if best is None:
            return True
        end, closer = best
        rest = text[end:]
        spelled = [uid + closer for uid in ids]
        done = [s for s in spelled if rest.startswith(s)]
        if done:
            i = end + len(done[0])
            continue
        return any(s.startswith(rest) for s in spelled)


def citation_mask_ref(text: bytes, token_bytes, kinds, markers, ids, *, eos_blocked: bool) -> np.ndarray:
    """Boolean mask of the tokens allowed after ``text`` (kinds: 0 text, 1 special, 2 eos, 3 never)."""
    in_marker = not citation_prefix_ok(text + b"\x00", markers, ids)  # a NUL byte is never part of an id
    out = np.zeros(len(kinds), dtype=bool)
    for t, (b, k) in enumerate(zip(token_bytes, kinds)):
        if k == 0:
            out[t] = bool(b) and citation_prefix_ok(text + b, markers, ids)
        elif k == 1:
            out[t] = not in_marker
        elif k == 2:
            out[t] = not in_marker and not eos_blocked
    return out
