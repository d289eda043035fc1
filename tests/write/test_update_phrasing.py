"""Classes of everyday phrasing the update reading (reverie.text.updates) reads as an update, each with its own
sentences (not the suite's): numbers said in words, a change said in a clause joined by a semicolon, a
relationship status, what someone works as, a value told apart by its modifier, a preference come round to, a
thing that closed or was finished, a habit no longer kept, a Turkish object given away, a Turkish move to a
time — and the compatible statements each class must leave alone."""

from __future__ import annotations

import pytest

from reverie.text import updates
from reverie.text.updates.values import spelled_number


@pytest.mark.parametrize(
    ("text", "turkish", "expected"),
    [
        ("down to eighty seven kilos", False, (87.0, 4, "")),
        ("one hundred and twenty people", False, (120.0, 4, "")),
        ("sabah sekiz buçukta kalkıyorum", True, (8.5, 3, "ta")),
        ("akşam dokuzda yatıyorum", True, (9.0, 2, "da")),
        ("kilom yetmiş üçe indi", True, (73.0, 3, "e")),
        ("on iki kişi geldi", True, (12.0, 2, "")),
    ],
)
def test_numbers_said_in_words(text: str, turkish: bool, expected: tuple[float, int, str]) -> None:
    words = text.split()
    found = next(x for x in (spelled_number(words, i, turkish) for i in range(len(words))) if x is not None)
    assert found == expected


def test_words_that_only_look_like_numbers_are_none() -> None:
    assert all(spelled_number(w.split(), 0, False) is None for w in ("bin bags", "on time", "one day", "ninety"))
    assert spelled_number(["bir", "kedi"], 0, True) is None  # "bir" alone is "a"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # numbers said in words, English compounds and Turkish clock times and counts
        ("I weigh ninety-two kilos.", "Down to eighty-seven kilos after a month of cycling."),
        ("Sabahları beşte kalkıyorum.", "Bu aralar sekiz buçukta kalkıyorum."),
        ("Üç çocuğumuz var.", "Geçen ay ikizler doğdu, artık beş çocuğumuz var."),
        # a change said in one clause of a sentence joined by a semicolon holds for the other
        ("Our internet costs 25 euros a month.", "The provider raised prices; we pay 31 euros a month."),
        # a relationship status: one at a time
        ("My brother is single.", "My brother got engaged in June."),
        ("Nişanlıyım.", "Geçen ay evlendim."),
        ("I'm engaged to Tom.", "Tom and I got married in Lisbon!"),
        # what someone works as
        ("My sister works as a pharmacist.", "My sister retrained and works as a teacher now."),
        # a value told apart by the word before it, where a change goes
        ("I'm in the evening class.", "I transferred to the morning class."),
        # a preference come round to
        ("I prefer the top bunk.", "I've come round to the bottom bunk."),
        # a thing that closed, a book or a series finished
        ("We buy bread at the bakery on Elm Street.", "The bakery closed, so we get bread from the supermarket now."),
        ("I'm watching Severance.", "Finished Severance; started Slow Horses last night."),
        # a habit no longer kept, said with a negation
        ("I do yoga on Tuesdays.", "I'm not doing yoga any more, my back hurts."),
        ("Her sabah yüzmeye gidiyorum.", "Artık yüzmeye gitmiyorum, dizim ağrıyor."),
        ("Cumartesileri pilatese gidiyorum.", "Pilatese artık gitmiyorum, hafta sonu yürüyorum."),
        # a Turkish object given away, with a dative between it and the verb
        ("Bisikletim Bianchi.", "Bianchi'yi yeğenime verdim, yeni bir Trek aldım."),
        # a Turkish move to a time
        ("Piyano dersi perşembe akşamları.", "Piyano dersini cuma akşamına aldık."),
        # a Turkish object let go, with a time between it and the verb
        ("Sigara içiyorum.", "Sigarayı üç ay önce bıraktım."),
        # what the speaker was wrong about is taken back
        ("I'm allergic to penicillin.", "I was wrong about penicillin, the test came back negative."),
        ("Bahar vegan.", "Bahar konusunda yanılmışım, vegan değil vejetaryen."),
        # the Turkish noun before its verb, by its case, is the value of the verb's slot
        ("Oğlum kreşe gidiyor.", "Oğlum bu eylül anaokuluna başladı."),
        # "instead of X" lets go of X, a plain word too
        ("I play squash on Fridays.", "I took up badminton instead of squash."),
        # a thing written off or stolen is gone
        ("My bike is a Brompton.", "Bought a Tern after the Brompton was stolen."),
        # a new state from a coming time on
        ("Choir is on Tuesdays.", "Choir is on Thursdays from next month."),
        # clock times and counts in words
        ("The baby naps at one.", "The baby naps at quarter past two now."),
        ("We have four chickens.", "We're up to two dozen chickens now."),
        # a relationship ended
        ("I'm dating Alex.", "Alex and I split up last month."),
        # a Turkish day at the start of a clause is when, not who
        ("Cuma günleri yoga var.", "Yoga artık salı günleri."),
        # Turkish "zam" with its case ending, "oldu" (became)
        ("Kiram 20 bin lira.", "Zamla kiram 26 bin oldu."),
        # a Turkish verb no longer done
        ("Sabahları yüzüyorum.", "Omzum yüzünden artık yüzmüyorum."),
        # a job taken elsewhere; a place that repeats the replaced name is no other occasion
        ("I work at the Bristol office.", "I took a job at the Cardiff office."),
        # what a Turkish nominal sentence says someone is, and what they became
        ("Annem hemşire.", "Annem geçen yıl başhemşire oldu."),
        # a dose upped, a choice settled on, a standing plan called off, once and twice
        ("I take 20mg of citalopram.", "The GP upped my citalopram to 30mg."),
        ("We're flying to Rome in May.", "We settled on Naples for May instead."),
        ("We play poker every Thursday.", "Thursday poker is off; we play on Mondays now."),
        ("I swim twice a week.", "I swim once a week these days."),
        ("Vitaminimi günde iki kez alıyorum.", "Artık günde bir kez alıyorum."),
        # a new address (an attribute of where someone lives; "new" tells no other address apart)
        ("Our address is 22 Elm Road.", "Our new address is 9 Bay Street."),
        ("İş adresim Levent.", "Yeni iş adresim Maslak."),
        # what closed is the noun before the place ("on Mill Road")
        ("We eat at the Italian place on Mill Road.", "The Italian place on Mill Road closed, so we cook at home."),
        # the speaker's own thing the old statement is about, let go by name
        ("Spotify üyeliğim var.", "Spotify'ı iptal ettim, artık radyo dinliyorum."),
        # an amount in thousands ("45k") is of one kind with another, not a distance
        ("I earn 38k a year.", "Got a pay rise, I'm on 45k now."),
        # a ratio is one value, let go whole
        ("I do the 5:2 diet.", "I dropped the 5:2 diet."),
        ("I follow the 5:2 diet.", "I switched to 16:8 fasting."),
        # "left" lets go of what one belongs to
        ("I'm a member of the climbing club.", "I left the climbing club."),
        ("I work at the bank.", "I left my job at the bank."),
        ("I sing in the church choir.", "I left the choir in May."),
        # a move out said without where to
        ("My brother lives with our parents.", "My brother got his own place."),
        ("My brother still lives at home with Mum.", "My brother finally got a place of his own."),
        ("Ailemle birlikte oturuyorum.", "Kendi evime çıktım, artık Beşiktaş'tayım."),
        # what a diet or an abstention excludes, taken up
        ("I'm vegetarian.", "I started eating chicken again."),
        ("I'm teetotal.", "I've started having the odd glass of wine again."),
        ("Vejetaryenim.", "Tekrar tavuk yemeye başladım."),
        # one name with another number: a school year moved on
        ("My son is in Year 3.", "My son is in Year 4 now."),
        # a thing given away, a habit packed in, an account shut, a lesson shifted
        ("I have a season ticket at Anfield.", "Gave my season ticket to my nephew; I watch at the pub now."),
        ("I play five-a-side on Tuesdays.", "I packed in five-a-side; Tuesdays are for pottery now."),
        ("We bank with Barclays.", "We shut the Barclays account and everything is with Nationwide now."),
        ("The kids' swimming lessons are at 5:30.", "Swimming lessons got shifted to 4:45."),
        # Turkish: settled somewhere ("yerleşti"; "sonunda" is no one), with / without ("-li" / "-siz")
        ("Sevgilim Ankara'da yaşıyor.", "Sevgilim sonunda İstanbul'a yerleşti."),
        ("Kahvemi şekerli içerim.", "Kahveyi artık şekersiz içiyorum."),
    ],
)
def test_everyday_phrasing_reads_as_an_update(old: str, new: str) -> None:
    verdict = updates.judge(old, new)
    assert verdict.updates, verdict


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("I'm single.", "My sister got married in May."),
        ("I work as a nurse at St Mary's.", "My brother works as a teacher."),
        ("I study at the library.", "I study at the public library on Sundays too."),
        ("I'm in the evening class.", "My daughter is in the morning class."),
        ("I go to bed at eleven.", "We moved the kids' bedtime to eight."),
        ("Geceleri on birde yatıyorum.", "Çocukların yatma saatini dokuza aldık."),
        ("Yüzmeye gidiyorum.", "Artık kahve içmiyorum."),
        ("The bakery on Elm Street sells rye bread.", "The bakery closed early on Sunday."),
        ("I bought a blue sofa.", "I'm reading Dune and finished the first part."),
        ("Kızım anaokuluna gidiyor.", "Oğlum bu yıl ilkokula başladı."),
        ("Cumartesi pilatese gidiyorum.", "Pazar günü yüzmeye gidiyorum."),
        ("I was wrong about the weather.", "I live in Leeds."),
        ("I play tennis on Sundays.", "My son plays football instead of rugby."),
        ("Doğum günüm 5 Mart'ta.", "Dün kardeşimin doğum günü oldu."),
        ("Choir is on Tuesdays.", "Book club moves to Thursdays from next month."),
        ("We have four chickens.", "The neighbours have two dozen chickens."),
        ("Annem emekli.", "Babam geçen ay emekli oldu."),
        ("Eşim öğretmen.", "Eşimin kardeşi doktor."),
        ("I work at the Bristol office.", "My brother took a job at the Cardiff office."),
        ("Kiram 20 bin lira.", "Aidat 2 bin lira oldu."),
        ("Our rent is 900 a month.", "The landlord upped the service charge to 120."),
        ("I go to the gym twice a week.", "I call my mum once a week."),
        ("We live at 14 Oak Lane.", "My parents' new address is 3 Mill Court."),
        ("I ordered a blue sofa from IKEA.", "We moved the sofa closer to the window."),
        # a value let go by someone else is theirs; what closed is the noun before the place; a correction of
        # something else
        ("I'm reading Dune.", "My son finished Dune last night."),
        ("Haftada üç gün spor salonuna gidiyorum.", "Kardeşim artık spor salonuna gitmiyor."),
        ("We go to the Italian place on Mill Road.", "The bakery on Mill Road closed."),
        ("I pay 30 pounds for the gym.", "I was wrong about the parking fee, it's 5 pounds."),
        # "moving" said of a thing; another's amount, another's ratio; a thing left somewhere; another's move out,
        # another's diet; another child's school year; another's salary (a Turkish genitive of a person)
        ("I live in Leeds.", "We watched a moving documentary about the old Leeds mills."),
        ("I live in Leeds.", "The moving parts of my bike need oil."),
        ("I earn 38k a year.", "My partner earns 45k a year."),
        ("I follow the 5:2 diet.", "My husband does 16:8 intermittent fasting."),
        ("I work at the office on Tuesdays.", "I left my umbrella at the office yesterday."),
        ("I live with my parents.", "My sister got her own place."),
        ("I'm vegetarian.", "My son started eating chicken again."),
        ("I'm pescatarian.", "I eat fish every Friday now."),
        ("My son is in Year 3.", "My daughter is in Year 4 now."),
        ("Maaşım 40 bin lira.", "Eşimin maaşı 55 bin lira."),
        ("Çorbayı tuzlu severim.", "Ayşe tuzsuz yemek pişirdi."),
    ],
)
def test_compatible_statements_stay_apart(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not verdict.updates, verdict


def test_moving_said_of_a_thing_is_no_change() -> None:
    for text in ("We watched a moving film.", "Moving parts wear out.", "I found the talks moving."):
        clause = updates.analyse(text).clauses[0]
        assert not clause.change and "residence" not in clause.families, text
    for text in ("We're moving to York.", "Moving out next week.", "We are moving the meeting to Friday."):
        assert updates.analyse(text).clauses[0].change, text


def test_numbers_with_k_and_ratios_are_one_value() -> None:
    def values(text: str) -> list[tuple[str, str]]:
        return [(v.kind, v.norm) for c in updates.analyse(text).clauses for v in c.values]

    assert values("I earn 45k a year.") == [("number", "#45000@thousand")]  # never kilometres
    assert ("number", "#10@km") in values("I ran 10 km.")
    assert values("I follow the 5:2 diet.") == [("number", "#5:2@ratio")]  # not cut at the colon
    assert ("number", "#3:1@ratio") in values("We won 3-1 on Saturday.")
    assert values("I get up at 7:30.") == [("time", "7:30")]  # a clock time stays a time
    assert ("code", "5551234") in values("Call 555-1234.")


def test_a_subject_the_speaker_is_part_of_is_the_speaker() -> None:
    assert updates.analyse("Tom and I moved to Leeds in May.").clauses[0].subject == ("self",)
    assert updates.analyse("My wife and I sold the flat.").clauses[0].subject == ("self",)
    assert updates.analyse("Tom and Ana moved to Leeds.").clauses[0].subject != ("self",)


def test_a_semicolon_joins_clauses_of_one_sentence() -> None:
    st = updates.analyse("The landlord raised the rent; we pay 900 now.")
    assert len(st.clauses) == 2 and all("raised" in c.change for c in st.clauses)


def test_cheap_change_test_finds_the_new_cues() -> None:
    for text in (
        "Piyano dersini cuma akşamına aldık.",
        "The bakery closed, so we get bread elsewhere.",
        "Finished Severance last night.",
        "Artık yüzmeye gitmiyorum.",
        "I've come round to the bottom bunk.",
        "I was mistaken about the venue.",
        "Bahar konusunda yanılmışım.",
    ):
        assert updates.may_say_change(text) and updates.says_change(text), text


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "My favourite pizza place is Luigi's.",
            "My favourite pizza place these days is the one at the station.",
        ),
        ("I prefer the window seat on long flights.", "These days I always pick the aisle on long flights."),
    ],
)
def test_a_change_whose_values_are_not_aligned_updates_when_close_in_meaning(old: str, new: str) -> None:
    """The same subject and attribute, a change said, but values the reading cannot align: the embedder decides,
    from the similarity at which a change statement is read against what it replaces (the gate's change_min)."""
    verdict = updates.judge(old, new)
    assert not verdict.updates and verdict.unaligned, verdict
    assert updates.unaligned_update(verdict, 0.90, 0.86).updates
    assert "similar by meaning" in updates.unaligned_update(verdict, 0.90, 0.86).reason
    assert not updates.unaligned_update(verdict, 0.80, 0.86).updates


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("My favourite pizza place is Luigi's.", "My sister's favourite pizza place is now Dough Bros."),
        ("I prefer the window seat on long flights.", "I also like an aisle seat on short flights."),
        ("I live in Leeds.", "I went to a concert in York last night."),
        ("My sister lives in Leeds.", "My sister's new flat has a balcony."),
        (  # detail added, every value kept: an elaboration ("moving" is no change here)
            "Yesterday Caroline went to the support group in Lisbon.",
            "Yesterday Caroline went to the support group in Lisbon and found the talks moving.",
        ),
    ],
)
def test_compatible_statements_are_not_unaligned_changes(a: str, b: str) -> None:
    verdict = updates.judge(a, b)
    assert not verdict.updates and not updates.unaligned_update(verdict, 0.99, 0.86).updates, verdict
