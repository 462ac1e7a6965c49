"""The one-line short answer every report carries, and the prompt labels small models copy into their text.

The report prompt asks for a first line ``Answer: <short answer>`` and then the report; ``split_short_answer`` takes
that line out of the report (the model's own wording, so a name stays a name; a model that puts it last is
understood too). A model that writes no such line gets
the report's first sentence instead (``first_sentence``). Small models also start answers with the prompt's words as
a label ("A short direct answer:", "**Short Direct Answer:**", "## Direct answer"); ``strip_leaked_label`` removes
such a label from the start of a text, whatever its Markdown dress.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Sequence

from deepsearcher.agents.citations import cited_numbers, location, strip_citations, without_code
from deepsearcher.agents.prompts import REPORT_FORMAT, SYSTEM
from deepsearcher.agents.rewrites import ABOUT_ANSWER, overlap, sentences, words
from deepsearcher.agents.scaffold import detect
from deepsearcher.types import Chunk

#: label words a small model copies from the prompt ("short direct answer", "final answer", "answer", "summary"), or
#: translates into the question's language ("Antwort:", "答案：", "Respuesta:", "الإجابة:")
_LABEL_WORDS = (r"(?:(?:an?\s+|the\s+|my\s+)?(?:(?:short|direct|brief|final|concise)[\s-]+){0,3}(?:answer|summary)"
                r"|(?:kurze\s+)?antwort|réponse|reponse|respuesta|risposta|resposta|antwoord|svar|vastaus|odpowiedź|"
                r"odpověď|ответ|відповідь|答案|回答|答え|解答|답변|정답|الإجابة|الجواب|cevap|yanıt|jawaban|câu\s+trả\s+lời|"
                r"คำตอบ|उत्तर|απάντηση|válasz|răspuns)")
#: the label the report prompt's "explain the answer" leaks before the explanation ("Explanation:", "**Explanation
#: of the answer:**"): Qwen2.5-Coder-0.5B began 83 of 170 bench reports with it. Stripped from the start of a text,
#: never read as an Answer line (the explanation is not the short answer)
_LEAKED_WORDS = rf"(?:{_LABEL_WORDS}|(?:an?\s+|the\s+)?(?:short\s+)?explanation(?:\s+of\s+the\s+answer)?)"
#: a label alone on the first line ("**Short Direct Answer:**", "## Direct answer", "Answer:", "Explanation:")
_LABEL_LINE = re.compile(rf"^\s*(?:#{{1,6}}\s*)?[*_]*\s*{_LEAKED_WORDS}\s*[*_]*\s*[:：.\-–—]?\s*[*_]*\s*(?:\n|$)",
                         re.IGNORECASE)
#: a label before text on the same line ("A short direct answer: Milvus …", "**Answer:** Milvus …")
_LABEL_PREFIX = re.compile(rf"^\s*(?:#{{1,6}}\s*)?[*_]*\s*{_LEAKED_WORDS}\s*[*_]*\s*[:：\-–—]\s*[*_]*\s*",
                           re.IGNORECASE)
#: the short-answer line the report prompt asks for, last in the reply ("Answer: 1961", "**Final answer:** yes")
_ANSWER_LINE = re.compile(rf"^\s*(?:[-*>]\s+)?(?:#{{1,6}}\s*)?[*_]*\s*{_LABEL_WORDS}\s*[*_]*\s*[:：]\s*[*_]*\s*"
                          r"(?P<answer>.*?)\s*[*_]*\s*$", re.IGNORECASE)
#: the label the report prompt asks for ("Answer:", also "Final answer:" / "Short answer:"), in any Markdown dress
_ASKED_LABEL = re.compile(r"^\s*(?:[-*>]\s+)?(?:#{1,6}\s*)?[*_]*\s*(?:(?:(?:final|short)\s+)?answer|(?:kurze\s+)?"
                          r"antwort|réponse|reponse|respuesta|risposta|resposta|antwoord|ответ|答案|回答|答え|답변|"
                          r"الإجابة|الجواب)\s*[*_]*\s*[:：]", re.IGNORECASE)
#: longest short answer kept (a sentence); longer ones are cut at a word
MAX_CHARS = 300
#: a copy of the prompt's source list in a reply: a "Sources:" heading alone, or a line that is only a source's
#: number, title and (location) — how the prompt shows each source; a statement puts its citation after itself
_ECHOED_HEADING = re.compile(r"^\s*(?:#{1,6}\s*)?[*_]*\s*(?:numbered\s+)?sources\s*[*_]*\s*:?\s*[*_]*\s*$",
                             re.IGNORECASE)
_ECHOED_SOURCE = re.compile(r"^\s*(?:[-*]\s+)?\[\d+\]\s+[^\[\]\n]{0,300}\((?P<where>[^()\n]*)\)\s*$")
#: a line that is only a number and a title ("[2] 1986 North Carolina Tar Heels football team"): in a run of two or
#: more numbered 1, 2, 3 … it is the prompt's numbered list copied without its locations (Qwen2.5-Coder-0.5B's whole
#: forced answer in deep_research, twice in 10 HotpotQA questions). A title starts with a capital or a digit; a
#: statement goes on in lower case after a citation, or ends in punctuation
#: a line opening with a source's number: "[2] Strong is the highest … level of consistency."
_NUMBERED_LINE = re.compile(r"^\s*(?:[-*]\s+)?\[(\d+)\]\s+\S")
#: lines of a copied digest of the sources (``_copied_digest``) at least
DIGEST_LINES = 3
_NUMBERED_TITLE = re.compile(r"^\s*(?:[-*]\s+)?\[(\d+)\]\s+(?P<title>(?=[^\W_a-z])[^\[\]\n.!?;:]{1,200})$")
_NUMBERED_NAME = re.compile(r"^\s*(?:[-*]\s+)?\[(\d+)\]\s+(?P<title>[^\[\]\n]{1,200})$")
#: the question restated as a preamble ('The final answer to the question "Are … the same state?" is:'): the forced
#: answer prompt's "write the final answer to the question" copied; what follows it is the answer
_RESTATED = re.compile(r"^\s*[*_]*\s*(?:(?:the|my|our)\s+)?(?:(?:final|short|direct|brief|correct)\s+)*answer\s+to\s+"
                       r"(?:the|this|your|that)\s+question(?:\s*(?:\"[^\n]*?\"|“[^\n]*?”|'[^\n]*?'))?\s*"
                       r"(?:is|would\s+be)\b\s*[*_]*\s*:?\s*[*_]*\s*", re.IGNORECASE)
#: a line that repeats the report prompt's own scaffolding ("The research searched for: …", "Write a report that
#: answers …"), source numbers in front or not: Qwen2.5-Coder-0.5B wrote "[1][2][3] The research searched for both
#: directors of … have the same nationality?" as its whole answer, and in chain_of_rag "Answer: [Christopher Nolan,
#: Sathish Kalathil] The research searched for:" then the sub-query list — the line is cut where the echo starts
_ECHOED_SCAFFOLD = re.compile(r"(?:the research searched for|write a report that answers|"
                              r"answer the question below using)\b", re.IGNORECASE)
#: a short answer that only names the kind of answer the prompt asked for ("Yes/no", "a name", "One short
#: sentence"): the 0.5B model answered a yes/no question with "Yes/no"
_ANSWER_KIND = r"(?:an?\s+)?(?:name|date|number|yes\s*/\s*no|yes\s+or\s+no|(?:one\s+)?short\s+sentence|short\s+answer)"
_KIND_ONLY = re.compile(rf"^\s*{_ANSWER_KIND}(?:\s*(?:,\s*(?:or\s+)?|or\s+){_ANSWER_KIND})*\s*[.!]?\s*$",
                        re.IGNORECASE)


def names_the_answer_kind(short: str) -> bool:
    """True for a short answer that only repeats the prompt's words for the kind of answer ("Yes/no")."""
    return bool(_KIND_ONLY.match(short))


def strip_echoed_sources(text: str, shown: Sequence[Chunk | None] | None = None) -> str:
    """``text`` without the copy of the prompt's source list a small model writes as its report ("Sources:" then
    "[1] Title (file › section)" lines): the report's own Sources section lists them already, and a copied list
    is no statement and cites nothing. Lines that repeat the prompt's scaffolding (``_ECHOED_SCAFFOLD``, with the
    bullet lines under it) go too. Other lines are kept as written.

    ``shown``: the sources the prompt showed, in its order (``None`` for a number without a chunk). Given, a line is
    a copied header only when its title or location is one of theirs, and a digest only when its text is theirs:
    by form alone, "- [1] Ubuntu and macOS are supported (Windows is not)" or "[1] Ubuntu Linux on x86 and ARM"
    would be taken for a header, and three cited paragraphs "[1] …", "[2] …", "[3] …" for a digest."""
    lines = text.split("\n")
    listed = _copied_numbered_list(lines, shown) | _copied_digest(lines, shown)
    kept: list[str] = []
    in_echo = False  # the bullet lines under an echoed "The research searched for:" heading
    for at, line in enumerate(lines):
        if at in listed:
            continue
        echo = _ECHOED_SCAFFOLD.search(line)
        if echo:  # from there on the line is the prompt's; what comes before it stays ("Answer: X The research …")
            in_echo = line.rstrip().endswith(":")
            before = line[:echo.start()].rstrip()
            if re.search(r"\w", strip_citations(before)):
                kept.append(before)
            continue
        if in_echo and re.match(r"^\s*[-*]\s", line):
            continue
        in_echo = False
        header = _ECHOED_SOURCE.match(line)
        if header and shown is not None and not _is_shown(header["where"], shown, "location"):
            header = None
        if not (_ECHOED_HEADING.match(line) or header):
            kept.append(line)
    return "\n".join(kept).strip() if len(kept) != len(lines) else text


def _is_shown(name: str, shown: Sequence[Chunk | None], *fields: str) -> bool:
    """``name`` is the title or location (``fields``) of a shown source, case and spacing aside."""
    folded = " ".join(name.split()).casefold()
    for chunk in shown:
        if chunk is None:
            continue
        names = {"title": chunk.title, "location": location(chunk)}
        if any(" ".join(names[f].split()).casefold() == folded for f in fields):
            return True
    return False


def _copied_numbered_list(lines: Sequence[str], shown: Sequence[Chunk | None] | None = None) -> set[int]:
    """Indexes of the lines in runs of ≥ 2 consecutive ``_NUMBERED_TITLE`` lines numbered 1, 2, 3 … in order (each
    a shown source's title or location, when ``shown`` is given)."""
    listed: set[int] = set()
    run: list[int] = []
    last = 0  # the number of the run's last line
    for at, line in enumerate([*lines, ""]):
        if shown is None:
            match = _NUMBERED_TITLE.match(line)
        else:  # any line that is a shown source's title or location, whatever its case
            match = _NUMBERED_NAME.match(line)
            if match and not _is_shown(match["title"].strip(" *_"), shown, "title", "location"):
                match = None
        number = int(match.group(1)) if match else 0
        if match and not run and _introduced(lines, at):
            match = None  # "The collection holds two films:" then the titles: the list is what it says
        if match and (not run or number == last + 1):
            run.append(at)
        else:
            if len(run) >= 2:
                listed.update(run)
            run = [at] if match else []
        last = number
    return listed


def _introduced(lines: Sequence[str], at: int) -> bool:
    """The last non-empty line before ``lines[at]`` introduces a list (ends with a colon)."""
    before = [line for line in lines[:at] if line.strip()]
    return bool(before) and before[-1].rstrip(" *_").endswith((":", "："))


def _copied_digest(lines: Sequence[str], shown: Sequence[Chunk | None] | None = None) -> set[int]:
    """Indexes of the lines of the prompt's sources told again in order: ≥ ``DIGEST_LINES`` lines (blank lines
    between them aside) that open with ``[1]``, ``[2]``, ``[3]`` … and cite nothing else, when the reply has a line
    besides them (its answer) — by form, when the sources are not known. The bundled 1.5B model answered the quick
    start's question with its Answer line and then "[1] …", "[2] …" … "[5] …", one paragraph per source in the
    prompt's order. With ``shown`` none: such lines are statements for ``cited_support`` to judge, or the sources'
    text, which the Sources list does not show (a helper's "Each level guarantees something different:" over three
    copied sentences was left with nothing but that line)."""
    if shown is not None:  # the Sources list shows where each source is, not its text: a copy is content
        return set()
    run: list[int] = []
    for at, line in enumerate(lines):
        match = _NUMBERED_LINE.match(line)
        number = int(match.group(1)) if match and set(cited_numbers(line)) <= {int(match.group(1))} else 0
        if number and number == len(run) + 1:
            run.append(at)
        elif number == 1 and len(run) < DIGEST_LINES:
            run = [at]
        elif line.strip():
            if len(run) >= DIGEST_LINES:
                break
            run = []
    others = [line for at, line in enumerate(lines) if line.strip() and at not in run]
    return set(run) if len(run) >= DIGEST_LINES and others else set()


#: a run of this many words copied from the report prompt's format rules is the prompt speaking, not the answer
RULE_ECHO_WORDS = 5


def _grams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


_ARTICLES = frozenset({"a", "an", "the"})
#: punctuation left hanging after a removed run (and at the start of what remains)
_HANGING = re.compile(r"[\s\"'“”‘’:.,;!]*")
_RULE_GRAMS = _grams([w.casefold() for w in re.findall(r"\w+", REPORT_FORMAT)], RULE_ECHO_WORDS)


def without_prompt_rules(text: str) -> str:
    """``text`` without the runs of ≥ ``RULE_ECHO_WORDS`` words it copies from the report prompt's format rules
    (``prompts.REPORT_FORMAT``), line by line, with the punctuation left hanging after them. Qwen2.5-Coder-0.5B's
    chain_of_rag report read "a name, date, number, yes/no, or one short sentence. The first line is "Answer: "
    followed by the short answer in words: a demon Lilu, [1] …". Lines with no such run are returned as written."""
    out = []
    for line in text.split("\n"):
        tokens = list(re.finditer(r"\w+", line))
        folded = [t.group().casefold() for t in tokens]
        covered = [False] * len(tokens)
        for i in range(len(tokens) - RULE_ECHO_WORDS + 1):
            if tuple(folded[i:i + RULE_ECHO_WORDS]) in _RULE_GRAMS:
                covered[i:i + RULE_ECHO_WORDS] = [True] * RULE_ECHO_WORDS
        if not any(covered):
            out.append(line)
            continue
        kept, at, i = [], 0, 0
        while i < len(tokens):
            if not covered[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(tokens) and covered[j + 1]:
                j += 1
            while j > i and j + 1 < len(tokens) and folded[j] in _ARTICLES:
                covered[j] = False  # "… in words: a demon Lilu": the rules go on "a name"; this "a" is the answer's
                j -= 1
            kept.append(line[at:tokens[i].start()])
            at = _HANGING.match(line, tokens[j].end()).end()  # type: ignore[union-attr]  # (* always matches)
            i = j + 1
        kept.append(line[at:])
        out.append(_HANGING.sub("", "".join(kept), count=1).rstrip())
    return "\n".join(out)


def only_citations(text: str) -> bool:
    """The reply holds source numbers and nothing else ("[1][2][4]", "Answer: [1][3]"): what Qwen2.5-Coder-0.5B
    wrote for a third to a half of multi-hop questions when the report prompt put its rules first (docs/benchmarks.md,
    answers vs the reference). Such a reply answers nothing."""
    body = strip_citations(strip_leaked_label(text.strip()))
    return bool(text.strip()) and body != text.strip() and not re.search(r"\w", body)


#: the "Explanation:" label at the start of a later line ("- … → The Enola Gay …\n\nExplanation: The Enola Gay dropped
#: …", a 0.5B chain_of_rag report on MuSiQue): the label goes, the explanation stays
_EXPLANATION_LINE = re.compile(r"(?im)^([ \t]*)(?:#{1,6}[ \t]*)?[*_]*[ \t]*(?:the[ \t]+)?explanation"
                               r"(?:[ \t]+of[ \t]+the[ \t]+answer)?[ \t]*[*_]*[ \t]*[:：][ \t]*[*_]*[ \t]*")


def strip_leaked_label(text: str) -> str:
    """``text`` without a prompt label at its start ("A short direct answer:", "**Short Direct Answer:**" on its
    own line or before the answer, "## Direct answer"); other text is returned unchanged."""
    stripped = _LABEL_LINE.sub("", text, count=1)
    if stripped == text:
        stripped = _LABEL_PREFIX.sub("", text, count=1)
    if stripped == text:
        stripped = _RESTATED.sub("", text, count=1)
    return stripped.lstrip("\n") if stripped != text else text


def clean(answer: str) -> str:
    """A short answer as one plain line: citations, Markdown emphasis, labels and wrapping quotes removed, cut to
    ``MAX_CHARS`` at a word."""
    line = " ".join(strip_citations(strip_leaked_label(answer)).split())
    line = re.sub(r"\s+([.,;:!?。，；：！？、])", r"\1", re.sub(r"(\*\*|__|`)", "", line)).strip(" *_\"'“”").strip()
    line = re.sub(r"([,;])(?:\s*[,;])+", r"\1", line)  # "Lilu, [1], 2026" without its citation: one comma
    if len(line) > MAX_CHARS:
        line = line[:MAX_CHARS].rsplit(" ", 1)[0] + "…"
    return line if re.search(r"\w", line) else ""  # "[1][2]." without its citations says nothing


def split_short_answer(text: str) -> tuple[str, str]:
    """``(report without its short-answer line, the short answer)``.

    The short answer is the first non-empty line when it has the ``Answer:`` form (any label wording and Markdown
    dress), else the last one when it has (models put it at either end); otherwise ``""`` and the text unchanged.
    A reply that is only that line keeps it (unlabelled) as the report. A list item is no Answer line when the
    line beside it is a list item too ("- question: …" then "- answer: the report": a list's last entry).
    """
    lines = text.strip().split("\n")
    for index in (0, len(lines) - 1):
        match = _ANSWER_LINE.match(lines[index])
        if match is None or not clean(match.group("answer")):
            continue
        beside = "" if len(lines) == 1 else lines[1] if index == 0 else lines[index - 1]
        if _LIST_MARKER.match(lines[index]) and _LIST_MARKER.match(beside):
            continue
        if index == 0 and len(lines) > 1 and not _ASKED_LABEL.match(lines[0]):
            continue  # "A short direct answer: …" opens the report: its label is stripped, the text kept
        rest = lines[index + 1:] if index == 0 else lines[:index]
        report = "\n".join(rest).strip()
        # a reply that is nothing but the Answer line: that line, without its label, is the report too
        return report or match.group("answer").strip(" *_"), clean(match.group("answer"))
    return text, ""


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph that is prose (not a heading, list or table), as a short answer."""
    prose = first_paragraph_prose(text)
    return clean(sentences(prose)[0]) if prose else ""


#: a sentence about the sources rather than the question ("The answer is supported by all four sources.", "Both
#: documents confirm this."): with no citation of its own it is a claim no one checked — the bundled 1.5B model wrote
#: "supported by all four sources" under an answer that cited none, above a Sources list of one
_SUPPORT_CLAIM = re.compile(
    r"\b(?:supported|confirmed|backed(?:\s+up)?|corroborated|verified|validated)\s+by\s+(?:all|both|each|every|the|"
    r"these|several|multiple|many|\w+)\s+(?:of\s+the\s+)?(?:\w+\s+)?(?:sources|documents|passages|references|"
    r"chunks)\b|\b(?:all|both|each\s+of\s+the|every\s+one\s+of\s+the|the)\s+(?:\w+\s+)?(?:sources|documents|"
    r"passages|references)\s+(?:all\s+)?(?:agree|confirm|support|corroborate|verify)\b", re.IGNORECASE)


def without_support_claims(text: str) -> str:
    """``text`` without the sentences that only vouch for the sources and say nothing else (``_vouches_only``), and
    without those that speak of the answer and its sources in words about them alone (``about_the_answer``: "The
    answer supports sources [1] and [2][3].", "The answer is correct based on the information provided in the
    sources.", first sentences of Qwen2.5-Coder-0.5B reports on MuSiQue); the report's own Sources section and
    citation checks say what supports what. The numbers of a cited one go to the sentence before it on its line,
    which they cite ("Milvus has four levels. This is supported by the documents [1][2]." → "Milvus has four levels.
    [1][2]"). Headings, tables, code, list items, labels ("Sources:", "Answer: …") and other text are kept as written,
    and so is a text that would keep no words."""
    kept = []
    fenced = changed = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("#", "|", "```", "~~~")):
            kept.append(line)
            continue
        parts = sentences(line)  # a citation after a sentence's full stop belongs to that sentence
        item = bool(_LIST_MARKER.match(line))  # "- Source documents [1]": a list's item names a thing
        left: list[str] = []
        for part in parts:
            numbers = cited_numbers(part)
            if not (_vouches_only(part)
                    or (not item and about_the_answer(part) and not part.rstrip(" *_\t").endswith((":", "：")))):
                left.append(part)
            elif numbers and left:  # "… four levels. This is supported by the documents [1][2].": they cite it
                new = [n for n in dict.fromkeys(numbers) if n not in cited_numbers(left[-1])]
                if new:
                    left[-1] = left[-1].rstrip() + " " + "".join(f"[{n}]" for n in new)
        dropped = left != parts
        changed = changed or dropped
        if left or not line.strip():
            kept.append("".join(left).strip() if dropped else line)
    out = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return out if changed and re.search(r"\w", strip_citations(out)) else text


def _vouches_only(sentence: str) -> bool:
    """``sentence`` claims that sources vouch (``_SUPPORT_CLAIM``) and says nothing else: "The answer is supported by
    all four sources." does; "The customs documents confirm the origin of the goods." states what they confirm."""
    claim = _SUPPORT_CLAIM.search(sentence)
    if claim is None:
        return False
    rest = f"{sentence[:claim.start()]} {sentence[claim.end():]}"
    return not content_words(rest) - ABOUT_ANSWER - {"four", "three", "two", "five", "six", "above", "statement"}


#: words that claim nothing by themselves (articles, auxiliaries, prepositions, pronouns, question words); negations
#: are not among them: "The sources do not say." says something
_FUNCTION = frozenset("a an the is are was were be been being am of in on at to by for with from as this that these "
                      "those it its and or but which who whom whose what where when how why than then there here has "
                      "have had do does did can could will would should may might must shall also only both each "
                      "every any all so such very more most into onto about over under between i we you he she they "
                      "him her them his their our your me us my s".split())


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can say something: every word (numbers and short words too, any script; "2.2" and
    "1,500" one word each), citations and ``_FUNCTION`` words aside, case folded."""
    return {w for w in re.findall(r"\d+(?:[.,:/-]\d+)*|\w+", strip_citations(text).casefold()) if w not in _FUNCTION}


#: the words by which a sentence speaks of the answer, the question or the sources as this report's own
_ANCHORS = frozenset("answer answers question source sources".split())


def about_the_answer(sentence: str) -> bool:
    """``sentence`` speaks of the answer, the question or the sources (``_ANCHORS``) and every word of it that can say
    something is about them (``ABOUT_ANSWER``): "The answer supports sources [1] and [2][3]." Not "The answer is 42
    [1].", "The sources do not say.", "It provides relevant passages as context [1]." (a retriever's, in a report on
    RAG), nor a labelled line ("Answer: Relevant passages")."""
    if _ANSWER_LINE.match(sentence) or _LABEL_PREFIX.match(sentence):
        return False
    mine = content_words(sentence)
    return bool(mine & _ANCHORS) and mine <= ABOUT_ANSWER


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
    question = question.strip()
    return not _ANSWER_IN_ITS_WORDS.search(question) and bool(_WH_QUESTION.search(question)) \
        and detect(question) == "en"


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
    return bool(mine) and (mine <= asked or (bool(mine & _ANCHORS) and mine <= asked | ABOUT_ANSWER))


#: shortest line (citations aside) that ``without_repeated_lines`` merges: "Yes." twice may be two answers
REPEAT_MIN_CHARS = 20


def without_repeated_lines(text: str) -> str:
    """``text`` with a line that says again what an earlier line said (the same words once citations, a leading
    bullet and case are set aside) merged into that line, its citations added there: Qwen2.5-Coder-0.5B's
    deep_research answer was one sentence three times, "[1] Haymo of Faversham … scholar." then the same after [2]
    and [3]. Lines in code fences and tables, and short lines, are kept as written."""
    lines = text.split("\n")
    first: dict[str, int] = {}
    cites: dict[int, list[int]] = {}
    drop: set[int] = set()
    fenced = False
    for at, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        body = " ".join(strip_citations(_LIST_MARKER.sub("", line)).split()).casefold()
        if fenced or line.lstrip().startswith(("|", "```", "~~~")) or len(body) < REPEAT_MIN_CHARS:
            continue
        if body in first:
            drop.add(at)
            cites.setdefault(first[body], []).extend(cited_numbers(line))
        else:
            first[body] = at
    if not drop:
        return text
    out = []
    for at, line in enumerate(lines):
        if at in drop:
            continue
        if at in cites:
            own = cited_numbers(line)
            extra = [n for n in dict.fromkeys(cites[at]) if n not in own]
            if extra:
                merged = re.sub(r"\s+([.,;:!?])", r"\1", " ".join(strip_citations(line).split()))
                line = f"{merged} " + "".join(f"[{n}]" for n in dict.fromkeys([*own, *extra]))
        out.append(line)
    return "\n".join(out)


def without_repeated_sentences(text: str) -> str:
    """``text`` with a sentence said again word for word (citations, case and spacing aside; at least
    ``REPEAT_MIN_CHARS``) left out where it comes again, unless it cites what it did not before: the bundled 1.5B
    model's deep_search report on the README's second example said its last three sentences five times in one
    paragraph until ``max_tokens`` (a helper's fresh clone, 2026-12-03). Lines in code fences and tables are kept as
    written."""
    seen: dict[str, set[int]] = {}
    out: list[str] = []
    fenced = changed = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("|", "```", "~~~")):
            out.append(line)
            continue
        kept = []
        parts = sentences(line) or [line]
        for part in parts:
            body = " ".join(strip_citations(part).split()).casefold()
            if len(body) >= REPEAT_MIN_CHARS and body in seen and set(cited_numbers(part)) <= seen[body]:
                changed = True  # said before, with these citations: nothing of it is lost
                continue
            seen.setdefault(body, set()).update(cited_numbers(part))
            kept.append(part)
        out.append("".join(kept).rstrip() if len(kept) != len(parts) else line)
    return "\n".join(out) if changed else text


def short_answer_of(text: str, shown: Sequence[Chunk | None] | None = None) -> tuple[str, str]:
    """``(report, short answer)`` from a model's report text: the ``Answer:`` line taken out, else the first
    sentence; the report's leaked label at the start removed. ``shown``: the sources the prompt showed, in its order
    (``strip_echoed_sources``)."""
    cleaned = without_repeated_sentences(without_repeated_lines(without_support_claims(strip_echoed_sources(
        without_prompt_rules(text), shown))))
    report, short = split_short_answer(cleaned)
    report = _EXPLANATION_LINE.sub(r"\1", strip_leaked_label(report))
    if names_the_answer_kind(strip_citations(report)):
        report = ""  # "[1][2][3] Yes/no" answers nothing
    if short and report:  # "Answer: X" then a line of source numbers only: they cite X, so the report says X [n]
        first, _, rest = report.partition("\n")
        if only_citations(first):
            report = f"{short} {first.strip()}" + (f"\n{rest}" if rest else "")
    short = short or first_sentence(report)
    return report, "" if names_the_answer_kind(short) else short


#: a sentence of the system prompt (``prompts.SYSTEM``) as a short answer, its date and zone in the forms it gives
_SYSTEM_SENTENCES = [
    re.compile(r"^\s*" + re.sub(r"\\ ", r"\\s+", re.escape(part.strip().rstrip(".;"))).replace(
        re.escape("{date}"), r"\d{4}-\d{2}-\d{2}(?:\s*\(\w+\))?").replace(
        re.escape("{zone}"), r"UTC\S*(?:\s*\([^)]*\))?") + r"\s*[.;]?\s*$", re.IGNORECASE)
    for part in re.split(r"(?<=[.;])\s+", SYSTEM) if part.strip()]
#: share of words a question-like short answer and the question must share both ways to be the question again
QUESTION_ECHO = 0.8


def without_echoes(short: str, question: str, headers: Iterable[tuple[str, str]] = ()) -> str:
    """``short`` without what the prompt showed: a location the sources' headers gave (``headers``: their (title,
    location) pairs), after the answer's text in brackets of its own or closing it ("Lilu (mythology)
    (/data/corpus.json)" → "Lilu (mythology)"; an answer that is only a location stays) or bare after a shown title
    or the start of one ("Watertown /data/c.json, …": a location after other words, "Edit /d/limits.md, then
    restart", stays); and ``""`` for a short answer that is the question again (a question sharing ≥ 80 % of its
    words with the question, both ways: a title that is a question stays) or sentences of the system prompt ("Today
    is 2026-12-02 (Wednesday)", unless the question asks for the date). Measured with Qwen2.5-Coder-0.5B on
    HotpotQA: each of the three came back as the whole short answer."""
    pairs = [(title.strip(), where) for title, where in headers if where]
    cleaned = short
    for where in sorted({w for _, w in pairs}, key=len, reverse=True):
        place = re.escape(where)
        cleaned = re.sub(rf"(?<=\S)(?<!\])[ \t]*(?:\([ \t]*{place}[ \t]*\)|\[[ \t]*{place}[ \t]*\])", "", cleaned)
        titles = [t.casefold() for t, w in pairs if w == where and t]
        bare = [m for m in re.finditer(rf"(?<=\S)\s+{place}(?=\s*(?:[,;]|$))", cleaned)
                if _after_title(cleaned[:m.start()], titles)]
        for m in reversed(bare):
            cleaned = cleaned[:m.start()] + cleaned[m.end():]
    cleaned = " ".join(cleaned.split()).strip(" ,;")
    short = cleaned or short
    parts = [part for part in re.split(r"(?<=[.;])\s+", short) if part.strip()]
    asks_date = bool({"today", "date", "day"} & {w.casefold() for w in re.findall(r"\w+", question)})
    if parts and not asks_date and all(any(p.match(part) for p in _SYSTEM_SENTENCES) for part in parts):
        return ""
    return "" if repeats_question(short, question) else short


def _after_title(before: str, titles: Sequence[str]) -> bool:
    """``before`` (casefolded titles) ends with a whole title, or its last item (after a comma or semicolon) opens
    one at a word boundary ("Watertown" of "Watertown International Airport")."""
    text = before.casefold().rstrip()
    item = re.split(r"[,;]", text)[-1].strip()
    return any(re.search(rf"(?<!\w){re.escape(t)}$", text) or (item and (t == item or t.startswith(item + " ")))
               for t in titles)


def without_locations(text: str, headers: Iterable[tuple[str, str]]) -> str:
    """``text`` without a source header's location copied after its title (``[n] Title (location)``, the prompt's
    ``headers`` as (title, location) pairs): "Harris W. Fawell was born in [1] Harris W. Fawell (/data/corpus.json)."
    → "… [1] Harris W. Fawell.". The Sources list under the report says where each source is; Qwen2.5-Coder-0.5B
    copied headers into 40 of 520 stored answers. A location after other words ("edit it (config/settings.txt)"),
    in code or as a link's destination stays: a user may need it."""
    prose = without_code(text)  # same length: matches in prose are cut from the text
    spans: list[tuple[int, int]] = []
    for title, where in sorted({h for h in headers if h[1]}, key=lambda h: len(h[1]), reverse=True):
        place = re.escape(where)
        before = rf"(?<!\w){re.escape(title)}" if title.strip() else r"\[\d+\]"  # "[3] (file.md)" without a title
        pattern = rf"{before}(?P<at>[ \t]*(?:\([ \t]*{place}[ \t]*\)|\[[ \t]*{place}[ \t]*\]))"
        spans += [(m.start("at"), m.end("at")) for m in re.finditer(pattern, prose, re.IGNORECASE)]
    for start, end in sorted(set(spans), reverse=True):
        text = text[:start] + text[end:]
    return text


def repeats_question(text: str, question: str) -> bool:
    """``text`` (citations and wrapping ``<…>`` aside) is ``question`` again: a question sharing ≥ ``QUESTION_ECHO``
    of its words with it, both ways. A title that is a question, or a question about something else, is not."""
    text = strip_citations(text).strip().strip("<>").strip()
    mine, theirs = words(text), words(question)
    asks = text.rstrip(" *_").endswith(("?", "？"))
    return asks and min(overlap(mine, theirs), overlap(theirs, mine)) >= QUESTION_ECHO


#: the two options a question offers at its end: "Which film was released first, Aas Ka Panchhi or Phoolwari?"
_OPTIONS = re.compile(r"[,:;]\s*(?P<a>[^,:;?]{1,80}?)\s+or\s+(?P<b>[^,:;?]{1,80}?)\s*[?？]\s*$", re.IGNORECASE)
#: words that can turn an answer naming one option against it, or leave it open ("not", "unclear whether", "only
#: mention", a question mark)
_CONTRARY = re.compile(r"\b(?:not|never|neither|nor|no|none|unclear|unknown|uncertain|whether|only|mentions?|"
                       r"mentioned|cannot)\b|n't\b|[?？]", re.IGNORECASE)
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
    match = _OPTIONS.search(question)
    if not match or not short or len(re.findall(r"[,:;]", question)) > 1:  # "…, A, B, C or D?": more than two
        return short
    found = []
    for option in (match["a"], match["b"]):
        words_of = [re.escape(w) for w in option.split()]
        hit = re.search(r"(?<!\w)" + r"\s+".join(words_of) + r"(?!\w)", short, re.IGNORECASE) if words_of else None
        if hit:
            found.append(hit)
    if len(found) != 1:
        return short
    hit = found[0]
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
                     " ".join(question.split()).casefold()) is not None


#: words of an answer that only names the question's subject, at most
SUBJECT_WORDS = 4


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
            item = " ".join(_LIST_MARKER.sub("", line).split())
            if items and _LIST_MARKER.match(line) and re.search(r"\w", strip_citations(items[-1])) \
                    and items[-1][-1] not in ".!?:;,。！？":
                items[-1] += ";"  # "- Strong\n- Bounded": two items, not one phrase
            if item:
                items.append(item)
        yield " ".join(items)


_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
