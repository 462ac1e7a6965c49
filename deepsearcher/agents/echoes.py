"""What a small model copies from its prompt into a reply, taken out before the report and its short answer are read.

The prompt's labels ("A short direct answer:", "**Answer:**", "Explanation:", translated ones: ``strip_leaked_label``
and the ``ANSWER_LINE`` form ``short_answer.split_short_answer`` reads), its numbered source list and scaffolding
(``strip_echoed_sources``), its format rules (``without_prompt_rules``), the sources' locations (``without_locations``
in a report, ``without_echoes`` in a short answer, with the question or the system prompt given back as an answer).
Each rule was found in the replies of Qwen2.5-Coder-0.5B/1.5B (docs/benchmarks.md) and keeps what a user wrote or
needs: a rule acts on the prompt's own text, never on words that only look like it.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Sequence

from deepsearcher.agents.citations import cited_numbers, folded, location, strip_citations, without_code
from deepsearcher.agents.prompts import NO_ANSWER_RULE, REPORT_FORMAT, SYSTEM
from deepsearcher.agents.rewrites import overlap, words
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
LABEL_PREFIX = re.compile(rf"^\s*(?:#{{1,6}}\s*)?[*_]*\s*{_LEAKED_WORDS}\s*[*_]*\s*[:：\-–—]\s*[*_]*\s*",
                           re.IGNORECASE)


#: the short-answer line the report prompt asks for, last in the reply ("Answer: 1961", "**Final answer:** yes")
ANSWER_LINE = re.compile(rf"^\s*(?:[-*>]\s+)?(?:#{{1,6}}\s*)?[*_]*\s*{_LABEL_WORDS}\s*[*_]*\s*[:：]\s*[*_]*\s*"
                          r"(?P<answer>.*?)\s*[*_]*\s*$", re.IGNORECASE)


#: the label the report prompt asks for ("Answer:", also "Final answer:" / "Short answer:"), in any Markdown dress
ASKED_LABEL = re.compile(r"^\s*(?:[-*>]\s+)?(?:#{1,6}\s*)?[*_]*\s*(?:(?:(?:final|short)\s+)?answer|(?:kurze\s+)?"
                          r"antwort|réponse|reponse|respuesta|risposta|resposta|antwoord|ответ|答案|回答|答え|답변|"
                          r"الإجابة|الجواب)\s*[*_]*\s*[:：]", re.IGNORECASE)


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
    pasting = False  # under an echoed source header: a shown source's text pasted there goes too
    pasted_texts = [folded(chunk.text) for chunk in shown or () if chunk is not None] \
        if any(_ECHOED_SOURCE.match(line) for line in lines) else []  # folded once, not once per line
    for at, line in enumerate(lines):
        if at in listed:
            continue
        if pasting:
            if not line.strip() or pasted_from(line, pasted_texts):
                continue
            pasting = False
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
        header = shown_header(line, shown) if shown is not None else bool(_ECHOED_SOURCE.match(line))
        if header and shown is not None:
            pasting = True  # the text under it may be another source's: the model numbers its copy as it likes
        if not (_ECHOED_HEADING.match(line) or header):
            kept.append(line)
    return "\n".join(kept).strip() if len(kept) != len(lines) else text


#: characters a line must have to be taken for a source's text pasted under its echoed header (``pasted_from``)
PASTED_MIN_CHARS = 20
#: share of a line's word 4-grams (``PASTED_GRAM``) one shown source must hold for the line to be that source's text
#: copied with slips: the bundled 1.5B model drops quote marks (``" Panda" is a song`` → ``Panda is a song``), or
#: puts another name first and goes on with a source's text (docs/benchmarks.md)
PASTED_SHARE = 0.8
PASTED_GRAM = 4


def pasted_from(line: str, texts: Sequence[str]) -> bool:
    """``line`` is the text of a chunk as the prompt showed it, copied (a part of it, spaces and case aside, an
    ellipsis or a cut at its end allowed, or ``PASTED_SHARE`` of its word 4-grams in one source when it has three or
    more); ``texts``: the shown chunks' texts, spaces collapsed and case-folded. The bundled 1.5B model wrote its report
    as the prompt's "Sources:" list again, each source's header then its text (at times another source's), in 12 of 20
    2WikiMultiHopQA reports: the header went, the text stayed and was cited as the report's statements
    (docs/benchmarks.md)."""
    said = folded(line).rstrip("…. ")
    if len(said) < PASTED_MIN_CHARS:
        return False
    if any(said in text for text in texts):
        return True
    grams = _word_grams(strip_citations(said))
    return len(grams) >= 3 and any(len(grams & _word_grams(text)) >= PASTED_SHARE * len(grams) for text in texts)


@functools.lru_cache(maxsize=64)
def _word_grams(text: str) -> frozenset[tuple[str, ...]]:
    """The word ``PASTED_GRAM``-grams of ``text`` (cached: a source's text is looked at for every line under a
    header, and for every delta of a streamed report)."""
    return frozenset(_grams(re.findall(r"\w+", text), PASTED_GRAM))


def shown_header(line: str, shown: Sequence[Chunk | None]) -> bool:
    """``line`` is a shown source's header copied: ``[n] Title (location)`` with a location of ``shown``."""
    header = _ECHOED_SOURCE.match(line)
    return bool(header and _is_shown(header["where"], shown, "location"))


def _is_shown(name: str, shown: Sequence[Chunk | None], *fields: str) -> bool:
    """``name`` is the title or location (``fields``) of a shown source, case and spacing aside."""
    wanted = folded(name)
    for chunk in shown:
        if chunk is None:
            continue
        names = {"title": chunk.title, "location": location(chunk)}
        if any(folded(names[f]) == wanted for f in fields):
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
_HANGING = re.compile(r"[\s\"'“”‘’:.,;!\]]*")
_RULE_GRAMS = _grams([w.casefold() for w in re.findall(r"\w+", REPORT_FORMAT)], RULE_ECHO_WORDS)
#: the prompt's rules dropped only when a line copies one whole, as words: any few of their words are what a report
#: may need to say ("The sources do not answer the question.")
_WHOLE_RULES = tuple(tuple(w.casefold() for w in re.findall(r"\w+", rule)) for rule in (NO_ANSWER_RULE,))


def without_prompt_rules(text: str) -> str:
    """``text`` without the runs of ≥ ``RULE_ECHO_WORDS`` words it copies from the report prompt's format rules
    (``prompts.REPORT_FORMAT``) and the copies of its whole last rule (``prompts.NO_ANSWER_RULE``), line by line,
    with the punctuation left hanging after them. The bundled 1.5B model began a 2WikiMultiHopQA report with
    "]. If the sources do not answer the question, say so plainly instead of guessing.", the prompt's last words.
    Qwen2.5-Coder-0.5B's chain_of_rag report read "a name, date, number, yes/no, or one short sentence. The first
    line is "Answer: " followed by the short answer in words: a demon Lilu, [1] …". Lines with no such run are
    returned as written."""
    out = []
    for line in text.split("\n"):
        tokens = list(re.finditer(r"\w+", line))
        folded = [t.group().casefold() for t in tokens]
        covered = [False] * len(tokens)
        for i in range(len(tokens) - RULE_ECHO_WORDS + 1):
            if tuple(folded[i:i + RULE_ECHO_WORDS]) in _RULE_GRAMS:
                covered[i:i + RULE_ECHO_WORDS] = [True] * RULE_ECHO_WORDS
        for rule in _WHOLE_RULES:
            for i in range(len(tokens) - len(rule) + 1):
                if tuple(folded[i:i + len(rule)]) == rule:
                    covered[i:i + len(rule)] = [True] * len(rule)
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
        rest = _HANGING.sub("", "".join(kept), count=1).rstrip()
        out.append(rest if re.search(r"\w", rest) else "")  # "**" left around a rule copied in bold: nothing said
    return "\n".join(out)


#: the "Explanation:" label at the start of a later line ("- … → The Enola Gay …\n\nExplanation: The Enola Gay dropped
#: …", a 0.5B chain_of_rag report on MuSiQue): the label goes, the explanation stays
EXPLANATION_LINE = re.compile(r"(?im)^([ \t]*)(?:#{1,6}[ \t]*)?[*_]*[ \t]*(?:the[ \t]+)?explanation"
                               r"(?:[ \t]+of[ \t]+the[ \t]+answer)?[ \t]*[*_]*[ \t]*[:：][ \t]*[*_]*[ \t]*")


def strip_leaked_label(text: str) -> str:
    """``text`` without a prompt label at its start ("A short direct answer:", "**Short Direct Answer:**" on its
    own line or before the answer, "## Direct answer"); other text is returned unchanged."""
    stripped = _LABEL_LINE.sub("", text, count=1)
    if stripped == text:
        stripped = LABEL_PREFIX.sub("", text, count=1)
    if stripped == text:
        stripped = _RESTATED.sub("", text, count=1)
    return stripped.lstrip("\n") if stripped != text else text


#: a sentence of the system prompt (``prompts.SYSTEM``) as a short answer, its date and zone in the forms it gives
_SYSTEM_SENTENCES = [
    re.compile(r"^\s*" + re.sub(r"\\ ", r"\\s+", re.escape(part.strip().rstrip(".;"))).replace(
        re.escape("{date}"), r"\d{4}-\d{2}-\d{2}(?:\s*\(\w+\))?").replace(
        re.escape("{zone}"), r"UTC\S*(?:\s*\([^)]*\))?") + r"\s*[.;]?\s*$", re.IGNORECASE)
    for part in re.split(r"(?<=[.;])\s+", SYSTEM) if part.strip()]


#: share of words a question-like short answer and the question must share both ways to be the question again
QUESTION_ECHO = 0.8


def without_echoes(short: str, question: str, headers: Iterable[tuple[str, str]] = ()) -> str:
    """``short`` without what the prompt showed: a source's location (``headers``: the shown sources' (title,
    location) pairs) right after its whole title — in brackets as the prompt's headers give it ("Lilu (mythology)
    (/data/corpus.json)" → "Lilu (mythology)"), or bare when the title opens the answer or an item of it (after a
    comma or semicolon: "Alexandria International Airport (Louisiana) /data/c.json, Watertown International Airport
    /data/c.json"); a location after other words stays, a user may need it ("Edit the config /etc/app/config.yaml,
    then restart", "Raise it in (/d/limits.md)"), and so does an answer that is only a location. And ``""`` for a short answer that
    is the question again (a question sharing ≥ 80 % of its words with the question, both ways: a title that is a
    question stays) or sentences of the system prompt ("Today is 2026-12-02 (Wednesday)", unless the question asks
    for the date). Measured with Qwen2.5-Coder-0.5B on HotpotQA: each of the three came back as the whole short
    answer."""
    pairs = [(folded(title), where) for title, where in headers if where]
    cleaned = short
    for where in sorted({w for _, w in pairs}, key=len, reverse=True):
        place = re.escape(where)
        titles = [t for t, w in pairs if w == where and t]
        copied = re.compile(rf"(?<=\S)(?<!\])(?P<bracketed>[ \t]*"
                            rf"(?:\([ \t]*{place}[ \t]*\)|\[[ \t]*{place}[ \t]*\]))"
                            rf"|(?<=\S)\s+{place}(?=\s*(?:[,;]|$))")
        spans = [m.span() for m in copied.finditer(cleaned)
                 if _after_title(cleaned[:m.start()], titles, anywhere=m["bracketed"] is not None)]
        for start, end in reversed(spans):
            cleaned = cleaned[:start] + cleaned[end:]
    cleaned = " ".join(cleaned.split()).strip(" ,;")
    short = cleaned or short
    parts = [part for part in re.split(r"(?<=[.;])\s+", short) if part.strip()]
    asks_date = bool({"today", "date", "day"} & {w.casefold() for w in re.findall(r"\w+", question)})
    if parts and not asks_date and all(any(p.match(part) for p in _SYSTEM_SENTENCES) for part in parts):
        return ""
    return "" if repeats_question(short, question) else short


def _after_title(before: str, titles: Sequence[str], anywhere: bool) -> bool:
    """``before`` ends with one of ``titles`` (case folded, spacing single) at a word's start, ``anywhere`` (for a
    location in brackets: "… when David Morse (politician) (/data/c.json) was born") or else only where the title
    starts ``before`` or one of its items (after a comma or semicolon): "Watertown, New York" is one title; "In
    limits" does not start with one."""
    text = folded(before)
    start = r"(?<!\w)" if anywhere else r"(?:^|[,;])\s*"
    return any(re.search(rf"{start}{re.escape(t)}$", text) for t in titles)


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
