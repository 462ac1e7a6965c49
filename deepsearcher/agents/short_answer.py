"""The one-line short answer every report carries.

The report prompt asks for a first line ``Answer: <short answer>`` and then the report; ``split_short_answer`` takes
that line out of the report (the model's own wording, so a name stays a name; a model that puts it last is
understood too). A model that writes no such line gets the report's first sentence instead (``first_sentence``).
``short_answer_of`` first takes out what the model copied from its prompt (``echoes``) and what says nothing
(``filler``); ``without_empty_opening`` and ``option_named`` then make the short answer say something, and
``answer_span`` cuts one that tells the question again to its answer.
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from deepsearcher.agents.citations import folded, strip_citations
from deepsearcher.agents.echoes import (ANSWER_LINE, ASKED_LABEL, EXPLANATION_LINE, LABEL_PREFIX, strip_echoed_sources,
                                        strip_leaked_label, without_echoes, without_prompt_rules)
from deepsearcher.agents.filler import (ANCHORS, FUNCTION_WORDS, LIST_MARKER, content_words, quoted_answer,
                                        without_repeated_lines, without_repeated_sentences, without_support_claims)
from deepsearcher.agents.dedup_rules import inflected
from deepsearcher.agents.rewrites import ABOUT_ANSWER, sentences
from deepsearcher.agents.scaffold import detect
from deepsearcher.types import Chunk


#: longest short answer kept (a sentence); longer ones are cut at a word
MAX_CHARS = 300
#: a short answer that only names the kind of answer the prompt asked for ("Yes/no", "a name", "One short
#: sentence"): the 0.5B model answered a yes/no question with "Yes/no"
_ANSWER_KIND = r"(?:an?\s+)?(?:name|date|number|yes\s*/\s*no|yes\s+or\s+no|(?:one\s+)?short\s+sentence|short\s+answer)"
_KIND_ONLY = re.compile(rf"^\s*{_ANSWER_KIND}(?:\s*(?:,\s*(?:or\s+)?|or\s+){_ANSWER_KIND})*\s*[.!]?\s*$",
                        re.IGNORECASE)


def names_the_answer_kind(short: str) -> bool:
    """True for a short answer that only repeats the prompt's words for the kind of answer ("Yes/no")."""
    return bool(_KIND_ONLY.match(short))


def only_citations(text: str) -> bool:
    """The reply holds source numbers and nothing else ("[1][2][4]", "Answer: [1][3]"): what Qwen2.5-Coder-0.5B
    wrote for a third to a half of multi-hop questions when the report prompt put its rules first (docs/benchmarks.md,
    answers vs the reference). Such a reply answers nothing."""
    body = strip_citations(strip_leaked_label(text.strip()))
    return bool(text.strip()) and body != text.strip() and not re.search(r"\w", body)


def clean(answer: str) -> str:
    """A short answer as one plain line: citations, Markdown emphasis, labels, wrapping quotes and square brackets
    around its opening words (``_unbracketed``) removed, cut to ``MAX_CHARS`` at a word."""
    line = " ".join(strip_citations(_unbracketed(strip_leaked_label(answer).strip(" *_"))).split())
    line = re.sub(r"\s+([.,;:!?。，；：！？、])", r"\1", re.sub(r"(\*\*|__|`)", "", line)).strip(" *_\"'“”").strip()
    line = re.sub(r"([,;])(?:\s*[,;])+", r"\1", line)  # "Lilu, [1], 2026" without its citation: one comma
    line = re.sub(r"^(?:[,;:：]+\s*|[-–—]+\s+)", "", line)  # "[3]: Paris" without its citation; "-5 °C" stays
    if len(line) > MAX_CHARS:
        line = line[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    return line if re.search(r"\w", line) else ""  # "[1][2]." without its citations says nothing


#: answer text a model wrapped in square brackets at the start of its line, one group or several ("[Christopher
#: Nolan, Sathish Kalathil] are film directors.", "[Christ Walking On The Water][45 Fathers]": Qwen2.5-Coder-0.5B on
#: HotpotQA and 2Wiki, 9 stored short answers); not a link's text ("[docs](https://…)")
_BRACKETED = re.compile(r"^(?:\[[^\[\]\n]*[^\W\d_][^\[\]\n]*\](?!\())+")


def _unbracketed(line: str) -> str:
    """``line`` without the square brackets around answer text at its start (``_BRACKETED``: a group holding a
    letter, so a citation "[2]" after it is left to ``strip_citations``), adjacent groups joined with "; "."""
    match = _BRACKETED.match(line)
    if match is None:
        return line
    groups = [g.strip() for g in re.findall(r"\[([^\[\]]*)\]", match.group())]
    return "; ".join(groups) + line[match.end():]


def split_short_answer(text: str) -> tuple[str, str]:
    """``(report without its short-answer line, the short answer)``.

    The short answer is the first non-empty line when it has the ``Answer:`` form (any label wording and Markdown
    dress), else the last one when it has (models put it at either end); otherwise ``""`` and the text unchanged.
    An Answer line of several sentences gives its first as the short answer and stays in the report, unlabelled
    (the bundled 1.5B model's Answer line for the README's second example was its whole report, cut at 300
    characters; 180 of 851 stored short answers held several sentences).
    A reply that is only that line keeps it (unlabelled) as the report. A list item is no Answer line when the
    nearest line beside it is a list item with a label of its own ("- question: …" then "- answer: the report": a
    list of fields' last entry); beside the prompt's labels ("- **Explanation:** …", "Sources:") it is.
    """
    lines = text.strip().split("\n")
    for index in (0, len(lines) - 1):
        match = ANSWER_LINE.match(lines[index])
        short = clean(match.group("answer")) if match else ""
        if match is None or not short:
            continue
        beside = next((line for line in (lines[1:] if index == 0 else reversed(lines[:index])) if line.strip()), "")
        if LIST_MARKER.match(lines[index]) and _field_item(beside):
            continue
        if index == 0 and len(lines) > 1 and not ASKED_LABEL.match(lines[0]):
            continue  # "A short direct answer: …" opens the report: its label is stripped, the text kept
        rest = lines[index + 1:] if index == 0 else lines[:index]
        report = "\n".join(rest).strip()
        said = match.group("answer").strip(" *_")
        parts = sentences(short)
        if len(parts) > 1:  # a paragraph as the Answer line: its first sentence answers, the paragraph is report
            short = clean(parts[0])
            report = "\n\n".join(p for p in ((said, report) if index == 0 else (report, said)) if p)
        # a reply that is nothing but the Answer line: that line, without its label, is the report too
        return report or said, short
    return text, ""


#: a list item that opens with a label ("- question: …", "1. **Status:** …")
_FIELD_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+[*_`]*(?P<label>[^:：\n*_`]{1,40}?)[*_`]*\s*[:：]")


def _field_item(line: str) -> bool:
    """``line`` is a list item labelled with a word of its own, not one of the prompt's ("Explanation", "Sources")."""
    match = _FIELD_ITEM.match(line)
    if match is None:
        return False
    label = match["label"]
    return not LABEL_PREFIX.match(label + ":") and label.strip().casefold() not in {"source", "sources", "citation",
                                                                                    "citations", "references"}


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph that is prose (not a heading, list or table), as a short answer; the
    answer it quotes when it is only a verdict on that answer (``filler.quoted_answer``)."""
    prose = first_paragraph_prose(text)
    if not prose:
        return ""
    first = sentences(prose)[0]
    return clean(quoted_answer(first) or first)


#: a question whose answer its own words can make: it names things to choose from ("… A or B?", "A vs B?", "… of A
#: and B?", a list after a colon, a comma or a dash: "Which level is the default: Strong, Bounded, Session?", "—
#: FLAT?"), quotes a word ("the past tense of 'read'") or asks yes or no ("Is Milvus open source?", "Milvus Lite
#: supports macOS, right?", "Quick question: does it …?")
_ANSWER_IN_ITS_WORDS = re.compile(r"\b(?:or|and|vs|versus)\b|[,:;—–]|\s-\s|\"[^\"]+\"|“[^”]+”|«[^»]+»|「[^」]+」|"
                                  r"(?<!\w)['‘][^'’]+['’](?!\w)|^\W*(?:is|are|was|were|do|"
                                  r"does|did|can|could|has|have|had|will|would|should|shall|may|might|must)\b",
                                  re.IGNORECASE)


#: a question asking for something not in its own words (what, which, who …): says_nothing judges only these
_WH_QUESTION = re.compile(r"\b(?:what|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)


def _judged(question: str) -> bool:
    """``question`` is one whose answer cannot be made of its own words (``_ANSWER_IN_ITS_WORDS``): an English
    wh-question — their words and ours are what ``says_nothing`` and ``names_the_subject`` know."""
    return not _ANSWER_IN_ITS_WORDS.search(question) and _english_wh(question)


def _english_wh(question: str) -> bool:
    """``question`` is an English wh-question."""
    question = question.strip()
    return bool(_WH_QUESTION.search(question)) and detect(question) == "en"


def says_nothing(sentence: str, question: str) -> bool:
    """``sentence`` adds nothing to ``question``: every word of it that can say something (``content_words``; numbers
    count) is the question's or about the answer and its sources. "The book named after the artist known as the
    most remarkable creation of MTV is [4].", "The information provided in source [1] directly answers the question
    about the church of Meehan Bonnar's birthplace.", "WILM (AM)" for "… the city where WILM is licensed …?" — short
    answers of Qwen2.5-Coder-0.5B on MuSiQue. Questions whose answer can be made of their own words
    (``_ANSWER_IN_ITS_WORDS``) are left alone."""
    if not _judged(question):
        return False
    mine, asked = content_words(sentence), content_words(question)
    # words about the answer count as nothing only where it speaks of the answer ("Relevant passages" may answer)
    return bool(mine) and (mine <= asked or (bool(mine & ANCHORS) and mine <= asked | ABOUT_ANSWER))


def short_answer_of(text: str, shown: Sequence[Chunk | None] | None = None) -> tuple[str, str]:
    """``(report, short answer)`` from a model's report text: the ``Answer:`` line taken out, else the first
    sentence; the report's leaked label at the start removed. ``shown``: the sources the prompt showed, in its order
    (``strip_echoed_sources``)."""
    cleaned = without_repeated_sentences(without_repeated_lines(without_support_claims(strip_echoed_sources(
        without_prompt_rules(text), shown))))
    report, short = split_short_answer(cleaned)
    report = EXPLANATION_LINE.sub(r"\1", strip_leaked_label(without_repeated_sentences(report).strip()))
    if names_the_answer_kind(strip_citations(report)):
        report = ""  # "[1][2][3] Yes/no" answers nothing
    if short and report:  # "Answer: X" then a line of source numbers only: they cite X, so the report says X [n]
        first, _, rest = report.partition("\n")
        if only_citations(first):
            report = f"{short} {first.strip()}" + (f"\n{rest}" if rest else "")
    short = short or first_sentence(report)
    return report, "" if names_the_answer_kind(short) else short


#: the two options a question offers at its end: "Which film was released first, Aas Ka Panchhi or Phoolwari?"
_OPTIONS = re.compile(r"[,:;]\s*(?P<a>[^,:;?]{1,80}?)\s+or\s+(?P<b>[^,:;?]{1,80}?)\s*[?？]\s*$", re.IGNORECASE)
#: words that can turn an answer naming one option against it, or leave it open ("not", "unclear whether", "only
#: mention", a question mark)
_CONTRARY_WORDS = ("not|never|neither|nor|no|none|unclear|unknown|uncertain|whether|only|mentions?|mentioned|cannot|"
                   "may|might|could")
_CONTRARY = re.compile(rf"\b(?:{_CONTRARY_WORDS})\b|n't\b|[?？]", re.IGNORECASE)


#: words of order and degree, by the side they point to: an answer naming one option with a word of another side
#: than the question's ("first" asked, "A was released later" said) may mean the other option
_ORDER_SIDES = tuple(frozenset(group.split()) for group in (
    "first earliest before prior earlier older oldest previously",
    "second third last latest after later subsequently younger youngest newer newest",
    "more most longer longest bigger biggest larger largest taller tallest higher highest greater greatest heavier "
    "heaviest faster fastest farther farthest further furthest",
    "less least fewer fewest shorter shortest smaller smallest lower lowest lighter lightest slower slowest closer "
    "closest"))


def _order_sides(words_of: set[str]) -> set[int]:
    return {i for i, side in enumerate(_ORDER_SIDES) if words_of & side}


def option_named(short: str, question: str) -> str:
    """The option ``short`` names, when ``question`` ends by offering two and no more ("…, A or B?") and ``short``
    names exactly one of them (whole words, any case) with only the question's words around it ("Phoolwari was
    released first.") or as the opening of a source's line about it ("God's Gift to Women (1931 American … film)",
    a source's first sentence the model gave as its answer), and no word near it (``OPTION_CONTEXT`` words each side)
    that can turn it against that option or leave it open (``_CONTRARY``) or of order or degree pointing another way
    than the question's (``_ORDER_SIDES``); the words as ``short`` writes them. Otherwise ``short`` as it is: "Aas Ka
    Panchhi was released later." or "… was preceded by the other film" names the option it does not mean. Measured
    on 2WikiMultihopQA with Qwen2.5-Coder-0.5B: 15 of the 56 stored short answers to such questions named one option
    inside a longer sentence (EM +9 over the stored rows of every dataset)."""
    options = _options(question)
    if options is None or not short:
        return short
    first_option, second_option, named = options
    told_once = " ".join(_without_options_told_again(short, question).split())
    if told_once != " ".join(short.split()):
        chosen = option_named(told_once, question)
        if chosen == told_once:  # no option named: an answer besides them, the question told again around it
            return answer_span(short, question, offered=True)
        return chosen
    found = []
    for option in (first_option, second_option):
        words_of = [re.escape(w) for w in option.split()]
        hit = re.search(r"(?<!\w)" + r"\s+".join(words_of) + r"(?!\w)", short, re.IGNORECASE) if words_of else None
        if hit:
            found.append(hit)
    if len(found) != 1:
        return short
    hit = found[0]
    if named:  # where the first name starts is a guess ("Who won more Grand Slams Federer or Nadal?"): a name of
        # the other option anywhere in the answer leaves it open
        other = second_option if hit.group(0).casefold() == first_option.casefold() else first_option
        if any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", short) for w in other.split() if w[:1].isupper()
               and len(w) >= 3 and w.casefold() not in hit.group(0).casefold().split()):
            return short
    before = " ".join(short[:hit.start()].split()[-OPTION_CONTEXT:])
    after = " ".join(short[hit.end():].split()[:OPTION_CONTEXT])
    near = f"{before} {after}"
    if _CONTRARY.search(near) or _order_sides(content_words(near)) - _order_sides(content_words(question)):
        return short
    # only the question's words around it ("Phoolwari was released first."), or a source's opening line about it
    # ("God's Gift to Women (1931 … film)", "Holm Jølsen (6 December 1833 – …) was a Norwegian …"): other words can
    # say it is not the one ("Aas Ka Panchhi was preceded by the other film", "Phoolwari predates it")
    plain = not content_words(f"{short[:hit.start()]} {short[hit.end():]}") - content_words(question)
    opening = not short[:hit.start()].strip(" *_\"'“”") and _DESCRIBED.match(short[hit.end():]) is not None
    return hit.group(0) if plain or opening else short


#: two names offered at a question's end with no comma before them: "Which band was formed first The Exies or
#: Circus Diablo ?" (HotpotQA); the first is the run of capitalised words (and the small words inside names) before
#: "or", after a word in lower case
_NAME_WORD = r"(?:[A-Z0-9][\w'’.&/-]*)"
_NAME = rf"{_NAME_WORD}(?:\s+(?:(?:of|the|and|de|la|le|von|van|da|del|der)\s+)*{_NAME_WORD})*"
_NAMED_OPTIONS = re.compile(rf"\b[a-z][\w'’]*\s+(?P<a>{_NAME})\s+or\s+(?P<b>{_NAME})\s*[?？]\s*$")
#: the end of a question ``_NAMED_OPTIONS`` reads: two names and the words before them (the pattern tries every
#: word of what it is given, so a long question costs time by the square of its length)
NAMED_OPTIONS_TAIL = 300


#: an option that describes a thing by what it is to another ("the director of Jaws", "his father") rather than
#: naming it ("the Cotula", "The Goose Woman")
_RELATIVE_OPTION = re.compile(r"(?:the|a|an|his|her|their|its|my|our|your)\s+[a-z]")


def unnamed_options(short: str, question: str) -> tuple[str, str] | None:
    """The two options ``question`` offers ("…, A or B?", "… out of A and B?": ``_options``) when ``short`` names
    neither: no word of either (numbers and short words too, function words aside) and no word that says neither or
    leaves it open (``_CONTRARY``: "Neither is mentioned", "unclear"). "John Allen" for "Who was born first out of
    Aivar Kuusmaa and Andy Summers?" (the bundled 1.5B model's short answer in every 2WikiMultiHopQA run): a third
    page's name. None otherwise, and for "yes" or "no", an empty answer, a question offering none, or options that
    describe rather than name (``_RELATIVE_OPTION``: "Who was born first, the director of Jaws or the director of
    Alien?" is answered by a name)."""
    options = _options(question)
    if options is None or not short.strip() or _CONTRARY.search(short) or re.fullmatch(r"\W*yes\W*", short, re.I):
        return None
    if any(_RELATIVE_OPTION.match(option) for option in options[:2]):
        return None  # "… the director of Jaws or the director of Alien?": the answer may be the person's name
    said = content_words(short)
    if any(content_words(option) & said for option in options[:2]):
        return None
    return options[0], options[1]


def _options(question: str) -> tuple[str, str, bool] | None:
    """The two options ``question`` offers at its end, and whether they were named without a comma ("…, A or B?",
    "… out of A and B?", "… between A and B?", or two names: ``_NAMED_OPTIONS``); None for none, or for more than
    two ("…, A, B, C or D?", "… A or B or C?", "… out of A, B and C?")."""
    match = _OPTIONS.search(question)
    if match is not None:
        return None if len(re.findall(r"[,:;]", question)) > 1 else (match["a"], match["b"], False)
    match = _offered_set(question)
    if match is not None:
        # "and" inside either ("… out of Simon and Garfunkel and Hall and Oates?"): which two? A name of the other
        # option in the answer leaves it open, as for two names with no comma ("Shaq … beaten by Yao")
        return None if re.search(r"[,:;]|\band\b", f"{match['a']} {match['b']}") else (match["a"], match["b"], True)
    if re.search(r"[,:;]", question) or len(re.findall(r"\bor\b", question, re.IGNORECASE)) != 1:
        return None
    named = _NAMED_OPTIONS.search(question[-NAMED_OPTIONS_TAIL:])
    return (named["a"], named["b"], True) if named is not None else None


#: two options offered as a set at a question's end: "Who was born first out of Aivar Kuusmaa and Andy Summers?"
#: (2WikiMultihopQA), "… between A and B?"; read only in a question that asks to choose (``_CHOOSES``): "What is the
#: difference between A and B?" offers no option
_OUT_OF = re.compile(r"\b(?:out\s+of|between)\s+(?P<a>[^?？]{1,80}?)\s+and\s+(?P<b>[^?？]{1,80}?)\s*[?？]\s*$",
                     re.IGNORECASE)

_CHOOSES = re.compile(r"\s*(?:which|who|whom|whose)\b", re.IGNORECASE)


def _offered_set(question: str) -> re.Match[str] | None:
    """``_OUT_OF``'s match in a question that asks to choose by order or degree (``_CHOOSES`` and a word of
    ``_ORDER_SIDES``: "Who was born first out of …", "Which is older between …"): "Which relationship exists between
    MariaDB and MySQL?" or "Who is the intermediary between the buyer and the seller?" offer no option (a helper's
    cases, 2026-12-04)."""
    if not _CHOOSES.match(question) or not _order_sides(content_words(question)):
        return None
    return _OUT_OF.search(question)


def _without_options_told_again(short: str, question: str) -> str:
    """``short`` without the question's own offer of its options, when it tells it again word for word ("Aivar
    Kuusmaa was born first out of Aivar Kuusmaa and Andy Summers." → "Aivar Kuusmaa was born first ."): the option
    it names is the one outside that offer."""
    offer = _offered_set(question) or _OPTIONS.search(question)
    if offer is None:
        return short
    told = r"\s+".join(re.escape(w) for w in offer.group(0).strip(" ,:;?？").split())
    return re.sub(rf"(?<!\w){told}(?!\w)", " ", short, flags=re.IGNORECASE)


#: what follows a name at the start of a source's first sentence: "(1931 film)", ", 1st Baronet", "is a …"
_DESCRIBED = re.compile(r"\s*(?:\(|,|(?:is|was)\s+an?\b)", re.IGNORECASE)
#: words on each side of the option ``option_named`` reads for a word that could turn the answer against it
OPTION_CONTEXT = 12


def names_the_subject(text: str, question: str) -> bool:
    """``text`` (citations aside) is at most ``SUBJECT_WORDS`` words that the question already says, in its order
    ("Milvus Lite [1] [2][3]" for "What is Milvus Lite?"), and the question names no two things ("… A or B?", "… out
    of A and B?"), whose answer is one of them."""
    said = " ".join(strip_citations(text).split()).strip(" .,;:*_").casefold()
    if not said or len(said.split()) > SUBJECT_WORDS or not _judged(question):
        return False
    # "2" is not in "Milvus 2.2": a number's neighbours across a decimal point or separator are part of it
    return re.search(rf"(?<![\w.,])(?<!\d[.,]){re.escape(said)}(?![\w])(?![.,]\d)",
                     folded(question)) is not None


#: words of an answer that only names the question's subject, at most
SUBJECT_WORDS = 4


def answer_line_only(report: str, short: str) -> tuple[str, str]:
    """``(report, short)``, the report being the short answer when the reply was its Answer line and nothing else
    ("Answer: Latin": the bundled 1.5B model's whole chain_of_rag report on a HotpotQA question, which was shown as
    "The model returned an empty answer." with no short answer); the report step then cites it as it cites any
    report that cites nothing (``report.with_support``)."""
    if short and not strip_citations(report).strip(" \n*_.,;:-"):
        return short, short
    return report, short


def without_empty_opening(report: str, short: str, question: str) -> tuple[str, str]:
    """``(report, short)`` without an opening paragraph that only names the question's subject, with citations or
    without ("Milvus Lite [1] [2][3][4][5]" over a paragraph that says what it is: the bundled 1.5B model on the quick
    start's data, from a fresh clone), or that is only source numbers ("[1] [2][3]" over the text: Qwen2.5-Coder-0.5B
    on MuSiQue), and with a short answer that says something: when ``short`` only names the subject or adds nothing
    to the question (``says_nothing``), the first sentence of the report's first prose paragraph that does (``""``
    when there is none: no short answer rather than an empty one)."""
    def empty(text: str) -> bool:
        return names_the_subject(text, question) or says_nothing(text, question)

    first, sep, rest = report.strip().partition("\n\n")
    # a paragraph that adds nothing is kept: the rule reads words, and a first paragraph holding the answer must stay
    if sep and rest.strip() and (names_the_subject(first, question) or only_citations(first)):
        report = rest.strip()
    if short and empty(short):
        said = (clean(s) for block in prose_paragraphs(report) for s in sentences(block) if not empty(s))
        short = next((s for s in said if s), "")
    return report, short


def first_paragraph_prose(text: str) -> str:
    """The first paragraph of ``text`` that is prose (not a heading, list or table), on one line ("" when none)."""
    return next(prose_paragraphs(text), "")


def prose_paragraphs(text: str) -> Iterator[str]:
    """The paragraphs of ``text`` that are prose, each on one line: not headings, tables, code (fenced, blank lines
    inside or not), quotes or ``*[…]`` notes; a list's items without their markers, joined with "; " where an item
    ends without punctuation ("- Strong\n- Bounded" → "Strong; Bounded")."""
    lines, fenced = [], False
    for line in strip_leaked_label(text).split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            lines.append("")
            continue
        lines.append("" if fenced else line)
    for block in re.split(r"\n\s*\n", "\n".join(lines)):
        block = block.strip()
        if not block or block.startswith(("#", "|", "*[", ">")):
            continue
        items: list[str] = []
        for line in block.split("\n"):
            item = " ".join(LIST_MARKER.sub("", line).split())
            if items and LIST_MARKER.match(line) and re.search(r"\w", strip_citations(items[-1])) \
                    and items[-1][-1] not in ".!?:;,。！？":
                items[-1] += ";"  # "- Strong\n- Bounded": two items, not one phrase
            if item:
                items.append(item)
        yield " ".join(items)


#: a word that can turn a sentence against what it names, leave it open or hedge it, or that speaks of the sources
#: rather than the answer: such a short answer stays whole ("Paris may be …", "Lyon ceased to be …", "The context
#: lacks details …": a helper's replies, 2026-12-03)
_TURNS = re.compile(rf"\b(?:{_CONTRARY_WORDS}|if|unless|except|without|sources?|passages?|information|context|"
                    r"texts?|documents?|details|lacks?|would|should|likely|unlikely|probably|"
                    r"possibly|perhaps|maybe|reportedly|allegedly|supposedly|believed|thought|seems?|seemed|appears?|"
                    r"appeared|ceased|formerly|former|once|used|falsely|wrongly|rumou?red|claimed|said)\b|n't\b|[?？]",
                    re.IGNORECASE)
#: a word or a number ("1,110", "43.8"), with where it is in the short answer
_TOKEN = re.compile(r"\d+(?:[.,:/-]\d+)*|\w[\w'’.&/-]*\w|\w")
#: least number of words (the question's, in its order) the part of a short answer around its answer must be
ECHO_MIN_WORDS = 3
#: small words inside a name: "Treaty on the Functioning of the European Union", "Alexander and the Terrible"; more
#: than ``_NAME``'s, as here they join capitalised words only ("Graz in 1850" stays two: a number is not one)
_NAME_JOINERS = frozenset("of the and de la le von van on for in to a".split())


def _same_form(word: str, other: str) -> bool:
    """Two words (case folded) are one, or forms of one: the shorter (three letters or more) is the other with at
    most two letters more ("rise" / "rises", "get" / "gets"), or both are forms of one stem as names are in dedup
    (``dedup_rules.inflected``: "attend" / "attended", "predated" / "predates"; not "Frankfort" / "Franklin")."""
    if word == other:
        return True
    short, long = sorted((word, other), key=len)
    return (len(short) >= 3 and long.startswith(short) and len(long) - len(short) <= 2) or inflected(word, other)


def _told_again(side: list[str], question: list[str]) -> bool:
    """``side`` (case-folded words), without the small words at its ends, is a run of ``question``'s words in its
    order (``_same_form``), at least ``ECHO_MIN_WORDS`` long with two that say something."""
    lo, hi = 0, len(side)
    while lo < hi and side[lo] in FUNCTION_WORDS:
        lo += 1
    while hi > lo and side[hi - 1] in FUNCTION_WORDS:
        hi -= 1
    run = side[lo:hi]
    if len(run) < ECHO_MIN_WORDS or len([w for w in run if w not in FUNCTION_WORDS]) < 2:
        return False
    return any(all(_same_form(w, q) for w, q in zip(run, question[i:i + len(run)]))
               for i in range(len(question) - len(run) + 1))


#: words that make a clause of what would be the answer ("Paris is likely"): such a span is not a name or a value
_CLAUSE_WORDS = frozenset("is are was were be been being am has have had do does did will shall".split())
#: words of quantity before a number that belong to the answer ("more than 2 million", "about 15 kilotons")
_QUALIFIER = re.compile(r"(?:(?:more|less|fewer|greater|higher|lower|other)\s+than|at\s+(?:least|most)|up\s+to|"
                        r"(?:just\s+|well\s+)?(?:over|under|above|below)|about|around|nearly|almost|approximately|"
                        r"roughly|circa|some)\s+$", re.IGNORECASE)
#: abbreviations whose full stop is part of them at the end of an answer ("Martin Luther King Jr.")
_ABBREVIATIONS = frozenset("Jr Sr St Dr Mr Mrs Ms Co Inc Ltd Corp Bros Ave Mt Ft".split())
#: signs and currency written against a number's start ("-23.9", "$237"), and units against its end ("7.3%")
_SIGNS, _AFTER = "-−+±~≈<>$€£¥₹", "%‰°′″"


def _asked_after_wh(words: Sequence[str]) -> list[str]:
    """The question's ``words`` (case folded) that say something, but for its question word and the words right
    after it that name the kind of answer ("What currency", "In which country", "How much rain"): what a short answer
    telling the question again must tell in full."""
    wh = next((i for i, w in enumerate(words) if _WH_QUESTION.fullmatch(w)), None)
    kind: set[int] = set()
    if wh is not None:
        kind.add(wh)
        i = wh + 1
        while i < len(words) and words[i] not in FUNCTION_WORDS:
            kind.add(i)
            i += 1
    return [w for i, w in enumerate(words) if i not in kind and w not in FUNCTION_WORDS]


def answer_span(short: str, question: str, offered: bool = False) -> str:
    """The answer inside a short answer that tells the question again before or after it: "Franjo Krežma was in
    charge of the country where the composer of Aschenbrodel was a citizen." → "Franjo Krežma", "The Finnish markka
    predated the Euro in Finland." → "The Finnish markka" (Qwen2.5-Coder-1.5B's chain_of_rag on MuSiQue; the gold
    answers are the names), "The author of Alexander attended the Alexander Hamilton Institute." → "the Alexander
    Hamilton Institute".

    The answer runs from the first to the last word the question does not have (in any ``_same_form``), widened over
    the name it is part of (capitalised words and the small words between them, ``_NAME_JOINERS``), an article or a
    word of quantity before it ("more than 2 million"), a sign or currency before a number and a unit after it
    ("-23.9 °C", "$237 million", "7.3%"). What is left must be on one side only, be a run of the question's own words
    in its order (``_told_again``), and tell every word of the question but its question word and the kind of answer
    it names (``_asked_after_wh``): "The director of Jaws is Steven Spielberg." for "When was the director of Jaws
    born?" answers one step of it and stays whole, as does "Lilu is a demon in ancient China." for "If Gallu is a
    demon Lilu is what?". Left whole too: an answer that is a clause ("Paris is likely"), questions whose answer can
    be made of their own words (``_judged``: options, yes/no) and short answers with a word that can turn or hedge
    them or that speaks of the sources (``_TURNS``: "not", "may", "ceased", "the context …").

    ``offered``: the question offers options and ``short`` names none of them outside its telling of the question
    again (``option_named``): "John Allen was born first out of Aivar Kuusmaa and Andy Summers." → "John Allen"."""
    asks = _english_wh(question) if offered else _judged(question)
    if not short or not asks or _TURNS.search(short):
        return short
    asked = [t.group().casefold() for t in _TOKEN.finditer(question)]
    asked_words = {w for w in asked if w not in FUNCTION_WORDS}
    tokens = list(_TOKEN.finditer(short))
    words = [t.group().casefold() for t in tokens]
    new = [i for i, w in enumerate(words)
           if w not in FUNCTION_WORDS and not any(_same_form(w, q) for q in asked_words)]
    if not new:
        return short
    first, last = _widened(short, tokens, new[0], new[-1])
    if first > 0 and words[first - 1] in ("a", "an", "the"):
        first -= 1  # "a local file", "the Little Boy atomic bomb"
    left, right = words[:first], words[last + 1:]
    rest = left or right
    if bool(left) == bool(right) or not _told_again(rest, asked) or _CLAUSE_WORDS & set(words[first:last + 1]):
        return short  # nothing around it, the question's words on both sides, or a clause: which part answers?
    if not all(any(_same_form(w, r) for r in rest) for w in _asked_after_wh(asked)):
        return short  # it tells part of the question: the answer to one step of it, not to the question
    start, end = tokens[first].start(), tokens[last].end()
    qualifier = _QUALIFIER.search(short[:start])
    if qualifier is not None and left and len(_TOKEN.findall(short[:qualifier.start()])) >= ECHO_MIN_WORDS:
        start = qualifier.start()
    while start > 0 and short[start - 1] in _SIGNS:
        start -= 1
    while end < len(short) and short[end] in _AFTER:
        end += 1
    if end < len(short) and short[end] == "." and end == tokens[last].end() \
            and (tokens[last].group() in _ABBREVIATIONS or re.fullmatch(r"(?:[A-Z]\.)+[A-Z]", tokens[last].group())):
        end += 1  # "Jr.", "D.C."
    span = short[start:end]
    if span.count("(") > span.count(")") and short[end:].lstrip().startswith(")"):
        span = short[start:short.index(")", end) + 1]
    return span.strip(" ,;:") or short


def _widened(text: str, tokens: list[re.Match[str]], first: int, last: int) -> tuple[int, int]:
    """``first`` and ``last`` moved out over the name they are in: capitalised words next to them, with only spaces
    between (a plural possessive's apostrophe too: "The Hundred Years' War", a helper's case), and small words
    (``_NAME_JOINERS``) between capitalised ones."""
    def name_word(i: int) -> bool:
        return tokens[i].group()[0].isupper()

    def joined(i: int, j: int) -> bool:  # only spaces between tokens i < j, an apostrophe after the first allowed
        return all(not text[tokens[k].end():tokens[k + 1].start()].lstrip("'’").strip() for k in range(i, j))

    def reach(start: int, step: int) -> int:
        at = start
        probe = start + step
        while 0 <= probe < len(tokens):
            if tokens[probe].group().casefold() in _NAME_JOINERS:
                probe += step
                continue
            if not name_word(probe) or not joined(min(at, probe), max(at, probe)):
                break
            at = probe
            probe += step
        return at

    return reach(first, -1), reach(last, 1)


def report_and_short(text: str, shown: Sequence[Chunk | None], question: str) -> tuple[str, str]:
    """``(report, short answer)`` of a model's report text: ``short_answer_of``, then ``without_empty_opening`` and
    ``answer_line_only`` (the report step of every agent)."""
    return answer_line_only(*without_empty_opening(*short_answer_of(text, shown), question))


def settled_short(short: str, question: str, headers: Sequence[tuple[str, str]]) -> str:
    """The short answer as reports carry it: what the model copied from its prompt removed (``without_echoes``),
    the option it names (``option_named``), the answer cut out of the question told again (``answer_span``).
    ``headers``: ``(title, location)`` of the sources shown."""
    return answer_span(option_named(without_echoes(short, question, headers), question), question)

