"""The main job on embedded defaults: build a memory from a small handbook, revise it, look inside.

    python examples/demo.py [--memory DIR] [--embedder NAME]

Ingests examples/handbook (Markdown, HTML, Chinese notes) with the default
embedder, then the revised handbook in examples/handbook-v2, and shows what the
store keeps: unit addresses and spans, superseded and deprecated units with
their successors, a document's version history, recall with paths and a
"not found", BM25 search, answers with verified citations (a changed fact, a
question over two documents, one with no answer), and the integrity check. Everything it prints comes from the store it just wrote.
"""
from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from asmr.embed import DEFAULT_EMBEDDER
from asmr.store import Memory, Writer, check_memory
from asmr.units.read import read_path

HERE = Path(__file__).resolve().parent


def read_tree(root: Path):
    return [read_path(p, root=root) for p in sorted(root.rglob("*")) if p.suffix in (".md", ".html")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", type=Path, default=None, help="memory directory (default: a temporary one)")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="embedding model (default: %(default)s)")
    args = ap.parse_args()
    memory = args.memory or Path(tempfile.mkdtemp(prefix="asmr-demo-"))
    shutil.rmtree(memory, ignore_errors=True)

    for label, tree in (("handbook", HERE / "handbook"), ("revised handbook", HERE / "handbook-v2")):
        with Writer(memory, embedder=args.embedder) as w:
            r = w.ingest(read_tree(tree), kb="handbook")
        c = r.counts()
        print(f"ingest {label}: {c['new']} new, {c['revised']} revised, {c['unchanged']} unchanged documents; "
              f"{r.embedded} texts embedded, {r.active_units} active units ({r.seconds:.2f} s)")
        for d in r.documents:
            if d.status == "revised":
                print(f"  {d.doc_id} v{d.version}: {d.kept} kept, {d.added} added, {d.superseded} superseded, "
                      f"{d.deprecated} deprecated")

    with Memory(memory) as m:
        print("\nunits of ops.deploy, all lifetimes:")
        text_v1 = m.document_text("handbook", "ops.deploy", version=1)
        for u in m.units_of("handbook", "ops.deploy", status=None):
            line = u.content.replace("\n", " / ")
            print(f"  [{u.status:10}] {u.kind:9} {u.id}  {line[:60]!r}")
            if u.status == "superseded":
                succ = m.unit(u.superseded_by)
                print(f"               -> {succ.id}  {succ.content.replace(chr(10), ' / ')[:60]!r}")
        old = next(u for u in m.units_of("handbook", "ops.deploy", status="superseded"))
        span = text_v1[old.offset_start:old.offset_end]
        print(f"\nspan check: superseded {old.kind} {old.id} is v1 text[{old.offset_start}:{old.offset_end}]: "
              f"{span == old.content or (old.kind == 'table_row' and old.content.endswith(chr(10) + span))}")
        print("\nhistory of ops.deploy:")
        for v in m.history("handbook", "ops.deploy"):
            print(f"  v{v.version} effective {v.effective_date}: {v.units_total} units "
                  f"({v.units_added} added, {v.units_superseded} superseding, {v.units_deprecated} deprecated)")

        from asmr.embed import get_embedder
        from asmr.retrieve import Retriever

        retriever = Retriever(m, get_embedder(m.embed_model))
        for question in ("Which port does the API server use?", "How long are logs kept?",
                         "Who is the chief executive of the company?"):
            result = retriever.search(question, k=3)
            verdict = (f"confidence {result.confidence:.2f}" if result.found
                       else f"NOT FOUND ({result.reason}); closest candidates:")
            print(f"\nrecall {question!r}: {verdict}")
            for h in result.hits:
                u = m.unit(h.unit_id)
                print(f"  {h.score:.3f}  {h.unit_id}  {u.content.replace(chr(10), ' / ')[:60]!r}")
                if h.hop:
                    print("         path: " + " -> ".join(p.node for p in h.path))
                if h.previous_version:
                    print(f"         replaces {h.previous_version} (superseded)")
        rows, scores = m.search_lexical("备份 保留", 2)
        print("\nBM25 search '备份 保留':")
        for u, s in zip(m.units_at_rows(rows), scores):
            print(f"  {s:.3f}  {u.id}  {u.content[:40]!r}")

    # Answers with verified citations. The extractive generator (no model) keeps the demo
    # within a minute or two; `asmr ask --generator local` runs SmolLM2 with the citation processor.
    from asmr.answer import Answerer
    from asmr.embed import get_embedder
    from asmr.generate import get_generator

    with Memory(memory) as m:
        embedder = get_embedder(m.embed_model)
        answerer = Answerer(m, get_generator("extractive", embedder=embedder), embedder=embedder)
        for kind, question in (("conflict: the port changed in release 2.4", "Which port does the API server use?"),
                               ("two documents: the changelog and the FAQ",
                                "Release 2.3 moved the logs somewhere: how long are they kept there?"),
                               ("no answer in memory", "Who is the chief executive of the company?")):
            ans = answerer.ask(question)
            print(f"\nask ({kind}): {question}")
            if not ans.found:
                print(f"  not found ({ans.retrieval.reason})")
                continue
            print(f"  {ans.numbered()}")
            for c in ans.citations:
                print(f"  [{c.number}] {c.unit_id}  ({c.doc_id}{' > ' + c.section if c.section else ''})")
            counts = ans.verification.counts
            print(f"  verifier: {counts['keep']} kept, {counts['weaken']} weakened, {counts['drop']} dropped")

    report = check_memory(memory)
    print(f"\nasmr check: {'ok' if report.ok else report.problems}  {report.counts}")
    print(f"memory directory: {memory}  (try: asmr units show <id> --memory {memory})")


if __name__ == "__main__":
    main()
