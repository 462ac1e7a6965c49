"""Sentences that add nothing to a report: claims that the sources vouch for the answer, verdicts on the answer
("The answer is correct because …"), sentences about the answer rather than the question, and lines or sentences said
again (``without_support_claims``, ``without_repeated_lines``, ``without_repeated_sentences``), with
``content_words``, the words of a text that can say something.
"""

from __future__ import annotations

import re

from deepsearcher.agents.citations import cite_sentence, cited_numbers, folded, strip_citations
from deepsearcher.agents.echoes import ANSWER_LINE, LABEL_PREFIX
from deepsearcher.agents.rewrites import ABOUT_ANSWER, sentences


#: a list item's marker at a line's start ("- ", "* ", "1. ", "2) ")
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
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
    [1][2]"). A sentence that wraps a statement in a verdict on the answer keeps the statement (``without_verdict``).
    The answer quoted in such a sentence counts as words about the answer where the ``Answer:`` line says it
    (``_unquoted``): nothing of it is lost. Headings, tables, code, list items, labels ("Sources:", "Answer: …")
    and other text are kept as written, and so is a text that would keep no words."""
    kept = []
    fenced = changed = False
    answer_line = next((m["answer"] for m in map(ANSWER_LINE.match, text.split("\n")) if m), "")
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(("#", "|", "```", "~~~")):
            kept.append(line)
            continue
        parts = sentences(line)  # a citation after a sentence's full stop belongs to that sentence
        item = bool(LIST_MARKER.match(line))  # "- Source documents [1]": a list's item names a thing
        left: list[str] = []
        pending: list[int] = []  # numbers of a dropped first sentence, for a next one that says "This source"
        for part in parts:
            part = without_verdict(part, answer_line)
            numbers = cited_numbers(part)
            judged = _unquoted(part, answer_line)
            if not (_vouches_only(judged) or (not item and about_the_answer(judged)
                                              and not part.rstrip(" *_\t").endswith((":", "：")))):
                if len(set(pending)) == 1 and _THIS_SOURCE.match(part) and not numbers:
                    part = cite_sentence(part, pending)  # 'The answer "X" is supported by source [1]. This source …'
                left.append(part)
                pending = []
            elif numbers and not left:
                pending = numbers
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
    verdict = VERDICT if _ON_THE_ANSWER.match(sentence) or _ON_THIS.match(sentence) else frozenset()
    return not content_words(rest) - ABOUT_ANSWER - verdict - {"four", "three", "two", "five", "six", "above",
                                                               "statement"}


#: a sentence speaking of one source it does not number: "This source clearly states that …"
_THIS_SOURCE = re.compile(r"^\s*(?:this|that)\s+(?:source|document|passage)\b", re.IGNORECASE)
#: a sentence opening on what was just said: "This can be confirmed by the information provided in sources [1] and
#: [2].", "This matches the information provided in sources [1] and [2]." ("This is supported by research [1]." names
#: no source and stays)
_ON_THIS = re.compile(r"^\s*[*_]{0,3}(?:this|it)\s+(?:can|could|is|was|has|have|matches|aligns|corresponds|agrees)\b",
                      re.IGNORECASE)
#: words of a verdict on the answer rather than of a claim, in a sentence opening on the answer (``_ON_THE_ANSWER``):
#: "This answer is supported by both sources, making it a reliable and current fact based on the information
#: provided." (the bundled 1.5B model's chain_of_rag reports on HotpotQA and MuSiQue, 2026-12-03: 19 of 85 stored
#: reports held such verdicts, which read as a check no one made); "knowledge items" are deep_research's sources
VERDICT = frozenset("reliable reliably valid verified confirmed confirm confirms confirming consistent match matches "
                    "matching aligns align corroborated corroborates fact factual making makes trustworthy backed "
                    "current because research found finds shows showed show indicates indicated say says said "
                    "clear clearly fully well strongly complete definitely final short response conclusion overall "
                    "therefore thus hence knowledge item items".split())
#: a quoted span: the answer a verdict restates ('The answer "EA Sports" is supported by both sources [1] and [2].',
#: "The answer 'Paris' …", "The answer **Paris** …")
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]{1,300})[\"“”]|(?<!\w)['‘]([^'‘’\n]{1,300})['’](?!\w)|\*\*([^*\n]{1,300})\*\*")
#: a sentence opening on the answer itself ("The answer", "This answer", "**The final answer", "In conclusion, the
#: answer", "This response")
_ON_THE_ANSWER = re.compile(r"^\s*[*_]{0,3}(?:(?:in\s+conclusion|overall|therefore|thus),?\s+)?(?:the|this|our|my)\s+"
                            r"(?:short\s+|final\s+)?(?:answer|response)\b", re.IGNORECASE)
#: where a verdict's frame may end and its statement begin: after a word of finding or saying and "that" ("…
#: confirming that ", "… the research found that "), or after "because" (not "because of"); never at a comma, "as"
#: or "since" ("as shown in [1]", "as of 2020", "since 1990 …" begin no statement)
_FRAME_END = re.compile(r"\b(?:found|find|finds|shows?|showed|shown|showing|states?|stated|stating|says|said|"
                        r"confirms?|confirmed|confirming|indicates?|indicated|indicating|demonstrates?|demonstrated|"
                        r"establish(?:es|ed)?)\s+that\s+|\bbecause\s+(?!of\b)", re.IGNORECASE)
#: a statement cannot start here: it would go on with the frame or point back into it ("…, which provide …",
#: "because it matches …", "because he was born …", a citation or a quote)
_CONTINUES = re.compile(r"\s*(?:(?:which|who|whom|whose|where|while|whereas|and|or|but|so|making|thus|hence|"
                        r"providing|giving|with|without|it|its|this|that|they|these|those|he|she|his|her|him|we|our|"
                        r"us|you|your|i|one|there|them|their)\b|[\[【［\"“'‘])", re.IGNORECASE)
#: words by which a frame passes a verdict: 'The answer is "The Exies" because they were formed in 1997' gives a
#: reason for the answer, and "The answer states that refunds take 5 days" reports it; both stay
_JUDGING = frozenset("correct accurate supported support supports based confirmed verified reliable valid consistent "
                     "matches corresponds".split())
#: a word in a frame that limits or turns the verdict: "The answer is correct only because the question is ambiguous"
_LIMITING = re.compile(r"\b(?:only|partly|partially|not|never|no|hardly|unless|if|but|except|although|though)\b|"
                       r"n't\b", re.IGNORECASE)
#: a closing clause that vouches: ", which is supported by the information provided in source [1]", ", which
#: matches the information provided in the sources"; it must name the sources or cite one ("Smoking causes cancer,
#: which was confirmed by research [1]." keeps its clause)
_VOUCHING_TAIL = re.compile(
    r",?\s+(?:which|and\s+this|this|as)\s+(?:(?:is|was|are|were)\s+(?:also\s+|further\s+|fully\s+)?(?:supported|"
    r"confirmed|backed(?:\s+up)?|corroborated|verified|stated|mentioned|shown)\s+(?:by|in)|(?:directly\s+)?(?:matches|"
    r"aligns\s+with|corresponds\s+to|agrees\s+with)|is\s+consistent\s+with)\b(?P<tail>[^.!?;]*?)"
    r"(?P<end>[.!?]?[*_\"”’')]*\s*)$", re.IGNORECASE)
_NAMES_SOURCES = re.compile(r"\b(?:sources?|documents?|passages?|references?|information|text)\b|[\[【［]\d",
                            re.IGNORECASE)


def without_verdict(sentence: str, answer: str = "") -> str:
    """``sentence`` without a verdict on the answer wrapped around a statement: its opening frame, when every word of
    it is about the answer, its sources or their verdict and one of them judges the answer (``_JUDGING``: "The answer
    is correct because the research found that the Finnish markka predated the Euro in Finland" → "The Finnish
    markka predated the Euro in Finland"), and a closing clause vouching by the sources (", which is supported by the
    information provided in source [1]"). Their citations go to the statement. ``sentence`` as it is when the frame
    limits its verdict ("only because"), quotes an answer that ``answer`` (the text's ``Answer:`` line) does not say,
    when what follows could not stand alone (``_CONTINUES``), or when no verdict wraps it."""
    out = sentence
    if _ON_THE_ANSWER.match(sentence):
        allowed = ABOUT_ANSWER | VERDICT | ANCHORS
        cut = None
        for end in _FRAME_END.finditer(sentence):
            frame = _unquoted(sentence[:end.end()], answer)
            head = content_words(frame)
            if head - allowed or _LIMITING.search(frame) or _QUOTED.search(frame):
                break
            rest = sentence[end.end():]
            if head & _JUDGING and content_words(_QUOTED.sub(" ", rest)) - allowed and not _CONTINUES.match(rest):
                cut = end.end()
        if cut is not None:
            rest = sentence[cut:].lstrip()
            first = rest.split(maxsplit=1)[0] if rest.split() else ""
            if first.isalpha() and first.islower():  # "the Finnish markka" → "The …"; "iPhone", "eBay" stay
                rest = rest[:1].upper() + rest[1:]
            emphasis = re.match(r"\s*([*_]{1,3})(?=\w)", sentence)  # "**The answer is … [1].**": keep it balanced
            out = cite_sentence((emphasis[1] if emphasis else "") + rest, cited_numbers(sentence[:cut]))
    tail = _VOUCHING_TAIL.search(out)
    if tail and _NAMES_SOURCES.search(tail["tail"]) and not content_words(tail["tail"]) - ABOUT_ANSWER - ANCHORS - {
            "both", "all", "two", "three", "four"}:
        statement = out[:tail.start()].rstrip(" ,")
        if content_words(statement) - ABOUT_ANSWER - VERDICT:
            out = cite_sentence(statement + tail["end"], cited_numbers(tail["tail"]))
    if out == sentence:
        return sentence
    return out + (" " if sentence.endswith((" ", "\t")) and not out.endswith(" ") else "")


def quoted_answer(sentence: str) -> str:
    """The answer a verdict quotes, when ``sentence`` is nothing but that verdict ('The answer "EA Sports" is supported
    by both sources [1] and [2].' → "EA Sports"), else ``""``."""
    sentence = re.sub(r"^\s*([*_]{1,3})(.*?)\1(?=\s*$|\s*[\[【［])", r"\2", sentence.strip())  # "**…**"
    spans = [_span(m) for m in _QUOTED.finditer(sentence)]
    if not _ON_THE_ANSWER.match(sentence) or len(spans) != 1 or not content_words(spans[0]):
        return ""
    rest = _QUOTED.sub(" ", sentence)
    return spans[0].strip() if _vouches_only(rest) or about_the_answer(rest) else ""


def _span(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group is not None)


def _unquoted(sentence: str, answer: str) -> str:
    """``sentence`` with a quoted span left out where the sentence speaks of the answer and ``answer`` (the text's
    ``Answer:`` line) says the span, its words in order: the answer restated, not a claim of its own."""
    if not answer or not content_words(sentence) & ANCHORS:
        return sentence
    said = " " + " ".join(re.findall(r"\w+", answer.casefold())) + " "

    def restated(match: re.Match[str]) -> str:
        words_of = " ".join(re.findall(r"\w+", _span(match).casefold()))
        return " " if words_of and f" {words_of} " in said else match[0]

    return _QUOTED.sub(restated, sentence)


#: words that claim nothing by themselves (articles, auxiliaries, prepositions, pronouns, question words); negations
#: are not among them: "The sources do not say." says something
FUNCTION_WORDS = frozenset(
    "a an the is are was were be been being am of in on at to by for with from as this that these those it its and or "
    "but which who whom whose what where when how why than then there here has have had do does did can could will "
    "would should may might must shall also only both each every any all so such very more most into onto about over "
    "under between i we you he she they him her them his their our your me us my s".split())


def content_words(text: str) -> set[str]:
    """The words of ``text`` that can say something: every word (numbers and short words too, any script; "2.2" and
    "1,500" one word each), citations and ``FUNCTION_WORDS`` words aside, case folded."""
    return {w for w in re.findall(r"\d+(?:[.,:/-]\d+)*|\w+", strip_citations(text).casefold())
            if w not in FUNCTION_WORDS}


#: words of a sentence on the answer's own form, in a sentence opening on the answer (``_ON_THE_ANSWER``) or on
#: "This is/can …": "The answer is a short sentence that summarizes the key points from the sources provided." (the
#: bundled 1.5B model's deep_search report on data/, 2026-12-04, after a cited answer) tells of the prompt's format
#: rule, not of the question
FORM = frozenset("one single sentence sentences line lines word words brief briefly concise concisely succinct "
                 "summary summarize summarizes summarise summarises summarizing summarising key main points point "
                 "format formatted asks asked requested request requires required follows following".split())

#: the words that count as about the answer in a sentence opening on it (``about_the_answer``)
_ON_ANSWER_WORDS = VERDICT | FORM

#: the words by which a sentence speaks of the answer, the question or the sources as this report's own
ANCHORS = frozenset("answer answers question source sources".split())


def about_the_answer(sentence: str) -> bool:
    """``sentence`` speaks of the answer, the question or the sources (``ANCHORS``) and every word of it that can say
    something is about them (``ABOUT_ANSWER``): "The answer supports sources [1] and [2][3]." Not "The answer is 42
    [1].", "The sources do not say.", "It provides relevant passages as context [1]." (a retriever's, in a report on
    RAG), nor a labelled line ("Answer: Relevant passages"). Words of a verdict (``VERDICT``) or of the answer's form
    (``FORM``: "The answer is a short sentence that summarizes the key points from the sources provided.") count as
    about them in a sentence opening on the answer or on "This is/can …" only: "Sources must be reliable and current
    [1]." stays."""
    if ANSWER_LINE.match(sentence) or LABEL_PREFIX.match(sentence):
        return False
    mine = content_words(sentence)
    verdict = _ON_ANSWER_WORDS if _ON_THE_ANSWER.match(sentence) or _ON_THIS.match(sentence) else frozenset()
    return bool(mine & ANCHORS) and mine <= ABOUT_ANSWER | verdict


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
        body = folded(strip_citations(LIST_MARKER.sub("", line)))
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
            body = folded(strip_citations(part))
            if len(body) >= REPEAT_MIN_CHARS and body in seen and set(cited_numbers(part)) <= seen[body]:
                changed = True  # said before, with these citations: nothing of it is lost
                continue
            seen.setdefault(body, set()).update(cited_numbers(part))
            kept.append(part)
        out.append("".join(kept).rstrip() if len(kept) != len(parts) else line)
    return "\n".join(out) if changed else text
