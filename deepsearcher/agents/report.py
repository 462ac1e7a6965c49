"""The report step every agent ends with: choose the evidence, fit it to the window and the budget, write the cited
answer, and say plainly what limited it.

``write_report`` decides what the report is written from (``Evidence``):

- the chunks judged relevant, kept in the prompt by their fused rank across sub-queries when they do not all fit;
- nothing relevant although chunks were retrieved and judged: no LLM call; the report says the collections hold
  nothing relevant to the question, cites nothing and says what to load
  (``query.answer_from_top_chunks_when_irrelevant`` answers from the top-ranked chunks instead, under a warning);
- research stopped on the token budget before anything was judged: the top-ranked retrieved chunks (the seed's "beast
  mode": a final, forced answer from what there is), with a note that research stopped on the budget.

A report cut at its token limit keeps what it has and ends with a note naming the limit to raise; an empty answer
after reasoning that used up the limit says to raise ``llm.max_tokens``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from deepsearcher.agents import prompts
from deepsearcher.agents.budget import REPORT_REPLY_TOKENS, BudgetExhausted
from deepsearcher.agents.citations import (Verified, cited_numbers, cited_sources, consulted_sources, location,
                                          verify_citations)
from deepsearcher.agents.echoes import without_locations
from deepsearcher.agents.reply_guard import ReplyGuard
from deepsearcher.agents.short_answer import only_citations, report_and_short, settled_short, unnamed_options
from deepsearcher.agents.state import QueryContext
from deepsearcher.agents.steps import Item, PromptFn, by_collection, call_fitted, fit_prompt
from deepsearcher.agents.support import cite_copies, cite_ordinals, support_note, supporting_sentence
from deepsearcher.errors import ContextWindowError
from deepsearcher.events import QueryBudget, QueryCutOff, QueryFallback, QueryReasoning
from deepsearcher.llm.output import TextReply, ask_text, reasoning_used_up
from deepsearcher.llm.window import MIN_REPLY_TOKENS, Fit
from deepsearcher.protocols import ChatModel
from deepsearcher.types import Chunk, Hit, Message, Source, TokenCallback
from deepsearcher.vectordb.fusion import fused_priority, top_ranked

log = logging.getLogger(__name__)

#: the least reply room the report is written with; with less left of the budget no report call is made
MIN_REPORT_TOKENS = 4 * MIN_REPLY_TOKENS
LOAD_HINT = 'deepsearcher load PATH_OR_URL -c COLLECTION -d "what it holds"'


@dataclass(frozen=True)
class Evidence:
    """What research found, for the report.

    Attributes:
        accepted: chunks judged relevant (or, for an agent that does not judge, every chunk retrieved).
        rankings: every retrieval's ranking, best first (fused rank; the top-chunks fallbacks).
        sub_queries: the queries searched (shown to the report step).
        judged: relevance was judged (False: ``accepted`` is simply what was retrieved).
        stopped_on_budget: research stopped because the token budget would have been overrun.
        unjudged: chunks retrieved but never judged because research stopped on the budget first.
    """

    accepted: list[Hit]
    rankings: list[list[Hit]]
    sub_queries: list[str]
    judged: bool = True
    stopped_on_budget: bool = False
    unjudged: list[Hit] = field(default_factory=list)


@dataclass(frozen=True)
class Written:
    """The report's answer (Markdown, citations verified and renumbered), its cited sources, the count of citations
    removed because they named no chunk, whether the budget left no room for the report call at all, and the
    one-line short answer ("" when nothing was found to answer from)."""

    answer: str
    sources: list[Source]
    removed_citations: int = 0
    budget_spent: bool = False
    short_answer: str = ""


def collections_text(ctx: QueryContext) -> str:
    return ", ".join(f"{c.name} ({c.description})" if c.description else c.name for c in ctx.collections)


def nothing_found(ctx: QueryContext) -> str:
    """The answer when the searches returned no chunk at all."""
    return (f"Nothing was found for this question: the searched collections ({collections_text(ctx)}) returned no "
            f"passages. Load documents that cover it (`{LOAD_HINT}`) and ask again.")


def nothing_relevant(ctx: QueryContext) -> str:
    """The answer when every retrieved chunk was judged irrelevant."""
    return (f"The searched collections ({collections_text(ctx)}) hold nothing relevant to this question: every "
            f"passage retrieved was judged unrelated to it, so no answer is given and nothing is cited. Load documents "
            f"that cover the question (`{LOAD_HINT}`), or search other collections, and ask again.")


TOP_CHUNKS_WARNING = ("**Warning:** no retrieved passage was judged relevant to the question; this answer is written "
                      "from the top-ranked passages anyway (query.answer_from_top_chunks_when_irrelevant) and may not "
                      "answer it.")


def budget_note(ctx: QueryContext) -> str:
    return (f"**Research stopped on the token budget** ({ctx.budget.setting} = {ctx.budget.limit or 0:,} tokens): "
            "this report is written from what was found before it was spent.")


@dataclass(frozen=True)
class Chosen:
    """What a report is written from (``choose_evidence``): the hits and a warning to put above the answer, or, when
    no call should be made, the ``answer`` to give instead (``budget_spent``: because the budget left none)."""

    hits: list[Hit]
    warning: str = ""
    answer: str | None = None
    budget_spent: bool = False


def per_collection(rankings: Sequence[Sequence[Hit]]) -> list[list[Hit]]:
    """Each retrieval's ranking split into its collections' (``steps.by_collection``): a ``retrieve`` result is one
    collection's hits after another's, and read as one ranking its first collection's would outrank every other's
    best (a reviewer's finding, 2026-12-04)."""
    return [group for ranking in rankings for group in by_collection(ranking)]


def choose_evidence(ctx: QueryContext, evidence: Evidence) -> Chosen:
    """The hits a report is written from (see the module docstring for the cases); emits the ``relevance``
    fallback when it answers from top-ranked chunks nobody judged relevant."""
    if evidence.accepted:
        return Chosen(list(evidence.accepted))
    if evidence.stopped_on_budget and not any(evidence.rankings):
        return Chosen([], answer=budget_too_small(ctx, []).answer, budget_spent=True)
    if not any(evidence.rankings):
        return Chosen([], answer=nothing_found(ctx))
    if evidence.stopped_on_budget and evidence.unjudged:
        return Chosen(top_ranked(per_collection(evidence.rankings), ctx.settings.top_k))
    if evidence.judged and not ctx.settings.answer_from_top_chunks_when_irrelevant:
        return Chosen([], answer=nothing_relevant(ctx))
    hits = top_ranked(per_collection(evidence.rankings), ctx.settings.top_k)
    if not evidence.judged:
        return Chosen(hits)
    ctx.emit(QueryFallback(step="relevance", error="no retrieved chunk was judged relevant",
                           fallback=f"answering from the {len(hits)} top-ranked retrieved chunks, with a warning"))
    return Chosen(hits, TOP_CHUNKS_WARNING)


def write_report(ctx: QueryContext, evidence: Evidence, notes: str = "") -> Written:
    """Write the report from ``evidence`` (see the module docstring for the cases).

    Raises:
        ContextWindowError: the report prompt cannot fit even with one short excerpt.
        ProviderError: the server failed.
    """
    chosen = choose_evidence(ctx, evidence)
    if chosen.answer is not None:
        return Written(chosen.answer, [], budget_spent=chosen.budget_spent)
    written = synthesise(ctx, chosen.hits, evidence.rankings, evidence.sub_queries, notes)
    note = budget_note(ctx) if evidence.stopped_on_budget and not written.budget_spent else ""
    parts = [chosen.warning, written.answer, note]
    return Written("\n\n".join(p for p in parts if p), written.sources, written.removed_citations,
                   written.budget_spent, written.short_answer)


def write_fitted(ctx: QueryContext, step: str, render: PromptFn[Item], items: Sequence[Item],
                 priority: Sequence[float] | None, *, final: bool = True, stream: bool = True,
                 in_words: bool = False, guard: Callable[[Sequence[Item]], ReplyGuard] | None = None,
                 ) -> tuple[TextReply, list[Item]]:
    """Write free text (a report, DeepResearch's forced answer, a long report's section or editing pass) from a
    prompt holding ``items``, fitted to the window **and** to what the budget leaves: the prompt gets at most
    ``left - MIN_REPORT_TOKENS`` tokens, so a tight budget shortens excerpts and leaves out the items of worst
    ``priority`` rather than refusing the call; a prompt the server still refuses is fitted again to the window it
    names. Streams the text as ``query.answer_token`` (``stream``) and emits the reasoning.

    Args:
        final: the call writes a final text and may use the budget's reserve (``ctx.model(step, final=True)``).
        in_words: a reply of source numbers only ("[1][2][4]") is answered once with ``prompts.IN_WORDS`` in a
            follow-up turn and the second reply used (``ask_in_words``).
        guard: makes the ``ReplyGuard`` of a prompt from the items it holds: the reply is streamed through it and
            ends where it starts copying the sources or looping (a ``query.fallback`` event says so); not used
            when ``query.stop_runaway_reports`` is off.

    Returns:
        ``(reply, items kept)``; a reply cut at its limit has ``cut_off`` set (the caller adds ``cut_off_note``).

    Raises:
        BudgetExhausted: the budget left cannot pay for the prompt even without items plus ``MIN_REPORT_TOKENS``.
        ContextWindowError: the prompt cannot fit the window even without items, or the server kept refusing it.
        ProviderError: the server failed.
    """
    gate = ctx.model(step, final=final)
    shown_tokens = ctx.stream if stream else None
    start = ctx.streamed.chars  # what this call streams comes after; a replaced reply is taken back to here

    def watched(fit: Fit[Item]) -> tuple[TokenCallback | None, ReplyGuard | None]:
        """The reply's token callback for ``fit``: its guard first (it may end the reply), then the stream."""
        watch = guard(fit.items) if guard is not None and ctx.settings.stop_runaway_reports else None
        if watch is None:
            return shown_tokens, None

        def on_token(text: str) -> None:
            watch(text)
            if shown_tokens is not None:
                shown_tokens(text)
        return on_token, watch

    def fit_to_budget() -> Fit[Item]:
        left = ctx.budget.left(final)
        room = ctx.window.prompt_room() if left is None else min(ctx.window.prompt_room(), left - MIN_REPORT_TOKENS)
        try:
            return fit_prompt(ctx, step, render, items, priority, room)
        except ContextWindowError:
            if room < ctx.window.prompt_room():
                raise BudgetExhausted(step, ctx.budget.used, ctx.budget.limit or 0) from None
            raise

    def refused(fit: Fit[Item]) -> None:
        ctx.emit(QueryFallback(step=step, error="the prompt exceeds the model's context window",
                               fallback=f"fitting the prompt to {ctx.window.describe()}"))

    def ask(fit: Fit[Item]) -> TextReply:
        ctx.take_back(start, "the prompt was fitted again")  # a reply the server cut off by refusing the prompt
        on_token, watch = watched(fit)
        reply = stopped(ask_text(gate, fit.messages, on_token=on_token), watch)
        if not in_words:
            return reply
        on_token, watch = watched(fit)
        again = ask_in_words(ctx, step, gate, fit.messages, reply, on_token,
                             lambda: ctx.take_back(start, "the reply held only source numbers"))
        return reply if again is reply else stopped(again, watch)

    def stopped(reply: TextReply, watch: ReplyGuard | None) -> TextReply:
        """``reply`` as far as ``watch`` kept it, when it stopped the reply (a ``query.fallback`` event says so)."""
        if watch is None or not watch.reason:
            return reply
        ctx.emit(QueryFallback(step=step, error=watch.reason,
                               fallback="stopped the reply there; what it wrote before is the report"))
        # what it kept is all of the reply: the rest, cut at the limit or not, was the copy or the loop
        at = reply.text.find(watch.kept) if watch.kept else 0  # no text kept: the reply was the copy from its start
        kept = replace(reply, text=reply.text[:at + len(watch.kept)] if at >= 0 else reply.text, finish_reason="stop")
        if shown_tokens is not None:  # the preview shows what is kept, not the copy or loop that streamed after it
            ctx.take_back(start, "the reply was stopped")
            if kept.text:
                shown_tokens(kept.text)
        return kept

    reply, fit = call_fitted(ctx, fit_to_budget, ask, refused)
    if reply.reasoning:
        ctx.emit(QueryReasoning(step=step, text=reply.reasoning))
    return reply, fit.items


def ask_in_words(ctx: QueryContext, step: str, gate: ChatModel, messages: Sequence[Message], reply: TextReply,
                 on_token: TokenCallback | None, restart: Callable[[], None] = lambda: None) -> TextReply:
    """``reply``, or when it held only source numbers, the reply to one follow-up turn asking for the answer in
    words. Why: small models (Qwen2.5-Coder-0.5B) answered the earlier report prompt (rules first, "a source number
    after every statement") with the numbers alone for a third to a half of multi-hop questions, and a second turn
    got words; the prompt's present order (rules last) made such replies rare (0 of 50 HotpotQA questions,
    docs/benchmarks.md "The report prompt"), and this turn stays for the ones that remain."""
    if not only_citations(reply.text):
        return reply
    ctx.emit(QueryFallback(step=step, error="the reply held only source numbers, no answer in words",
                           fallback="asked once more for the answer in words"))
    again = [*messages, Message(role="assistant", content=reply.text), Message(role="user", content=prompts.IN_WORDS)]
    restart()  # the numbers streamed are replaced by the words
    return ask_text(gate, again, on_token=on_token)


def synthesise(ctx: QueryContext, hits: Sequence[Hit], rankings: Sequence[Sequence[Hit]] = (),
               sub_queries: Sequence[str] = (), notes: str = "") -> Written:
    """Write the cited answer from ``hits`` (numbered 1..N in the prompt), streaming it as ``query.answer_token``.

    The prompt is fitted to the window and to what the budget leaves (``write_fitted``: excerpts first, then the
    chunks of worst fused rank over ``rankings``). The reply ends where the model starts copying the sources or
    saying a sentence over and over (``reply_guard.ReplyGuard``; ``query.stop_runaway_reports``). A short answer
    that names neither of two options the question offers ("John Allen" for "Who was born first out of Aivar
    Kuusmaa and Andy Summers?") is asked for once more, from the sources without the research notes (a chain's
    intermediate answers had said "John Allen was born first …", and the model followed them), the prompt naming
    both options (``prompts.NAME_AN_OPTION``); the second report is kept when its answer names one, or says neither
    does.

    Returns:
        ``Written``: the answer with citations verified and renumbered; the cited sources (every chunk shown, when
        the answer cites none); the count of removed citations.
    """
    priority = fused_priority(hits, per_collection(rankings)) if rankings else None

    def guard(kept: Sequence[Hit]) -> ReplyGuard:
        return ReplyGuard([h.chunk for h in kept])

    def render_with(notes: str, rule: str) -> PromptFn[Hit]:
        def render(kept: Sequence[Hit], cap: int | None) -> str:
            queries = prompts.bullet_list([prompts.excerpt(q, cap) for q in list(sub_queries) or [ctx.question]])
            return prompts.SYNTHESISE.format(language=ctx.language, notes=notes, question=ctx.question,
                                             sub_queries=queries,
                                             chunks=prompts.chunk_list([h.chunk for h in kept], cap)) + rule
        return render

    def written(notes: str, rule: str) -> Written:
        try:
            try:
                reply, shown = write_fitted(ctx, "synthesise", render_with(notes, rule), hits, priority,
                                            in_words=True, guard=guard)
            except ContextWindowError as exc:
                if not notes:
                    raise
                # the notes are for orientation; the sources are what the report is written from (a chain of long
                # follow-ups in a small window left no room for even one source)
                ctx.emit(QueryFallback(step="synthesise",
                                       error=f"the research notes leave no room for the sources: {exc}",
                                       fallback="writing the report without the notes"))
                reply, shown = write_fitted(ctx, "synthesise", render_with("", rule), hits, priority, in_words=True,
                                            guard=guard)
        except BudgetExhausted:
            return budget_too_small(ctx, hits)
        return read_report(ctx, reply, shown)

    start = ctx.streamed.chars
    first = written(notes, "")
    offered = unnamed_options(first.short_answer, ctx.question)
    if offered is None:
        return first
    ctx.emit(QueryFallback(step="synthesise", error=f"the short answer ({first.short_answer!r}) names neither "
                           f"option the question offers ({offered[0]!r} or {offered[1]!r})",
                           fallback="asked once more, from the sources alone, for a report whose answer names "
                                    "one of them"))
    first_streamed = ctx.streamed.since(start)
    ctx.take_back(start, "the report is asked for again")
    # without the research notes: a chain's intermediate answer naming the third thing is what the model followed
    again = written("", prompts.NAME_AN_OPTION.format(first=offered[0], second=offered[1]))
    if again.budget_spent or not again.short_answer or unnamed_options(again.short_answer, ctx.question):
        ctx.take_back(start, "the first report is kept")  # the preview ends as the reply the report is read from
        if first_streamed:
            ctx.stream(first_streamed)
        return first
    return again


def read_report(ctx: QueryContext, reply: TextReply, shown: Sequence[Hit]) -> Written:
    """The ``Written`` of a report reply over ``shown`` (the sources its prompt numbered): the short answer and the
    report read from it, copies and ordinals cited, citations verified, the supporting sentence quoted under a
    report citing none."""
    cited = list(dict.fromkeys(cited_numbers(reply.text)))
    if only_citations(reply.text) and all(1 <= n <= len(shown) for n in cited):  # "[3, 4]" with 1 source: a value
        numbers = ", ".join(str(n) for n in cited)  # still, after the turn asking for words: no answer
        return Written(f"The model returned only source numbers ({numbers}), no answer in words.",
                       consulted_sources(shown))
    chunks = [h.chunk for h in shown]
    headers = [(c.title, location(c)) for c in chunks]
    text, short = report_and_short(reply.text, chunks, ctx.question)
    # after short_answer_of: a copied source list is known by its locations
    text = without_locations(text, headers)
    text, _ = cite_copies(text, chunks)  # a source's text told again, uncited: its number
    text, _ = cite_ordinals(text, len(shown))  # "The first source states …": the first shown source's number
    short = settled_short(short, ctx.question, headers)
    verified = verify_citations(text, len(shown))
    if not verified.text:
        return Written(empty_answer(reply), consulted_sources(shown), verified.removed)
    if not verified.cited:
        verified = with_support(ctx, verified, short, chunks)
    sources = cited_sources(verified, shown) if verified.cited else consulted_sources(shown)
    return Written(verified.text + cut_off(ctx, "synthesise", reply), sources, verified.removed,
                   short_answer=short)


def with_support(ctx: QueryContext, verified: Verified, short: str, chunks: Sequence[Chunk | None]) -> Verified:
    """``verified`` (a report citing nothing), with the source sentence that holds the short answer's words quoted
    under it and cited (``support.supporting_sentence``), when one does; a ``query.fallback`` event says so.
    ``chunks``: the numbered sources the report could cite, in order (``None`` for an item that has none)."""
    found = supporting_sentence(short, ctx.question, chunks)
    if found is None:
        return verified
    number, sentence = found
    ctx.emit(QueryFallback(step="synthesise", error="the report cites no source",
                           fallback=f"quoted the sentence of source [{number}] that holds the answer's words"))
    again = verify_citations(f"{verified.text}\n\n{support_note(number, sentence)}", len(chunks))
    return Verified(again.text, again.cited, verified.removed + again.removed)


def cut_off(ctx: QueryContext, step: str, reply: TextReply) -> str:
    """For a text reply cut at its token limit: emit ``QueryCutOff`` and return the note to append ("" when the
    reply is complete)."""
    if not reply.cut_off:
        return ""
    ctx.emit(QueryCutOff(step=step, max_tokens=reply.max_tokens, action="kept the partial report with a note"))
    return "\n\n" + cut_off_note(ctx, reply)


def cut_off_note(ctx: QueryContext, reply: TextReply) -> str:
    """The visible note under a report cut at its token limit, naming the limit to raise."""
    limit = reply.max_tokens
    configured = ctx.window.reply_tokens
    if limit is not None and limit < configured and ctx.budget.limit is not None:
        return (f"*[The report was cut off at {limit:,} tokens, all that the token budget left "
                f"({ctx.budget.setting} = {ctx.budget.limit:,}); raise it for a complete report.]*")
    if limit is not None and limit < configured:
        return (f"*[The report was cut off at {limit:,} tokens, all that the model's context window "
                f"({ctx.window.size:,} tokens) left; use a larger context or a lower query.top_k.]*")
    return (f"*[The report was cut off at llm.max_tokens = {limit or configured:,} tokens; raise llm.max_tokens for a "
            "complete report.]*")


def empty_answer(reply: TextReply) -> str:
    """The answer when the model wrote none: a reasoning model that spent its limit thinking is told apart."""
    if reply.reasoning and (reply.cut_off or not reply.text):
        return f"The model returned no answer: {reasoning_used_up(reply.max_tokens)}."
    return "The model returned an empty answer."


def budget_too_small(ctx: QueryContext, hits: Sequence[Hit]) -> Written:
    """The answer when the budget left cannot pay for a report call: what was found is listed, nothing written."""
    limit, setting = ctx.budget.limit or 0, ctx.budget.setting
    if hits:
        ctx.emit(QueryBudget(step="synthesise", used=ctx.budget.used, budget=limit, reserve=ctx.budget.reserve))
    found = f" The {len(hits)} passages found are listed as sources." if hits else ""
    return Written(f"**Research stopped on the token budget** ({setting} = {limit:,} tokens, "
                   f"{ctx.budget.used:,} used) before a report could be written.{found} Raise {setting} "
                   "and ask again.", consulted_sources(hits), budget_spent=True)


def report_reserve(ctx: QueryContext, accepted: Sequence[Hit], sub_queries: Sequence[str]) -> int:
    """Tokens the final report is expected to need now: its prompt over ``accepted`` (at most the window's prompt
    room) plus a reply of up to ``REPORT_REPLY_TOKENS``. Agents keep it back from the budget (``set_reserve``)."""
    frame = prompts.SYNTHESISE.format(language=ctx.language, notes="", question=ctx.question,
                                      sub_queries=prompts.bullet_list(sub_queries), chunks="")
    body = sum(ctx.window.count(prompts.chunk_block(i, h.chunk)) for i, h in enumerate(accepted, start=1))
    prompt = min(ctx.window.prompt_room(), ctx.window.count_messages(ctx.messages(frame)) + body)
    return prompt + min(ctx.window.reply_tokens, REPORT_REPLY_TOKENS)
