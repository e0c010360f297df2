"""SmolLM2-135M asked to cite labelled sources: without and with the citation-closure processor.

Each prompt holds three short synthetic sources, each with a unit id such as
``memo://kb/handbook/3f2a9c0d1e4b``, and a question one of them answers; its
allowlist is those three ids. Two prompt styles:

- ``labels``: sources written ``[ID] text``, the model told to cite as ``[cite:ID]``;
- ``tags``: sources written ``text [cite:ID]``, the model told to end with the tag it used.

Greedy decoding, ``--max-new-tokens`` new tokens; with the processor, an answer
may end only after a citation closes (``require_citation``). Per style and
decoding, it counts the answers that hold any marker (complete or not), hold
at least one valid citation (a closed marker naming an allowlisted id), cite
the source that answers the question, and the ids written that are not
allowlisted ("invented"), and the answers left with an open or malformed marker.

    python bench/citations_smollm2.py            # table
    python bench/citations_smollm2.py --json     # {"rows": [{"style", "constrained", "answers", ...}]}

Deterministic: the sources come from a seeded generator and decoding is greedy.
"""
from __future__ import annotations

import argparse
import json
import random
import time

import torch
from transformers import LogitsProcessorList

from asmr.decoding.hf import CitationLogitsProcessor, citation_grammar_for
from asmr.decoding.markers import DEFAULT_MARKERS, marker_pattern
from asmr.generate.local import load_smollm2

# (document, fact, question): {n}, {place} are filled at random.
TEMPLATES = [
    ("handbook", "The {place} opens at {n} am on weekdays.", "When does the {place} open on weekdays?"),
    ("policy", "Employees may work from home {n} days a week.",
     "How many days a week may employees work from home?"),
    ("faq", "Expense reports are due on day {n} of the following month.", "When are expense reports due?"),
    ("it", "Passwords must be changed every {n} days.", "How often must passwords be changed?"),
    ("travel", "Hotel costs are refunded up to {n}0 euros a night.",
     "How much hotel cost is refunded a night?"),
    ("security", "Visitors sign in at the {place} desk on floor {n}.", "Where do visitors sign in?"),
    ("benefits", "New staff get {n} days of paid leave a year.",
     "How many days of paid leave do new staff get?"),
    ("facilities", "The {place} is on floor {n} of building B.", "Which floor is the {place} on?"),
]
PLACES = ["library", "cafeteria", "reception", "gym", "mail room", "print shop"]
SYSTEM = {
    "labels": "Answer from the sources. Cite the source you use as [cite:ID], with its ID exactly as "
              "written.",
    "tags": "Answer in one sentence from the sources and end it with the [cite:...] tag of the source "
            "you used.",
}
PATTERN = marker_pattern()


def make_cases(n: int, seed: int) -> list[dict]:
    """n prompts' data: three sources with fresh ids, the question and the id that answers it."""
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        sources = []
        for doc, fact, question in rng.sample(TEMPLATES, 3):
            values = {"n": rng.randint(2, 9), "place": rng.choice(PLACES)}
            uid = f"memo://kb/{doc}/{rng.getrandbits(48):012x}"
            sources.append((uid, fact.format(**values), question.format(**values)))
        answer_id, _, question = sources[0]
        rng.shuffle(sources)
        cases.append({"sources": [(uid, text) for uid, text, _ in sources], "question": question,
                      "answer_id": answer_id})
    return cases


def prompt(tokenizer, case: dict, style: str) -> str:
    lines = [f"[{uid}] {text}" if style == "labels" else f"{text} [cite:{uid}]"
             for uid, text in case["sources"]]
    user = "Sources:\n" + "\n".join(lines) + f"\n\nQuestion: {case['question']}"
    messages = [{"role": "system", "content": SYSTEM[style]}, {"role": "user", "content": user}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def generate(model, tokenizer, grammar, cases: list[dict], style: str, constrained: bool, batch: int,
             max_new_tokens: int) -> list[str]:
    answers = []
    for at in range(0, len(cases), batch):
        chunk = cases[at:at + batch]
        inputs = tokenizer([prompt(tokenizer, c, style) for c in chunk], return_tensors="pt", padding=True,
                           padding_side="left")
        processors = LogitsProcessorList()
        if constrained:
            allowlists = [[uid for uid, _ in c["sources"]] for c in chunk]
            processors.append(CitationLogitsProcessor(grammar, allowlists, require_citation=True))
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                 logits_processor=processors, pad_token_id=tokenizer.eos_token_id)
        width = inputs["input_ids"].shape[1]
        answers += [tokenizer.decode(row[width:], skip_special_tokens=True) for row in out]
    return answers


def score(cases: list[dict], answers: list[str]) -> dict:
    counts = {"answers": len(answers), "with_marker": 0, "with_valid_citation": 0, "right_source": 0,
              "invented_ids": 0, "open_or_malformed": 0}
    for case, text in zip(cases, answers):
        allowed = {uid for uid, _ in case["sources"]}
        cited = [next(v for v in m.groupdict().values() if v) for m in PATTERN.finditer(text)]
        rest = PATTERN.sub("\x00", text)
        counts["with_marker"] += bool(cited) or any(m.opener in text for m in DEFAULT_MARKERS)
        counts["with_valid_citation"] += any(c in allowed for c in cited)
        counts["right_source"] += case["answer_id"] in cited
        counts["invented_ids"] += sum(c not in allowed for c in cited)
        counts["open_or_malformed"] += any(m.opener in rest for m in DEFAULT_MARKERS)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40, help="prompts")
    ap.add_argument("--style", choices=["labels", "tags", "both"], default="both")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--batch", type=int, default=8, help="prompts per generate call")
    ap.add_argument("--seed", type=int, default=0)
    # On shared cores, torch's OpenMP threads spin waiting for each other; one thread is
    # several times faster there. The counts do not depend on it.
    ap.add_argument("--threads", type=int, default=1, help="torch threads (0: torch's default)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    if args.threads:
        torch.set_num_threads(args.threads)
    model, tokenizer = load_smollm2()
    grammar = citation_grammar_for(tokenizer, size=model.config.vocab_size)
    cases = make_cases(args.n, args.seed)
    rows = []
    for style in (["labels", "tags"] if args.style == "both" else [args.style]):
        for constrained in (False, True):
            t0 = time.perf_counter()
            answers = generate(model, tokenizer, grammar, cases, style, constrained, args.batch,
                               args.max_new_tokens)
            rows.append({"style": style, "constrained": constrained, **score(cases, answers),
                         "seconds": round(time.perf_counter() - t0, 1)})

    if args.json:
        print(json.dumps({"rows": rows, "max_new_tokens": args.max_new_tokens, "seed": args.seed}, indent=2))
        return
    print(f"SmolLM2-135M-Instruct, {args.n} prompts, greedy, {args.max_new_tokens} new tokens, "
          f"seed {args.seed}")
    head = ["style", "decoding", "answers", "any marker", "valid citation", "right source", "invented ids",
            "open/malformed", "seconds"]
    print("  ".join(f"{h:>14}" for h in head))
    for r in rows:
        cells = [r["style"], "processor" if r["constrained"] else "free", r["answers"], r["with_marker"],
                 r["with_valid_citation"], r["right_source"], r["invented_ids"], r["open_or_malformed"],
                 r["seconds"]]
        print("  ".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
