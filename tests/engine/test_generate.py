"""Generator backends: the extractive one (no model)."""
import pytest

from asmr.decoding.markers import CITE_ZH, marker_pattern
from asmr.embed.models import get_embedder
from asmr.generate.base import GeneratorError, Source
from asmr.decoding.markers import cite
from asmr.generate.extractive import ExtractiveGenerator, question_parts, quotable_sentences
from asmr.text.sentences import split_sentences

SOURCES = [
    Source("memo://kb/ops.deploy/aaa", "Deploys start at 02:00 UTC on Sundays. Rollbacks must finish within 15 minutes."),
    Source("memo://kb/ops.owners/bbb", "| system | owner |\n| billing | Team Kestrel |"),
    Source("memo://kb/hr.travel/ccc", "Economy class is booked for flights under six hours."),
]


@pytest.fixture(scope="module")
def gen():
    return ExtractiveGenerator(get_embedder("hash-256"), max_sentences=2)


def test_answers_with_source_sentences_each_cited_by_its_own_unit(gen):
    out = gen.generate("How long may a rollback take?", SOURCES)
    ids = [m.group("id0") for m in marker_pattern().finditer(out.text)]
    assert "Rollbacks must finish within 15 minutes [cite:memo://kb/ops.deploy/aaa]." in out.text
    assert ids and set(ids) <= {s.id for s in SOURCES}
    for sentence in marker_pattern().sub("", out.text).split(" ."):
        body = sentence.strip(" .")
        assert not body or any(body in " ".join(split_sentences(s.text)) for s in SOURCES), body


def test_table_rows_read_as_header_value_pairs(gen):
    assert split_sentences(SOURCES[1].text) == ["system: billing; owner: Team Kestrel"]
    assert "owner: Team Kestrel [cite:memo://kb/ops.owners/bbb]" in gen.generate("Who owns billing?", SOURCES).text


def test_a_pronoun_sentence_is_quoted_with_what_it_refers_to():
    text = "Ivrix batches inventory counts. It is owned by the Ochre Kestrel team. Deploys run nightly."
    assert quotable_sentences(text) == ["Ivrix batches inventory counts. It is owned by the Ochre Kestrel team.",
                                        "Deploys run nightly."]
    assert quotable_sentences("It opens a unit.") == ["It opens a unit."]  # nothing before it to join


def test_question_parts():
    assert question_parts("Which team owns the system that batches inventory counts, and who leads that team?") \
        == ["Which team owns the system that batches inventory counts", "who leads that team"]
    # without the comma "and" may share one predicate ("Which port and which host does it use?")
    assert question_parts("Which port and which host does the API use?") == ["Which port and which host does the API use?"]
    assert question_parts("How long are logs and backups kept?") == ["How long are logs and backups kept?"]


def with_and_without(gen, question, sources, **off):
    """The answer, and the answer of the same generator with the step under test ``off``."""
    plain = ExtractiveGenerator(gen.embedder, max_sentences=2, **off)
    return gen.generate(question, sources).text, plain.generate(question, sources).text


def test_a_two_part_question_gets_a_sentence_for_each_part_through_the_bridge_name(gen):
    sources = [
        Source("memo://kb/systems.ivrix/a", "Ivrix batches inventory counts. It is owned by the Ochre Kestrel team."),
        Source("memo://kb/teams.cobalt-gecko/b", "The Cobalt Gecko team leads the weekly review."),
        Source("memo://kb/teams.ochre-kestrel/c", "The Ochre Kestrel team is led by Oriane Brackenridge."),
    ]
    text, plain = with_and_without(
        gen, "Which team owns the system that batches inventory counts, and who leads that team?", sources,
        bridge_weight=0.0)
    assert "Ochre Kestrel team [cite:memo://kb/systems.ivrix/a]." in text
    assert "Oriane Brackenridge [cite:memo://kb/teams.ochre-kestrel/c]." in text and "Cobalt" not in text
    # the other team's sentence shares more words with "who leads that team": only the bridge
    # name (Ochre Kestrel, from the first part's answer) puts the right team's lead first
    assert "Cobalt Gecko" in plain and "Oriane" not in plain


def test_deterministic_and_bounded(gen):
    a = gen.generate("When do deploys start?", SOURCES).text
    assert a == gen.generate("When do deploys start?", SOURCES).text
    assert len(marker_pattern().findall(a)) <= 2


def test_markers_go_before_the_final_punctuation():
    assert cite("It is 5 GB.", "x") == "It is 5 GB [cite:x]."
    assert cite("部署在周日。", "x", CITE_ZH) == "部署在周日【引用:x】。"  # Chinese: no space before it
    assert cite("部署在周日", "x") == "部署在周日[cite:x]。"
    assert cite("No end", "x") == "No end [cite:x]."


def test_sentences_join_without_a_space_after_a_full_width_end():
    from asmr.decoding.markers import join_sentences

    assert join_sentences(["部署在周日[cite:x]。", "备份每天一次[cite:y]。", "Logs rotate [cite:z]."]) == (
        "部署在周日[cite:x]。备份每天一次[cite:y]。Logs rotate [cite:z].")
    assert join_sentences(["A [cite:x].", "B [cite:y]."]) == "A [cite:x]. B [cite:y]."
    assert join_sentences([]) == ""


def test_no_sources_no_answer_and_bad_sources_refused(gen):
    assert gen.generate("anything?", []).text == ""
    with pytest.raises(ValueError, match="given twice"):
        gen.generate("q", [SOURCES[0], SOURCES[0]])
    with pytest.raises(ValueError, match="must be a Source"):
        gen.generate("q", ["text"])
    with pytest.raises(ValueError, match="max_sentences"):
        ExtractiveGenerator(get_embedder("hash-64"), max_sentences=0)


def test_rewrite_returns_the_closest_source_sentence(gen):
    out = gen.rewrite("rollbacks finish in 15 minutes", SOURCES[0].text)
    assert out == "Rollbacks must finish within 15 minutes."
    assert gen.paraphrase("Rollbacks must finish within 15 minutes.") is None  # it writes nothing of its own


def test_openai_backend_sends_the_allowlist_and_reads_the_answer():
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from asmr.generate import get_generator
    seen = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server's name)
            seen["path"] = self.path
            seen["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen["auth"] = self.headers.get("Authorization")
            out = json.dumps({"choices": [{"message": {"content": "Deploys start at 02:00 UTC "
                                                                  "[cite:memo://kb/ops.deploy/aaa]."}}],
                              "usage": {"completion_tokens": 12}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        gen = get_generator("openai", base_url=f"http://127.0.0.1:{server.server_port}/v1", model="m", api_key="k")
        out = gen.generate("When do deploys start?", SOURCES)
        assert out.text.endswith("[cite:memo://kb/ops.deploy/aaa].") and out.tokens == 12
        assert seen["path"] == "/v1/chat/completions" and seen["auth"] == "Bearer k"
        assert seen["body"]["vllm_xargs"]["asmr_allowlist"] == [s.id for s in SOURCES]
        assert "Deploys start at 02:00" in seen["body"]["messages"][1]["content"]
        # a paraphrase is one more chat call, without the allowlist; markers do not come back
        assert gen.paraphrase("Deploys begin at 02:00 UTC.").startswith("Deploys start at 02:00 UTC")
        assert "vllm_xargs" not in seen["body"] and seen["body"]["messages"][1]["content"].endswith(
            "Deploys begin at 02:00 UTC.")
    finally:
        server.shutdown()
    with pytest.raises(ValueError, match="base URL"):
        get_generator("openai", base_url="", model="m")
    with pytest.raises(GeneratorError, match="generator openai: cannot reach"):
        get_generator("openai", base_url="http://127.0.0.1:9/v1", model="m", timeout=2).generate("q", SOURCES)
    with pytest.raises(ValueError, match="must be one of"):
        get_generator("gpt")


def test_a_chat_turn_is_ranked_by_what_it_says_not_by_its_head(gen):
    # every turn of Kasimir holds his name and a stamp: neither tells the answering turn from small talk
    q = "Which band did Kasimir see live?"
    sources = [Source("a", "[2023-11-25] Kasimir: Kasimir here, morning all!"),
               Source("c", "[2023-11-25] Kasimir: I saw Velvet Orchard live two weeks ago, what a night.")]
    out = gen.generate(q, sources).text
    assert out.startswith("[2023-11-25] Kasimir: I saw Velvet Orchard") and "[cite:a]" not in out
    restamped = [Source(s.id, s.text.replace("2023-11-25", "2024-02-09 18:30")) for s in sources]
    assert [r[0] for r in gen._ranked(q, restamped)[0]] == [r[0] for r in gen._ranked(q, sources)[0]]


def test_a_two_hop_question_follows_the_name_the_first_sentence_brings_in(gen):
    sources = [
        Source("memo://kb/lantern-tide/a", "Lantern Tide is a novel by Ilsa Marrowby. It was published by Harrow Press in 2010."),
        Source("memo://kb/greyfield/b", "Greyfield Books prints novels in Tarnwick."),
        Source("memo://kb/harrow-press/c", "Harrow Press is an independent house founded in 2005. The city of Solby is its home."),
    ]
    text, plain = with_and_without(gen, "In which city is the publisher of the novel Lantern Tide?", sources,
                                   follow_links=False)
    assert "Harrow Press in 2010 [cite:memo://kb/lantern-tide/a]." in text
    assert "Solby is its home [cite:memo://kb/harrow-press/c]." in text and "Greyfield" not in text
    # without following the bridge name, nothing of the publisher's own unit is quoted
    assert "harrow-press/c" not in plain


def test_the_next_hop_goes_before_a_near_equal_of_the_best_sentence(gen):
    # two sentences say nearly the same of the novel; only one names the publisher, whose page says where
    sources = [
        Source("memo://kb/lantern-tide/a", "Lantern Tide was published by the house of Harrow Press in 2010."),
        Source("memo://kb/lantern-tide/x", "Lantern Tide was published again in 2015 by a house."),
        Source("memo://kb/harrow-press/c", "Harrow Press is an independent house. The city of Solby is its home."),
    ]
    question = "In which city is the house that published Lantern Tide?"
    ranked = gen._ranked(question, sources)[0]
    assert [i for _, i, _ in ranked[:2]] == [0, 1] and ranked[1][0] >= gen.relative_score * ranked[0][0]
    text = gen.generate(question, sources).text
    assert "[cite:memo://kb/lantern-tide/a]" in text and "Solby is its home [cite:memo://kb/harrow-press/c]" in text
    assert "lantern-tide/x" not in text  # two sentences at most: the hop took the second place


def test_a_quoted_sentence_reads_on_to_the_table_row_it_names(gen):
    """A role the quote names by a table row's first cell leads to that row (the person and the
    extension), in Chinese as in English, while room is left; a row the quote does not name is not
    followed."""
    sources = [
        Source("memo://kb/hours/a", "需要换班的同事，请提前5天登记，经副馆长批准后生效。"),
        Source("memo://kb/contacts/b", "| 岗位 | 姓名 | 分机 |\n| 副馆长（排班、人事） | 陈晓雯 | 8002 |"),
        Source("memo://kb/contacts/c", "| 岗位 | 姓名 | 分机 |\n| 保安主管 | 孙海涛 | 8010 |"),
        Source("memo://kb/rooms/d", "Book the hall through the events officer."),
        Source("memo://kb/contacts/e", "| Role | Name | Extension |\n| Events officer | Wu Ting | 8033 |"),
    ]
    gen = ExtractiveGenerator(gen.embedder, max_sentences=2)
    text = gen.generate("换班要经谁批准？", sources).text
    assert "经副馆长批准后生效[cite:memo://kb/hours/a]" in text and "陈晓雯" in text and "contacts/c" not in text
    unfollowed = ExtractiveGenerator(gen.embedder, max_sentences=2, follow_links=False)
    assert "[cite:memo://kb/contacts/b]" not in unfollowed.generate("换班要经谁批准？", sources).text
    english = gen.generate("Who do I see to book the hall?", sources).text
    assert "[cite:memo://kb/rooms/d]" in english and "Wu Ting" in english
    assert "Wu Ting" not in ExtractiveGenerator(gen.embedder, max_sentences=1).generate(
        "Who do I see to book the hall?", sources).text  # no room left: the best sentence alone


def test_a_quoted_source_that_names_a_row_in_another_sentence_leads_to_that_row(gen):
    """The best sentence names no row, but another sentence of its unit does: that sentence and the row
    join where the row states a word the question asks and the quote leaves unsaid (the extension), in
    Chinese as in English; not where the row says nothing still asked, nor where no room is left."""
    sources = [
        Source("memo://kb/privacy/a", "A patient who asks for a copy of their record makes a subject access request. "
                                      "Pass any such request to the data protection officer within one working day."),
        Source("memo://kb/contacts/b", "| Role | Name | Extension |\n| Data protection officer | Lucy Brennan | 205 |"),
        Source("memo://kb/contacts/c", "| Role | Name | Extension |\n| IT support | Marcus Lee | 230 |"),
        Source("memo://kb/hours/d", "读者借书超期的，每本每天收取超期费0.5元。超期费由值班馆员登记。"),
        Source("memo://kb/contacts/e", "| 岗位 | 姓名 | 分机 |\n| 值班馆员 | 王芳 | 8021 |"),
    ]
    gen = ExtractiveGenerator(gen.embedder, max_sentences=3)
    question = "What extension does the person who takes subject access requests have?"
    assert gen._ranked(question, sources)[0][0][2].startswith("A patient")  # the best sentence names no row
    text = gen.generate(question, sources).text
    assert "to the data protection officer within one working day [cite:memo://kb/privacy/a]" in text
    assert "Lucy Brennan" in text and "[cite:memo://kb/contacts/b]" in text and "contacts/c" not in text
    assert "contacts/b" not in ExtractiveGenerator(gen.embedder, max_sentences=2).generate(question, sources).text
    # the row states nothing the question still asks: the quote stands alone
    assert "contacts/b" not in gen.generate("What does a patient make who asks for a copy of their record?",
                                            sources).text
    zh = gen.generate("每本书每天收取的超期费由谁登记？分机号是多少？", sources).text
    assert "超期费由值班馆员登记[cite:memo://kb/hours/d]" in zh and "8021 [cite:memo://kb/contacts/e]" in zh


def test_a_two_hop_question_follows_a_compound_the_first_sentence_brings_in(gen):
    # the bridge is a role, no name: "the safety officer" leads to the row that gives the extension
    sources = [
        Source("memo://kb/spills/a", "For a spill larger than 500 ml, leave the room and call the safety officer."),
        Source("memo://kb/contacts/b", "Role: Safety officer; Name: Ines Carvalho; Extension: 4417"),
        Source("memo://kb/contacts/c", "Role: Lab manager; Name: Priya Raman; Extension: 4410"),
        Source("memo://kb/safety/d", "The safety officer runs the monthly walk-through."),
    ]
    question = "What is the extension of the person I must call after a large spill?"
    # hashing vectors rank the row far below the quote: a lower floor lets the rows the hop weighs through
    gen = ExtractiveGenerator(gen.embedder, max_sentences=2, min_score=0.1)
    text = gen.generate(question, sources).text
    plain = ExtractiveGenerator(gen.embedder, max_sentences=2, min_score=0.1, follow_links=False).generate(
        question, sources).text
    assert "call the safety officer [cite:memo://kb/spills/a]." in text and "[cite:memo://kb/contacts/b]" in text
    assert "contacts/c" not in text and "safety/d" not in text  # no compound of the quote; no word still asked
    assert "contacts/b" not in plain
    # where the quote brings in a name, the name is the bridge, and a shared compound leads nowhere
    named = [Source("memo://kb/hiring/a", "The Tarnwick office hires a safety officer each spring."), sources[1]]
    hired = gen.generate("What is the extension of the person the office hires each spring?", named).text
    assert "[cite:memo://kb/hiring/a]" in hired and "contacts/b" not in hired
    unnamed = [Source("memo://kb/hiring/a", "The office hires a safety officer each spring."), sources[1]]
    assert "[cite:memo://kb/contacts/b]" in gen.generate(
        "What is the extension of the person the office hires each spring?", unnamed).text
    from asmr.text.words import content_pairs
    assert content_pairs("leave the room, call the safety officer") == {("safety", "officer")}
    assert content_pairs("负责车队调度的人 Wi-Fi") == set()  # Chinese characters side by side are no compound
    # a compound the question gives itself is no bridge: the quote already says it
    asked = gen.generate("What does the safety officer do after a spill?", sources[:1] + sources[3:]).text
    assert "[cite:memo://kb/spills/a]" in asked


def test_a_question_naming_two_things_quotes_a_sentence_about_each(gen):
    sources = [
        Source("memo://kb/quill/a", "Ada Quill was born first of the five children of a poet."),
        Source("memo://kb/tovey/b", "Bram Tovey is a painter from Tarnwick, active since 1970."),
        Source("memo://kb/poets/c", "The poets of Solby were born to fishing families."),
    ]
    text, plain = with_and_without(gen, "Who was born first, Ada Quill or Bram Tovey?", sources, follow_links=False)
    assert "[cite:memo://kb/quill/a]" in text and "[cite:memo://kb/tovey/b]" in text
    assert "tovey/b" not in plain


def test_a_dictionary_word_is_no_particular_name():
    from asmr.generate.extractive import _particular
    from asmr.text.words import dictionary_word
    assert dictionary_word("Value") and dictionary_word("setting") and not dictionary_word("Vantor")
    # a table's capitalised column or a question's first word leads nowhere; a name does
    assert not _particular("value") and not _particular("within")
    assert _particular("vantor") and _particular("recovery time objective")


class _NoiseEmbedder:
    """Cosines that favour one sentence whatever it says: 1 for a text holding ``favoured``, 0 for the
    rest; ``scripts`` what the model says it reads (None: every script)."""

    def __init__(self, favoured: str, scripts):
        self.favoured, self.scripts, self.name, self.dim = favoured, scripts, "noise", 2

    def embed(self, texts, *, progress=False):
        import numpy as np
        return np.array([[1.0, 0.0] if self.favoured in t else [0.0, 1.0] for t in texts], np.float32)

    def embed_questions(self, texts):
        import numpy as np
        return np.array([[1.0, 0.0]] * len(texts), np.float32)


def test_a_cosine_the_model_cannot_read_gives_way_to_the_words_a_sentence_shares():
    """An English model's cosine of Chinese text is noise: the sentence it favours is quoted only by a
    model that reads Chinese; one that reads Latin script only picks the sentence that holds the
    question's words."""
    sources = [Source("memo://kb/hr.attendance/aaa", "仓库白班从早上八点到下午五点。"),
               Source("memo://kb/faq/bbb", "仓库的地址是嘉兴市物流园十二号。")]
    question = "仓库的地址在哪里？"
    reads_all = ExtractiveGenerator(_NoiseEmbedder("白班", None), max_sentences=1)
    assert "aaa" in reads_all.generate(question, sources).text  # the premise: the cosine decides
    latin_only = ExtractiveGenerator(_NoiseEmbedder("白班", frozenset({"latin"})), max_sentences=1)
    assert "嘉兴市物流园十二号[cite:memo://kb/faq/bbb]" in latin_only.generate(question, sources).text


def test_a_question_quotes_the_sentence_of_the_other_language_that_says_its_words():
    """A question asked in English over Chinese sentences shares no word with them, and a model that reads
    Latin script only ranks them by noise: the sentence whose Chinese says the question's words
    (CC-CEDICT: 调度 "dispatch", 负责 "in charge of") is quoted."""
    sources = [Source("memo://kb/changelog/aaa", "车队启用新的油卡额度。"),
               Source("memo://kb/fleet/bbb", "司机每天连续驾驶不得超过四小时。车队调度由赵敏负责。")]
    latin_only = ExtractiveGenerator(_NoiseEmbedder("油卡", frozenset({"latin"})), max_sentences=1)
    assert "车队调度由赵敏负责[cite:memo://kb/fleet/bbb]" in latin_only.generate(
        "Who is in charge of fleet dispatch?", sources).text
    # and the other way: a Chinese question's words (服务器 server, 监听 listen, 端口 port) in English
    english = [Source("memo://kb/faq/ccc", "Each API key may send 600 requests per minute."),
               Source("memo://kb/ops/ddd", "The API server listens on port 9090 by default.")]
    reads_english = ExtractiveGenerator(_NoiseEmbedder("requests", frozenset({"latin"})), max_sentences=1)
    assert "port 9090 by default [cite:memo://kb/ops/ddd]" in reads_english.generate(
        "API 服务器默认监听哪个端口？", english).text
