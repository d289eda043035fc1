"""Turkish retrieval with the default embedder: the same memories and questions in English and in Turkish
(written for this test; not translated by a machine), one memory per line, several near-misses per question
(other people, other trips, other dates). The default embedder's recall@5 in Turkish must be within 0.05 of
its recall in English — the multilingual model serves Turkish as well as English — both through the bare
embedder (dense retrieval) and through ``Memory.search`` (the whole read path)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

#: (English, Turkish) memories
MEMORIES = [
    (
        "Deniz is allergic to penicillin and carries an EpiPen",
        "Deniz'in penisilin alerjisi var ve yanında EpiPen taşıyor",
    ),
    ("Deniz's brother Emre is allergic to peanuts", "Deniz'in kardeşi Emre'nin yer fıstığı alerjisi var"),
    (
        "Deniz works as a nurse at the children's hospital in Izmir",
        "Deniz İzmir'deki çocuk hastanesinde hemşire olarak çalışıyor",
    ),
    (
        "Emre works as a software engineer at a bank in Istanbul",
        "Emre İstanbul'da bir bankada yazılım mühendisi olarak çalışıyor",
    ),
    ("Deniz moved from Ankara to Izmir in 2021", "Deniz 2021'de Ankara'dan İzmir'e taşındı"),
    ("Emre bought a flat in Kadıköy last spring", "Emre geçen bahar Kadıköy'de bir daire satın aldı"),
    (
        "Deniz runs along the seafront every morning before her shift",
        "Deniz her sabah vardiyasından önce sahil boyunca koşuyor",
    ),
    (
        "Emre plays basketball with colleagues on Thursday evenings",
        "Emre perşembe akşamları iş arkadaşlarıyla basketbol oynuyor",
    ),
    ("Deniz's daughter Elif starts primary school in September", "Deniz'in kızı Elif eylülde ilkokula başlıyor"),
    ("Elif loves drawing cats and horses", "Elif kedi ve at çizmeyi çok seviyor"),
    (
        "Deniz's husband Mert is a chef at a fish restaurant in Alsancak",
        "Deniz'in kocası Mert Alsancak'ta bir balık restoranında aşçı",
    ),
    ("Mert is learning to bake sourdough bread at home", "Mert evde ekşi mayalı ekmek yapmayı öğreniyor"),
    (
        "Deniz went to Cappadocia for a balloon ride in May 2023",
        "Deniz Mayıs 2023'te balon turu için Kapadokya'ya gitti",
    ),
    ("Emre went skiing in Uludağ in February 2024", "Emre Şubat 2024'te Uludağ'da kayak yaptı"),
    ("Deniz and Mert spent their honeymoon in Rome", "Deniz ile Mert balayılarını Roma'da geçirdi"),
    (
        "Deniz plans a trip to Japan next April to see the cherry blossoms",
        "Deniz kiraz çiçeklerini görmek için önümüzdeki nisan Japonya'ya gitmeyi planlıyor",
    ),
    ("Deniz prefers tea without sugar", "Deniz çayını şekersiz içmeyi tercih ediyor"),
    ("Emre drinks three cups of coffee a day", "Emre günde üç fincan kahve içiyor"),
    ("Deniz is reading a novel by Orhan Pamuk", "Deniz Orhan Pamuk'un bir romanını okuyor"),
    ("Emre listens to jazz while he codes", "Emre kod yazarken caz dinliyor"),
    ("Deniz's car is a blue Fiat Egea", "Deniz'in arabası mavi bir Fiat Egea"),
    ("Emre sold his motorbike to pay for the flat", "Emre daireyi ödemek için motosikletini sattı"),
    ("Deniz's birthday is on 14 March", "Deniz'in doğum günü 14 Mart'ta"),
    ("Emre's birthday is on 2 November", "Emre'nin doğum günü 2 Kasım'da"),
    (
        "Deniz volunteers at an animal shelter on Sundays",
        "Deniz pazar günleri bir hayvan barınağında gönüllü çalışıyor",
    ),
    ("Deniz adopted a grey cat named Pamuk from the shelter", "Deniz barınaktan Pamuk adında gri bir kedi sahiplendi"),
    (
        "Emre is afraid of flying and takes the train when he can",
        "Emre uçaktan korkuyor ve mümkün olduğunca trenle seyahat ediyor",
    ),
    (
        "Deniz wants to study for a master's degree in public health",
        "Deniz halk sağlığı alanında yüksek lisans yapmak istiyor",
    ),
    (
        "Emre's team moved the bank's payment service to Kubernetes",
        "Emre'nin ekibi bankanın ödeme servisini Kubernetes'e taşıdı",
    ),
    ("Deniz broke her wrist while skating in December", "Deniz aralıkta paten kayarken bileğini kırdı"),
    (
        "Mert's mother lives in Bursa and visits every summer",
        "Mert'in annesi Bursa'da yaşıyor ve her yaz ziyarete geliyor",
    ),
    ("Deniz speaks English and a little German", "Deniz İngilizce ve biraz Almanca konuşuyor"),
]

#: (English question, Turkish question, indexes of the memories that answer it)
QUESTIONS = [
    ("What is Deniz allergic to?", "Deniz'in neye alerjisi var?", [0]),
    ("Which food allergy does Emre have?", "Emre'nin hangi yiyeceğe alerjisi var?", [1]),
    ("Where does Deniz work?", "Deniz nerede çalışıyor?", [2]),
    ("What is Emre's job?", "Emre'nin mesleği ne?", [3]),
    ("When did Deniz move to Izmir?", "Deniz İzmir'e ne zaman taşındı?", [4]),
    ("Where did Emre buy a home?", "Emre nereden ev aldı?", [5, 21]),
    ("What sport does Deniz do in the mornings?", "Deniz sabahları hangi sporu yapıyor?", [6]),
    ("What does Emre do on Thursday evenings?", "Emre perşembe akşamları ne yapıyor?", [7]),
    ("When does Elif start school?", "Elif okula ne zaman başlıyor?", [8]),
    ("What does Elif like to draw?", "Elif ne çizmeyi seviyor?", [9]),
    ("What does Mert do for a living?", "Mert ne iş yapıyor?", [10]),
    ("What is Mert learning to make?", "Mert ne yapmayı öğreniyor?", [11]),
    ("Where did Deniz take a hot air balloon ride?", "Deniz nerede balon turuna çıktı?", [12]),
    ("Where did Emre go skiing?", "Emre nerede kayak yaptı?", [13]),
    ("Where was the honeymoon?", "Balayı nerede geçti?", [14]),
    (
        "Which country does Deniz want to visit next spring?",
        "Deniz önümüzdeki bahar hangi ülkeyi ziyaret etmek istiyor?",
        [15],
    ),
    ("How does Deniz take her tea?", "Deniz çayını nasıl içiyor?", [16]),
    ("How much coffee does Emre drink?", "Emre ne kadar kahve içiyor?", [17]),
    ("What book is Deniz reading?", "Deniz hangi kitabı okuyor?", [18]),
    ("What music does Emre listen to?", "Emre hangi müziği dinliyor?", [19]),
    ("What car does Deniz drive?", "Deniz hangi arabayı kullanıyor?", [20]),
    ("When is Deniz's birthday?", "Deniz'in doğum günü ne zaman?", [22]),
    ("What is the name of Deniz's cat?", "Deniz'in kedisinin adı ne?", [25]),
    ("What does Deniz do on Sundays?", "Deniz pazar günleri ne yapıyor?", [24]),
    ("Why does Emre avoid planes?", "Emre neden uçaktan kaçınıyor?", [26]),
    ("What does Deniz want to study?", "Deniz ne okumak istiyor?", [27]),
    ("What did Emre's team migrate to Kubernetes?", "Emre'nin ekibi Kubernetes'e neyi taşıdı?", [28]),
    ("How did Deniz get injured in winter?", "Deniz kışın nasıl yaralandı?", [29]),
    ("Who visits from Bursa every summer?", "Her yaz Bursa'dan kim ziyarete geliyor?", [30]),
    ("Which languages does Deniz speak?", "Deniz hangi dilleri konuşuyor?", [31]),
]
K = 5


def within_005(recalls: dict[int, float]) -> bool:
    """Whether the two recalls are at most 0.05 apart, counted exactly: one question in twenty is 0.05, and a
    float subtraction makes it 0.050000000000000044."""
    return round(abs(recalls[0] - recalls[1]), 9) <= 0.05


def recall_at_k(ranked: list[list[int]]) -> float:
    return float(
        np.mean([len(set(r[:K]) & set(ev)) / len(ev) for r, (_, _, ev) in zip(ranked, QUESTIONS, strict=True)])
    )


@pytest.fixture(scope="module")
def embedder():
    from reverie.config.core import EmbeddingSettings
    from reverie.embed import make_provider

    return make_provider(EmbeddingSettings())  # the default local model


def test_the_suite_is_consistent() -> None:
    assert all(0 <= i < len(MEMORIES) for _, _, ev in QUESTIONS for i in ev)
    assert len({en for en, _ in MEMORIES}) == len({tr for _, tr in MEMORIES}) == len(MEMORIES)


def test_dense_recall_in_turkish_is_within_005_of_english(embedder) -> None:
    from reverie.embed import embed_queries

    recalls = {}
    for lang in (0, 1):
        passages = embedder.embed([m[lang] for m in MEMORIES])
        queries = embed_queries(embedder, [(en, tr)[lang] for en, tr, _ in QUESTIONS])
        recalls[lang] = recall_at_k([list(np.argsort(-(passages @ q))) for q in queries])
    assert recalls[0] >= 0.9, recalls
    assert within_005(recalls), recalls


def test_search_recall_in_turkish_is_within_005_of_english(embedder, tmp_path: Path) -> None:
    from reverie import Memory, SettableClock
    from reverie.embed import CachedEmbedder

    recalls = {}
    for lang in (0, 1):
        clock = SettableClock(datetime(2025, 3, 1, tzinfo=UTC))
        with Memory(
            tmp_path / f"m{lang}.db",
            config={"opslog": {"enabled": False}, "dream": {"schedule": {"tick_every": 0}}},
            clock=clock,
            embedder=CachedEmbedder(embedder, clock=clock),
        ) as m:
            ids = [r.id for r in m.add_many([mem[lang] for mem in MEMORIES], user_id="u", infer=False)]
            position = {mid: i for i, mid in enumerate(ids)}
            ranked = [[position[h.memory.id] for h in m.search(q[lang], user_id="u", k=K)] for q in QUESTIONS]
        recalls[lang] = recall_at_k(ranked)
    assert recalls[0] >= 0.9, recalls
    assert within_005(recalls), recalls
