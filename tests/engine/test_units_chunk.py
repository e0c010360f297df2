"""Chunking by meaning: exact spans, sections, sentence groups, lists, tables, links, CJK."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asmr.units.chunk import chunk_text
from asmr.units.model import UNIT_KINDS
from asmr.text.cjk import TextSizes, text_size
from asmr.text.sentences import sentence_ends

SENTENCE_MARKS = (".", "。", "！", "？", "!", "?")


def check_chunks(text, chunked, *, body_start=0, hard_max=4000):
    """The invariants every chunking must keep; returns the chunks for further checks."""
    chunks = chunked.chunks
    for i, c in enumerate(chunks):
        assert c.kind in UNIT_KINDS
        span = text[c.offset_start:c.offset_end]
        if c.kind == "table_row":
            header, row = c.content.split("\n", 1)
            assert span == row and "|" in header
        else:
            assert span == c.content, (i, c)
        assert span and span == span.strip(), (i, c)
        assert body_start <= c.offset_start < c.offset_end <= len(text)
        assert c.offset_end - c.offset_start <= hard_max
        if c.parent is not None:
            assert 0 <= c.parent < i
            parent = chunks[c.parent]
            if parent.kind != "heading":  # a heading parents what follows it, not what it holds
                assert parent.offset_start <= c.offset_start and c.offset_end <= parent.offset_end
        if i:
            assert chunks[i - 1].offset_start <= c.offset_start  # document order
    for link in chunked.links:
        assert 0 <= link.source < len(chunks)
        assert link.kind in ("section", "document")
    return chunks


def kinds(chunks):
    return [c.kind for c in chunks]


# -- headings and sections ------------------------------------------------------------------

def test_headings_set_section_paths_and_parents():
    text = ("Preamble.\n\n# Guide\n\nIntro.\n\n## Install ##\n\nRun it.\n\n### Linux\n\nApt.\n\n"
            "## Use\n\nCall it.\n\nSetext title\n============\n\nUnder setext.\n\nSub\n---\n\nDeep.\n")
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    by_content = {c.content: (i, c) for i, c in enumerate(chunks)}
    assert by_content["Preamble."][1].section_path == () and by_content["Preamble."][1].parent is None
    guide, _ = by_content["Guide"]
    install, install_chunk = by_content["Install"]  # closing #'s are not part of the title
    assert install_chunk.kind == "heading" and install_chunk.section_path == ("Guide", "Install")
    assert install_chunk.parent == guide
    linux, _ = by_content["Linux"]
    assert by_content["Apt."][1].section_path == ("Guide", "Install", "Linux")
    assert by_content["Apt."][1].parent == linux
    use, use_chunk = by_content["Use"]
    assert use_chunk.section_path == ("Guide", "Use") and use_chunk.parent == guide
    assert by_content["Call it."][1].parent == use
    setext, setext_chunk = by_content["Setext title"]
    assert setext_chunk.kind == "heading" and setext_chunk.section_path == ("Setext title",)
    assert by_content["Deep."][1].section_path == ("Setext title", "Sub")
    assert not any("===" in c.content or c.content == "---" for c in chunks)


def test_heading_span_excludes_hashes():
    text = "###   Spaced title   \n\nBody.\n"
    heading = chunk_text(text, "markdown").chunks[0]
    assert heading.kind == "heading" and heading.content == "Spaced title"
    assert text[heading.offset_start:heading.offset_end] == "Spaced title"


def test_hashtag_and_bare_hash_are_not_headings():
    text = "#hashtag is text\n\n#\n\nBody.\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert "heading" not in kinds(chunks)


# -- paragraphs and sentences ---------------------------------------------------------------

def sentences(n, word="alpha"):
    return " ".join(f"Sentence number {i} says {word} {'x' * (i % 7)} here." for i in range(n))


def test_short_paragraph_is_one_unit():
    text = "# T\n\n" + sentences(3) + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["heading", "paragraph"]


def test_long_paragraph_gets_sentence_children():
    para = sentences(40)
    assert 1200 < len(para) <= 4000
    text = "# T\n\n" + para + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks)[:2] == ["heading", "paragraph"]
    groups = chunks[2:]
    assert len(groups) >= 3 and all(c.kind == "sentence" and c.parent == 1 for c in groups)
    assert all(c.content.endswith("here.") and c.content.startswith("Sentence") for c in groups)
    assert all(len(c.content) <= 400 for c in groups)
    # The groups cover the paragraph: joined with the whitespace between them, they are it.
    assert " ".join(c.content for c in groups) == para


def test_paragraph_over_hard_max_is_replaced_by_its_sentences():
    para = sentences(120)
    assert len(para) > 4000
    text = "# T\n\n" + para + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert "paragraph" not in kinds(chunks)
    assert all(c.kind == "sentence" and c.parent == 0 for c in chunks[1:])
    assert " ".join(c.content for c in chunks[1:]) == para


def test_sentence_boundaries_skip_abbreviations_and_decimals():
    text = ("Dr. Smith met J. Doe, e.g. at noon. Pi is 3.14 and v1.2 shipped. "
            "It costs approx. five dollars! Really? Yes.")
    ends = sentence_ends(text)
    pieces = [text[a:b].strip() for a, b in zip([0] + ends, ends)]
    assert pieces == ["Dr. Smith met J. Doe, e.g. at noon.", "Pi is 3.14 and v1.2 shipped.",
                      "It costs approx. five dollars!", "Really?", "Yes."]


def test_single_line_of_five_megabytes_gives_bounded_units():
    words = ("lorem ipsum dolor sit amet consectetur " * 140_000)  # ~5.5 MB, no sentence end
    text = "# Huge\n\n" + words + "\n"
    chunked = chunk_text(text, "markdown")
    chunks = check_chunks(text, chunked)
    pieces = chunks[1:]
    assert all(c.kind == "sentence" for c in pieces)
    assert len(pieces) <= len(words) // 3000  # pieces are close to hard_max, not tiny
    assert all(not c.content.startswith(" ") and c.content[-1] != " " for c in pieces)
    vocabulary = set(words[:50].split())
    assert all(set(c.content.split()) <= vocabulary for c in pieces)  # cut at whitespace only


def test_cjk_line_without_spaces_is_cut_anywhere_within_hard_max():
    text = "汉" * 1_000_000
    chunks = check_chunks(text, chunk_text(text, "text"))
    assert len(chunks) == 250 and all(c.offset_end - c.offset_start == 4000 for c in chunks)


def test_fenced_code_is_one_unit_and_hides_markup():
    code = "```python\n# not a heading\n\n- not a list\n| a | b |\n|---|---|\n```"
    text = "# T\n\n" + code + "\n\nAfter.\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["heading", "paragraph", "paragraph"]
    assert chunks[1].content == code and chunks[2].content == "After."


def test_unclosed_fence_runs_to_the_end():
    text = "Before.\n\n~~~\ncode\n\n# still code\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["paragraph", "paragraph"]
    assert chunks[1].content == "~~~\ncode\n\n# still code"


def test_blockquote_is_paragraph_text():
    text = "> quoted line\n> more quote\n\nAfter.\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert [c.content for c in chunks] == ["> quoted line\n> more quote", "After."]


# -- lists ----------------------------------------------------------------------------------

def test_list_with_lead_in_and_nested_items():
    text = ("# Setup\n\nInstall these packages:\n\n- numpy\n- faiss\n  - faiss-cpu on CPU\n"
            "  - faiss-gpu on GPU\n- torch\n\nAfter the list.\n")
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["heading", "list", "list_item", "list_item", "list_item", "paragraph"]
    lst = chunks[1]
    assert lst.content.startswith("Install these packages:") and lst.content.endswith("- torch")
    assert lst.parent == 0 and lst.section_path == ("Setup",)
    assert [c.content for c in chunks[2:5]] == [
        "numpy", "faiss\n  - faiss-cpu on CPU\n  - faiss-gpu on GPU", "torch"]
    assert all(c.parent == 1 for c in chunks[2:5])
    assert chunks[5].content == "After the list." and chunks[5].parent == 0


def test_list_without_lead_in_keeps_the_paragraph():
    text = "A paragraph that is not a lead-in.\n\n1. one\n2. two\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["paragraph", "list", "list_item", "list_item"]
    assert chunks[1].content == "1. one\n2. two"
    assert [c.content for c in chunks[2:]] == ["one", "two"]


def test_list_interrupting_a_paragraph_and_fullwidth_colon_lead_in():
    text = "步骤如下：\n1) 安装。\n2) 运行。\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["list", "list_item", "list_item"]
    assert chunks[0].content == text.strip()
    assert [c.content for c in chunks[1:]] == ["安装。", "运行。"]


def test_loose_list_items_with_continuation_paragraphs():
    text = "- first\n\n  continued first\n\n- second\nlazy line\n\nNot in the list.\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["list", "list_item", "list_item", "paragraph"]
    assert chunks[1].content == "first\n\n  continued first"
    assert chunks[2].content == "second\nlazy line"


def test_list_longer_than_hard_max_keeps_its_items_and_lead_in():
    items = [f"- {sentences(3, str(i))}" for i in range(40)]
    text = "# Big\n\nAll of these:\n\n" + "\n".join(items) + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["heading", "paragraph"] + ["list_item"] * 40
    assert chunks[1].content == "All of these:"
    assert all(c.parent == 0 for c in chunks[1:])


def test_numbers_inside_a_paragraph_do_not_start_a_list():
    text = "The year was\n2024. It rained.\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["paragraph"]


# -- tables ---------------------------------------------------------------------------------

def test_table_rows_carry_the_header():
    text = ("# Limits\n\n| name | max |\n|:-----|----:|\n| units | 4000 |\n| links | 10 |\n\n"
            "After.\n")
    chunked = chunk_text(text, "markdown")
    chunks = check_chunks(text, chunked)
    assert kinds(chunks) == ["heading", "table", "table_row", "table_row", "paragraph"]
    assert chunks[1].content == "| name | max |\n|:-----|----:|\n| units | 4000 |\n| links | 10 |"
    assert chunks[2].content == "| name | max |\n| units | 4000 |"
    assert text[chunks[3].offset_start:chunks[3].offset_end] == "| links | 10 |"
    assert chunks[2].parent == chunks[3].parent == 1 and chunks[1].parent == 0


def test_pipe_without_separator_is_not_a_table():
    text = "a | b\nc | d\n\n| x | y |\n|---|\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert "table" not in kinds(chunks)


# -- links ----------------------------------------------------------------------------------

def test_section_and_document_links():
    text = ("# Doc\n\nFor details see section 4.2, and (see §3). See Section 5.\n\n"
            "- read [the install guide](guides/install.md#linux) first\n"
            "- jump to [below](#usage), not [web](https://example.com) or [mail](mailto:a@b.c)\n\n"
            "参见第3节。\n\n![image](img.png)\n")
    chunked = chunk_text(text, "markdown")
    chunks = check_chunks(text, chunked)
    found = {(link.kind, link.target, link.text, chunks[link.source].kind) for link in chunked.links}
    assert found == {
        ("section", "4.2", "see section 4.2", "paragraph"),
        ("section", "3", "see §3", "paragraph"),
        ("section", "5", "See Section 5", "paragraph"),
        ("document", "guides/install.md#linux", "the install guide", "list_item"),
        ("section", "#usage", "below", "list_item"),
        ("section", "3", "参见第3节", "paragraph"),
    }


def test_link_in_a_long_paragraph_belongs_to_its_sentence_group():
    para = sentences(20) + " Then read [notes](notes.md) carefully. " + sentences(20, "beta")
    text = para + "\n"
    chunked = chunk_text(text, "markdown")
    chunks = check_chunks(text, chunked)
    (link,) = chunked.links
    holder = chunks[link.source]
    assert holder.kind == "sentence" and "[notes](notes.md)" in holder.content


def test_table_row_links_belong_to_the_row():
    text = "| doc | note |\n|---|---|\n| [a](a.md) | see section 2 |\n"
    chunked = chunk_text(text, "markdown")
    chunks = check_chunks(text, chunked)
    assert {(chunks[link.source].kind, link.target) for link in chunked.links} == {
        ("table_row", "a.md"), ("table_row", "2")}


def test_citation_markers_are_plain_text():
    text = ("The limit is 4000 [cite:memo://kb/doc/abc123def456] and "
            "[cite:memo://kb/doc/abc] (docs) stay plain. 限制为4000【引用:memo://kb/doc/abc】。\n")
    for fmt in ("markdown", "text"):
        chunked = chunk_text(text, fmt)
        chunks = check_chunks(text, chunked)
        assert kinds(chunks) == ["paragraph"] and chunked.links == []
    # Next to a real link (so the text is searched for links), markers still stay plain.
    text = ("Limits [cite:memo://kb/doc/abc] (docs) apply, [cite:memo://kb/d/k](notes.md) too; "
            "read [the guide](guide.md).\n")
    chunked = chunk_text(text, "markdown")
    check_chunks(text, chunked)
    assert [(link.kind, link.target, link.text) for link in chunked.links] == [
        ("document", "guide.md", "the guide")]


def test_plain_text_has_no_markup_or_markdown_links():
    text = "# not a heading\n- not a list\n\n[x](y.md) stays text, see section 2.\n"
    chunked = chunk_text(text, "text")
    chunks = check_chunks(text, chunked)
    assert kinds(chunks) == ["paragraph", "paragraph"]
    assert chunks[0].content == "# not a heading\n- not a list"
    assert [(link.kind, link.target) for link in chunked.links] == [("section", "2")]


# -- CJK, CRLF, body start ------------------------------------------------------------------

def test_chinese_document_structure():
    text = ("# 安装指南\n\n## 准备\n\n需要以下组件：\n\n- 数据库\n- 索引\n\n"
            "| 名称 | 说明 |\n|---|---|\n| 单元 | 记忆单元 |\n\n这是一段话。它有两句！\n")
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    assert kinds(chunks) == ["heading", "heading", "list", "list_item", "list_item",
                             "table", "table_row", "paragraph"]
    assert chunks[1].section_path == ("安装指南", "准备")
    assert chunks[2].content.startswith("需要以下组件：")
    assert chunks[6].content == "| 名称 | 说明 |\n| 单元 | 记忆单元 |"


def test_long_chinese_paragraph_splits_only_at_sentence_ends():
    ends = "。！？"
    para = "".join(f"第{i}句话讲的是记忆单元与检索的关系和版本{i % 5}.{i % 3}的变化" + ends[i % 3]
                   for i in range(60))
    assert len(para) > 1200
    text = "# 标题\n\n" + para + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    groups = [c for c in chunks if c.kind == "sentence"]
    assert len(groups) >= 4
    assert all(g.content[-1] in ends and g.content.startswith("第") for g in groups)
    assert "".join(g.content for g in groups) == para


def test_chinese_paragraph_is_sized_by_what_it_says_not_its_characters():
    # 500 characters: far under 1200, but as much text as an English paragraph of about 1500 (a CJK
    # character counts 3), so it gets sentence children as that one would, of about 133 characters.
    ends = "。！？"
    para = "".join(f"第{i:02d}句说明仓库的温度要求和出入库记录的保存期限" + ends[i % 3] for i in range(20))
    assert 400 < len(para) < 1200 < text_size(para)
    text = "# 标题\n\n" + para + "\n"
    chunks = check_chunks(text, chunk_text(text, "markdown"))
    groups = [c for c in chunks if c.kind == "sentence"]
    assert len(groups) >= 3 and all(text_size(g.content) <= 400 for g in groups)
    assert "".join(g.content for g in groups) == para
    # the same number of characters in Latin script stays one unit
    latin = " ".join(f"Sentence {i:02d} sets the storage rule here." for i in range(12))[:len(para)]
    assert kinds(check_chunks(latin, chunk_text(latin, "text"))) == ["paragraph"]


def test_text_sizes_match_text_size_on_every_span_and_take_a_lone_surrogate():
    # a JSON corpus may hold a lone surrogate ("\\ud800"): sizing must not fail on it
    text = "Kit 中文字 — 한국어 かな\ud800。" + "更多" * 3
    sizes = TextSizes(text)
    spans = [(a, b) for a in range(len(text) + 1) for b in range(a, len(text) + 1)]
    assert all(sizes(a, b) == text_size(text, a, b) for a, b in spans)
    long = "中文字" * 500 + "\ud800。" + "更多" * 10
    assert kinds(check_chunks(long, chunk_text(long, "text"))) == ["paragraph", "sentence", "sentence"]


def test_crlf_spans_are_exact_and_structure_matches_lf():
    lf = ("# Title\n\nIntro line one\nline two.\n\nSteps:\n\n- a\n- b\n\n"
          "| h | i |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n\nSub\n---\n\nEnd.\n")
    crlf = lf.replace("\n", "\r\n")
    a = check_chunks(lf, chunk_text(lf, "markdown"))
    b = check_chunks(crlf, chunk_text(crlf, "markdown"))
    assert kinds(a) == kinds(b)
    assert [c.content.replace("\r\n", "\n") for c in b] == [c.content for c in a]
    assert all(not c.content.endswith("\r") for c in b)
    text_chunks = check_chunks(crlf, chunk_text(crlf, "text"))
    assert len(text_chunks) == len([p for p in lf.split("\n\n") if p.strip()])


def test_body_start_skips_front_matter():
    text = "---\ntitle: X\n---\n# Real\n\nBody.\n"
    start = text.index("# Real")
    chunks = check_chunks(text, chunk_text(text, "markdown", body_start=start), body_start=start)
    assert kinds(chunks) == ["heading", "paragraph"] and chunks[0].content == "Real"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError):
        chunk_text("x", "html")
    with pytest.raises(ValueError):
        chunk_text("x", "text", max_unit_chars=5000, hard_max_chars=4000)
    with pytest.raises(ValueError):
        chunk_text("x", "text", body_start=5)


# -- property: any Markdown-ish document ----------------------------------------------------

WORDS = st.sampled_from("memory unit graph index store vector recall answer source verify".split())
CJK_WORDS = st.sampled_from(["记忆", "单元", "检索", "图谱", "答案", "来源"])


@st.composite
def latin_sentence(draw):
    words = draw(st.lists(WORDS, min_size=2, max_size=9))
    return " ".join(words).capitalize() + draw(st.sampled_from([".", "!", "?"]))


@st.composite
def cjk_sentence(draw):
    return "".join(draw(st.lists(CJK_WORDS, min_size=2, max_size=12))) + draw(st.sampled_from("。！？"))


@st.composite
def paragraph(draw):
    cjk = draw(st.booleans())
    sentence = cjk_sentence() if cjk else latin_sentence()
    joiner = draw(st.sampled_from(["", " ", "\n"] if cjk else [" ", "\n", "  "]))
    return joiner.join(draw(st.lists(sentence, min_size=1, max_size=14)))


@st.composite
def block(draw):
    kind = draw(st.sampled_from(["heading", "paragraph", "paragraph", "list", "table", "code", "setext"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(latin_sentence())[:-1]
    if kind == "setext":
        return draw(latin_sentence())[:-1] + "\n" + draw(st.sampled_from(["===", "---"]))
    if kind == "list":
        marker = draw(st.sampled_from(["-", "*", "+", "1.", "1)"]))
        items = draw(st.lists(paragraph(), min_size=1, max_size=4))
        lines = [f"{marker} {item.replace(chr(10), ' ')}" for item in items]
        lead = draw(st.sampled_from(["", "Here is a list:\n", "列表如下：\n\n"]))
        return lead + "\n".join(lines)
    if kind == "table":
        rows = draw(st.lists(st.tuples(WORDS, WORDS), min_size=0, max_size=4))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {x} | {y} |" for x, y in rows)
    if kind == "code":
        return "```\n" + draw(paragraph()) + "\n# inside\n```"
    return draw(paragraph())


@given(blocks=st.lists(block(), min_size=1, max_size=8),
       newline=st.sampled_from(["\n", "\r\n"]),
       fmt=st.sampled_from(["markdown", "text"]),
       front=st.booleans())
def test_property_spans_exact_and_sentences_whole(blocks, newline, fmt, front):
    body = "\n\n".join(blocks) + "\n"
    prefix = "---\ntitle: t\n---\n" if front else ""
    text = (prefix + body).replace("\n", newline)
    body_start = len(prefix.replace("\n", newline))
    chunked = chunk_text(text, fmt, max_unit_chars=150, target_sentence_chars=80,
                         hard_max_chars=300, body_start=body_start)
    chunks = check_chunks(text, chunked, body_start=body_start, hard_max=300)
    assert chunks or not body.strip()
    for c in chunks:
        if c.kind == "sentence":
            # No generated sentence is near hard_max, so no sentence is ever cut: a group
            # ends at a sentence end, or at the end of its code block or list marker text.
            assert c.content.endswith(SENTENCE_MARKS) or c.content.endswith("```"), c.content
        if fmt == "text":
            assert c.kind in ("paragraph", "sentence") and c.section_path == ()
