"""Reading inputs: formats, streaming UTF-8, front matter, HTML, JSONL, and clear errors."""
import itertools
import json
from pathlib import Path

import pytest

from asmr.units.model import InputError
from asmr.units.html_text import html_to_text
from asmr.units.read import BLOCK_BYTES, chunk_document, iter_jsonl, read_path, with_resolved_time

HOTPOTQA = Path("/work/shared/data/hotpotqa_train.corpus.jsonl")


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def assert_exact(doc):
    chunked = chunk_document(doc)
    for c in chunked.chunks:
        span = doc.text[c.offset_start:c.offset_end]
        assert span == (c.content.split("\n", 1)[1] if c.kind == "table_row" else c.content)
    return chunked.chunks


# -- files and formats ----------------------------------------------------------------------

def test_markdown_file_ids_paths_and_title_from_h1(tmp_path):
    path = write(tmp_path / "kb" / "guides" / "set up.md", "Intro.\n\n# Setup Guide #\n\nBody.\n")
    doc = read_path(path, root=tmp_path / "kb")
    assert doc.doc_id == "guides.set_up" and doc.path == "guides/set up.md"
    assert doc.fmt == "markdown" and doc.title == "Setup Guide" and doc.doc_type == "other"
    assert doc.source == str(path) and doc.raw is None
    assert read_path(path).doc_id == "set_up"  # without a root: the file name


def test_title_falls_back_to_setext_h1_then_stem_and_ignores_code(tmp_path):
    fenced = write(tmp_path / "a.md", "```\n# not the title\n```\n\nReal Title\n==========\n\ntext\n")
    assert read_path(fenced).title == "Real Title"
    plain = write(tmp_path / "notes-2024.txt", "# not parsed in text\n")
    assert read_path(plain).title == "notes-2024" and read_path(plain).fmt == "text"


def test_format_from_extension_and_override(tmp_path):
    for name, fmt in [("a.markdown", "markdown"), ("b.text", "text"), ("c.rst", "text"),
                      ("README", "text"), ("d.htm", "html"), ("e.HTML", "html")]:
        assert read_path(write(tmp_path / name, "<p>x</p>\n")).fmt == fmt
    assert read_path(tmp_path / "b.text", fmt="markdown").fmt == "markdown"
    odd = write(tmp_path / "data.csv", "a,b\n")
    with pytest.raises(InputError, match=r"^.*data\.csv: unknown file type '\.csv'"):
        read_path(odd)
    assert read_path(odd, fmt="text").fmt == "text"
    with pytest.raises(InputError, match="format 'pdf'"):
        read_path(odd, fmt="pdf")


def test_path_outside_root_is_refused(tmp_path):
    path = write(tmp_path / "x.md", "x\n")
    with pytest.raises(InputError, match=r"x\.md: is not under the ingest root"):
        read_path(path, root=tmp_path / "elsewhere")


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(InputError, match=r"nope\.md: cannot read"):
        read_path(tmp_path / "nope.md")


# -- bytes ----------------------------------------------------------------------------------

def test_invalid_utf8_after_two_mebibytes_reports_its_byte_offset(tmp_path):
    head = ("é" * 700_000 + "\n").encode()  # multi-byte characters straddle the block edges
    bad_at = 2 * BLOCK_BYTES + 12345
    data = head + b"a" * (bad_at - len(head)) + b"\xff" + b"tail\n"
    path = write(tmp_path / "big.md", data)
    with pytest.raises(InputError) as e:
        read_path(path)
    assert str(e.value) == (f"{path}: invalid UTF-8 at byte offset {bad_at}; "
                            "pass --errors replace to accept it")
    doc = read_path(path, errors="replace")
    assert doc.text.count("\ufffd") == 1 and doc.text.endswith("\ufffdtail\n")
    assert doc.text.startswith("é" * 700_000 + "\n")


def test_truncated_character_across_a_block_edge_reports_its_first_byte(tmp_path):
    lead = BLOCK_BYTES - 2
    data = b"a" * lead + "汉".encode()[:2] + b"b\n"  # the third byte of 汉 is missing
    with pytest.raises(InputError, match=f"invalid UTF-8 at byte offset {lead};"):
        read_path(write(tmp_path / "cut.txt", data))


def test_invalid_utf8_at_the_very_end(tmp_path):
    data = b"fine text " + "汉".encode()[:1]
    with pytest.raises(InputError, match="invalid UTF-8 at byte offset 10;"):
        read_path(write(tmp_path / "end.txt", data))


def test_bom_is_dropped_and_crlf_kept(tmp_path):
    path = write(tmp_path / "w.md", b"\xef\xbb\xbf# Title\r\n\r\nBody line.\r\n")
    doc = read_path(path)
    assert doc.text == "# Title\r\n\r\nBody line.\r\n" and doc.title == "Title"
    assert [c.content for c in assert_exact(doc)] == ["Title", "Body line."]


def test_binary_file_is_refused(tmp_path):
    path = write(tmp_path / "img.txt", b"GIF89a" + b"\x01" * 10 + b"\x00rest")
    with pytest.raises(InputError, match=r"img\.txt: binary file \(NUL byte at offset 16\)"):
        read_path(path)


def test_nul_after_the_first_block_is_found(tmp_path):
    path = write(tmp_path / "late.txt", b"a" * (BLOCK_BYTES + 5) + b"\x00")
    with pytest.raises(InputError, match=f"NUL byte at offset {BLOCK_BYTES + 5}"):
        read_path(path)


@pytest.mark.parametrize("data", [b"", b"  \n\t\r\n", b"\xef\xbb\xbf\n"])
def test_empty_documents_are_refused(tmp_path, data):
    path = write(tmp_path / "empty.md", data)
    with pytest.raises(InputError, match=r"empty\.md: empty document"):
        read_path(path)


def test_bad_errors_mode_is_refused(tmp_path):
    with pytest.raises(ValueError):
        read_path(write(tmp_path / "a.md", "x"), errors="ignore")


def test_five_megabyte_single_line_file_streams_and_chunks_bounded(tmp_path):
    line = "word " * 1_000_000
    doc = read_path(write(tmp_path / "one.txt", line))
    assert doc.text == line
    chunks = assert_exact(doc)
    assert 1000 <= len(chunks) <= 1500
    assert all(c.offset_end - c.offset_start <= 4000 for c in chunks)


# -- front matter ---------------------------------------------------------------------------

FRONT = ("---\ntitle: \"Release Notes\"\ntype: changelog\neffective_date: 2024-03-01\n"
         "id: release-notes\n# a comment\ntags:\n  - x\n---\n# Heading\n\nBody text.\n")


def test_front_matter_fields_and_body_start(tmp_path):
    doc = read_path(write(tmp_path / "notes.md", FRONT))
    assert (doc.title, doc.doc_type, doc.effective_date, doc.doc_id) == (
        "Release Notes", "changelog", "2024-03-01", "release-notes")
    assert doc.text == FRONT  # stored as ingested
    chunks = assert_exact(doc)
    assert [c.content for c in chunks] == ["Heading", "Body text."]
    assert chunks[0].offset_start == FRONT.index("# Heading") + 2


def test_front_matter_with_crlf_and_date_key(tmp_path):
    text = "---\r\ntitle: 'T'\r\ndate: 2024-03-01T10:00:00\r\n---\r\nBody.\r\n"
    doc = read_path(write(tmp_path / "c.md", text))
    assert doc.title == "T" and doc.effective_date == "2024-03-01T10:00:00"
    assert [c.content for c in assert_exact(doc)] == ["Body."]


def test_doc_type_argument_overrides_front_matter(tmp_path):
    path = write(tmp_path / "n.md", FRONT)
    assert read_path(path, doc_type="faq").doc_type == "faq"
    with pytest.raises(InputError, match=r"n\.md: document type 'blog'"):
        read_path(path, doc_type="blog")


def test_bad_front_matter_values_name_the_file(tmp_path):
    bad_type = write(tmp_path / "t.md", "---\ntype: novel\n---\nx\n")
    with pytest.raises(InputError, match=r"^.*t\.md: document type 'novel' is not one of spec"):
        read_path(bad_type)
    bad_date = write(tmp_path / "d.md", "---\neffective_date: March 2024\n---\nx\n")
    with pytest.raises(InputError, match=r"^.*d\.md: effective date 'March 2024'"):
        read_path(bad_date)
    bad_id = write(tmp_path / "i.md", "---\nid: ../etc\n---\nx\n")
    with pytest.raises(InputError, match=r"^.*i\.md: front matter: document id"):
        read_path(bad_id)


def test_opening_thematic_break_is_not_front_matter(tmp_path):
    text = "---\nJust a ruled paragraph.\n---\nMore.\n"
    doc = read_path(write(tmp_path / "r.md", text))
    assert doc.title == "r"
    assert "Just a ruled paragraph." in [c.content for c in assert_exact(doc)]


def test_unclosed_front_matter_is_body(tmp_path):
    doc = read_path(write(tmp_path / "u.md", "---\ntitle: x\n\nJust text.\n"))
    assert doc.title == "u"
    assert "Just text." in [c.content for c in assert_exact(doc)]


# -- HTML -----------------------------------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html><head><title>Install &amp; Run</title>
<style>p { color: red }</style><script>var secret = "<p>hidden</p>";</script></head>
<body>
<noscript>Enable JS</noscript><template><p>template text</p></template>
<h1>Install</h1>
<p>First   read <a href="guide.html#setup">the guide</a>, not
<a href="https://example.com">the web</a>. See section 2.</p>
<h2>Steps</h2>
<ul><li>download</li><li>unpack<ol><li>check &lt;sum&gt;</li></ol></li></ul>
<table><tr><th>name</th><th>size</th></tr><tr><td>core</td><td>1 | 2 MB</td></tr></table>
<div>Done<br>here</div>
</body></html>"""


def test_html_becomes_markdown_like_text(tmp_path):
    text, title = html_to_text(PAGE)
    assert title == "Install & Run"
    for gone in ("color: red", "secret", "hidden", "Enable JS", "template text"):
        assert gone not in text
    assert "# Install\n\nFirst read [the guide](guide.html#setup), not the web. See section 2." in text
    assert "## Steps\n\n- download\n- unpack\n  1. check <sum>" in text
    assert "| name | size |\n|---|---|\n| core | 1 \\| 2 MB |" in text
    assert text.endswith("Done\n\nhere\n")


def test_html_document_chunks_as_markdown(tmp_path):
    doc = read_path(write(tmp_path / "site" / "install.html", PAGE), root=tmp_path)
    assert doc.fmt == "html" and doc.raw == PAGE and doc.doc_id == "site.install"
    assert doc.title == "Install & Run"
    chunks = assert_exact(doc)
    kinds = [c.kind for c in chunks]
    assert kinds == ["heading", "paragraph", "heading", "list", "list_item", "list_item",
                     "table", "table_row", "paragraph", "paragraph"]
    assert chunks[2].section_path == ("Install", "Steps")
    links = chunk_document(doc).links
    assert {(link.kind, link.target) for link in links} == {("document", "guide.html#setup"),
                                                           ("section", "2")}


def test_html_title_falls_back_to_h1_and_empty_page_is_refused(tmp_path):
    assert html_to_text("<h1>Only  heading</h1><p>x</p>")[1] == "Only heading"
    empty = write(tmp_path / "e.html", "<html><head><title>t</title></head><body><script>x</script></body>")
    with pytest.raises(InputError, match=r"e\.html: empty document"):
        read_path(empty)


def test_html_head_without_closing_tag_does_not_swallow_the_body():
    text, title = html_to_text("<head><title>T</title><body><p>Visible.</p>")
    assert title == "T" and text == "Visible.\n"
    text, _ = html_to_text('<p>Go<a href="a.html"> there </a>now, or <a href="b.md">x</a>.</p>')
    assert text == "Go [there](a.html) now, or [x](b.md).\n"


# -- JSONL ----------------------------------------------------------------------------------

def jsonl(tmp_path, lines, name="corpus.jsonl"):
    return write(tmp_path / name, "\n".join(lines) + "\n")


def test_jsonl_documents(tmp_path):
    path = jsonl(tmp_path, [
        json.dumps({"pid": "h0", "title": "Marrow Dice", "text": "A dice game. It has demons."}),
        "",
        json.dumps({"id": 17, "title": "Int id", "text": "Text.", "type": "faq",
                    "effective_date": "2023-01-02"}),
        "   ",
        json.dumps({"pid": "中文", "title": "x", "text": "y"}),
    ])
    docs = iter_jsonl(path)
    first, second = next(docs), next(docs)
    assert (first.doc_id, first.title, first.fmt, first.source) == ("h0", "Marrow Dice", "text", f"{path}:1")
    assert (second.doc_id, second.doc_type, second.effective_date, second.source) == (
        "17", "faq", "2023-01-02", f"{path}:3")
    with pytest.raises(InputError, match=rf"^{path}:5: document id '中文'"):
        next(docs)  # an id is never silently rewritten
    assert [c.kind for c in assert_exact(first)] == ["paragraph"]


def test_a_jsonl_record_in_markdown_is_chunked_as_a_markdown_file_is(tmp_path):
    """A page exported to JSONL keeps its headings: its units carry their section path as the file's do."""
    page = "# Operations FAQ\n\n## Where do logs go?\n\nLogs are kept for 14 days.\n"
    path = jsonl(tmp_path, [json.dumps({"pid": "faq", "title": "FAQ", "text": page, "format": "markdown"}),
                            json.dumps({"pid": "plain", "title": "FAQ", "text": page})])
    markdown, plain = iter_jsonl(path)
    assert (markdown.fmt, plain.fmt) == ("markdown", "text")
    md_file = write(tmp_path / "faq.md", page)
    from_file = [(c.content, c.section_path) for c in chunk_document(read_path(md_file)).chunks]
    assert [(c.content, c.section_path) for c in chunk_document(markdown).chunks] == from_file
    logs = next(c for c in chunk_document(markdown).chunks if "14 days" in c.content)
    assert logs.section_path[-1] == "Where do logs go?"
    assert not any(c.section_path for c in chunk_document(plain).chunks)


def test_jsonl_turns_are_rendered_as_chat_ingest_renders_them(tmp_path):
    path = jsonl(tmp_path, [
        json.dumps({"pid": "t1", "title": "Ada, 2023-05-08", "text": "I moved to Porto yesterday.",
                    "effective_date": "2023-05-08", "speaker": "Ada"}),
        json.dumps({"pid": "t2", "title": "Group chat 1", "text": "Ada: Lovely!",  # the speaker already said
                    "effective_date": "2023-05-08T14:02", "speaker": "Ada"})])
    one, two = iter_jsonl(path)
    assert one.text == "[2023-05-08] Ada: I moved to Porto yesterday (2023-05-07)."
    assert one.title == "Ada, 2023-05-08" and one.doc_id == "t1"
    assert two.text == "[2023-05-08 14:02] Ada: Lovely!"


@pytest.mark.parametrize("line, reason", [
    ('{"pid": "a", "text": "x", "speaker": "Ada"}', 'a turn (a record with "speaker") needs an "effective_date"'),
    ('{"pid": "a", "text": "x", "speaker": 3, "effective_date": "2023-05-08"}', '"speaker" must be a non-empty'),
    ('{"pid": "a", "text": "x"', "bad JSON"),
    ('["a", "b"]', "expected a JSON object, got list"),
    ('{"text": "x"}', 'needs a "pid" or "id"'),
    ('{"pid": "a"}', 'needs a "text" string'),
    ('{"pid": "a", "text": "  "}', "empty document"),
    ('{"pid": "a", "text": "x", "type": "blog"}', "document type 'blog'"),
    ('{"pid": "a", "text": "x", "effective_date": "soon"}', "effective date 'soon'"),
    ('{"pid": "../a", "text": "x"}', "document id '../a'"),
    ('{"pid": "a", "text": "x", "format": "html"}', '"format" must be one of text, markdown'),
])
def test_jsonl_bad_lines_name_file_and_line(tmp_path, line, reason):
    path = jsonl(tmp_path, [json.dumps({"pid": "ok", "text": "fine"}), line])
    docs = iter_jsonl(path)
    assert next(docs).doc_id == "ok"
    with pytest.raises(InputError) as e:
        next(docs)
    assert str(e.value).startswith(f"{path}:2: ") and reason in str(e.value)


def test_jsonl_invalid_utf8_and_replace(tmp_path):
    good = json.dumps({"pid": "a", "text": "ok"}).encode() + b"\n"
    bad = b'{"pid": "b", "text": "bad \xff byte"}\n'
    path = write(tmp_path / "c.jsonl", good + bad)
    with pytest.raises(InputError, match=rf"c\.jsonl:2: invalid UTF-8 at byte offset {len(good) + 26};"):
        list(iter_jsonl(path))
    docs = list(iter_jsonl(path, errors="replace"))
    assert docs[1].text == "bad \ufffd byte"


def test_jsonl_doc_type_argument_overrides(tmp_path):
    path = jsonl(tmp_path, [json.dumps({"pid": "a", "text": "x", "type": "faq"})])
    assert next(iter_jsonl(path, doc_type="manual")).doc_type == "manual"
    with pytest.raises(InputError, match="document type 'blog'"):
        next(iter_jsonl(path, doc_type="blog"))


@pytest.mark.skipif(not HOTPOTQA.exists(), reason="shared HotpotQA corpus not present")
def test_reads_the_hotpotqa_corpus_format():
    docs = list(itertools.islice(iter_jsonl(HOTPOTQA), 200))
    assert len(docs) == 200 and all(d.text and d.fmt == "text" for d in docs)
    for doc in docs:
        assert_exact(doc)


def test_relative_time_is_resolved_against_a_documents_date_and_only_then(tmp_path):
    dated = tmp_path / "note.md"
    dated.write_text("---\ntitle: Last week\neffective_date: 2026-03-04\n---\n# Note\n\nLast week we moved "
                     "the API. Today the cache was flushed; 上周发布了新版本。\n", encoding="utf-8")
    doc = read_path(dated, default_date="2020-01-01")  # its own date wins
    assert doc.text.startswith("---\ntitle: Last week\n")  # front matter as it is
    assert ("Last week (2026-02-23 to 2026-03-01) we moved the API. Today (2026-03-04) the cache was "
            "flushed; 上周 (2026-02-23 to 2026-03-01)发布了新版本。") in doc.text
    assert read_path(dated, default_date="2020-01-01").text == doc.text  # the same file, the same text
    plain = tmp_path / "plain.txt"
    plain.write_text("The audit happened last month.", encoding="utf-8")
    assert read_path(plain).text == "The audit happened last month."  # no date: nothing changes
    assert read_path(plain, default_date="2026-02-10").text == "The audit happened last month (2026-01)."
    html = tmp_path / "page.html"
    html.write_text("<p>Shipped yesterday.</p>", encoding="utf-8")
    page = read_path(html, default_date="2026-02-10")
    assert "Shipped yesterday (2026-02-09)." in page.text and page.raw == "<p>Shipped yesterday.</p>"
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in [
        {"pid": "a", "text": "Opened next month.", "effective_date": "2026-12-31"},
        {"pid": "b", "text": "Opened next month."},
        {"pid": "c", "text": "I moved yesterday.", "speaker": "Ann", "effective_date": "2026-03-04"}]),
        encoding="utf-8")
    assert [d.text for d in iter_jsonl(corpus)] == ["Opened next month (2027-01).", "Opened next month.",
                                                    "[2026-03-04] Ann: I moved yesterday (2026-03-03)."]
    later = [d.text for d in iter_jsonl(corpus, default_date="2026-05-01")]
    assert later[1] == "Opened next month (2026-06)."
    undated = read_path(plain)
    assert with_resolved_time(undated) is undated  # no date: the document as it is


def test_relative_time_in_fenced_code_stays_as_written(tmp_path):
    note = tmp_path / "ops.md"
    note.write_text("# Ops\n\nKeys rotated yesterday.\n\n```sh\nfind . -newermt yesterday\n```\n\n"
                    "Last week the disk filled.\n\n~~~\nuntil yesterday\n", encoding="utf-8")
    text = read_path(note, default_date="2026-03-04").text
    assert "Keys rotated yesterday (2026-03-03)." in text and "Last week (2026-02-23 to 2026-03-01)" in text
    assert "find . -newermt yesterday\n```" in text  # a closed block
    assert text.endswith("~~~\nuntil yesterday\n")  # a block left open runs to the end
    plain = tmp_path / "ops.txt"
    plain.write_text("```\nyesterday\n```", encoding="utf-8")
    assert "yesterday (2026-03-03)" in read_path(plain, default_date="2026-03-04").text  # no Markdown: no fences


def test_relative_time_under_a_dated_heading_stays_as_written(tmp_path):
    # a changelog revised on 2026-10-01: "this month" under "September 2026" is September, not October
    log = tmp_path / "changelog.md"
    log.write_text("# Changes\n\nNext week the office moves.\n\n## September 2026\n\nThis month the port "
                   "moved.\n\n```\nuntil yesterday\n```\n\n### Details\n\nLast week too.\n\n## 2026年8月\n\n"
                   "本月起收费下调。\n\n## Policies\n\nLast week we changed the rota.\n\n```sh\n# 2026-09-01 backup\n"
                   "```\n\nYesterday the disk filled.\n", encoding="utf-8")
    text = read_path(log, default_date="2026-10-01").text
    assert "Next week (2026-10-05 to 2026-10-11) the office moves." in text
    assert "This month the port moved.\n" in text and "Last week too.\n" in text and "本月起收费下调。" in text
    assert "Last week (2026-09-21 to 2026-09-27) we changed the rota." in text  # the dated section has ended
    assert "Yesterday (2026-09-30) the disk filled." in text  # a shell comment with a date is no heading


def test_a_dated_document_ingested_again_keeps_its_unit_ids(tmp_path, capsys):
    from asmr.cli import main
    note = tmp_path / "docs" / "note.md"
    note.parent.mkdir()
    note.write_text("---\neffective_date: 2026-03-04\n---\n# Note\n\nWe moved the API last week.\n",
                    encoding="utf-8")
    (tmp_path / "docs" / "plain.txt").write_text("The audit happened last month.", encoding="utf-8")
    mem = tmp_path / "mem"
    args = ["ingest", str(tmp_path / "docs"), "--memory", str(mem), "--embedder", "hash-64"]
    assert main([*args, "--effective-date", "2026-02-10"]) == 0
    first = capsys.readouterr().out
    assert main([*args, "--effective-date", "2026-02-10"]) == 0
    assert "2 unchanged" in capsys.readouterr().out and "2 new" in first
    # another date for the undated page: its words mean another month, so it is a revision
    assert main([*args, "--effective-date", "2026-05-10"]) == 0
    out = capsys.readouterr().out
    assert "1 revised, 1 unchanged" in out and "1 superseded" in out
