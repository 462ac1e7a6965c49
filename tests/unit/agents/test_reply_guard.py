"""The report's reply is stopped where a small model starts copying its sources or saying a sentence over and over:
what it wrote before is the report, and the cut-off note no longer blames ``max_tokens``."""

from __future__ import annotations

import re
from typing import Sequence

import pytest

from deepsearcher.agents import naive_rag
from deepsearcher.agents.reply_guard import COPYING, LOOPING, PASTE_STOP_CHARS, ReplyGuard
from deepsearcher.events import Event
from deepsearcher.llm.output import ask_text
from deepsearcher.testing.scripted import ScriptedChatModel
from deepsearcher.types import ChatResult, Message, StopReply, TokenCallback
from tests.unit.query_fakes import MILVUS_DOCS, make_ctx, of_kind

QUESTION = "Where does Milvus Lite store data?"
LITE, LITE_FILE = MILVUS_DOCS[0], MILVUS_DOCS[1]


def fed(guard: ReplyGuard, text: str) -> str:
    """Stream ``text`` to ``guard`` in word-sized pieces; returns what had been streamed when it stopped (all of
    ``text`` when it did not)."""
    streamed = ""
    for piece in re.findall(r"\s*\S+|\s+", text):
        streamed += piece
        try:
            guard(piece)
        except StopReply:
            break
    return streamed


def headers(prompt: str) -> list[tuple[str, str]]:
    """The prompt's source headers and the text under each: ``[(header line, text), …]``."""
    found = re.findall(r"^(\[\d+\] [^\n]*\([^()\n]*\))\n(.*?)(?=\n\n\[\d+\] |\n\nQuestion:)", prompt, re.M | re.S)
    assert found, prompt
    return found


def pasting(answer: str, tail: str = "") -> object:
    """A report reply (answering from the prompt it is given): ``answer``, then "Sources:" and each shown source's
    header and text again, as Qwen2.5-Coder-1.5B wrote 2WikiMultiHopQA reports, then ``tail``."""
    def reply(messages: Sequence[Message]) -> ChatResult:
        copy = "\n".join(f"{header}\n{text}" for header, text in headers(messages[-1]["content"]))
        return ChatResult(f"Answer: {answer}\n\nSources:\n{copy}\n{tail}", finish_reason="length")
    return reply


#: what the model writes before it copies its sources: longer than the 256 characters the reasoning filter holds back
EXPLAINED = ("In a local file [2].\n\nMilvus Lite is the lightweight version of Milvus that runs inside your Python "
             "process [2], and it keeps everything it stores in one local file on the disk [1], which is why it suits "
             "prototypes and notebooks rather than a shared deployment [1].")


def test_a_report_that_copies_its_sources_is_stopped_there_and_not_blamed_on_max_tokens():
    llm = ScriptedChatModel([pasting(EXPLAINED, "More of the same. " * 40)], max_tokens=512)
    events: list[Event] = []
    report = naive_rag.run(make_ctx(llm, QUESTION, events=events))
    written = llm.history[0].reply
    shown = headers(llm.prompts[0])
    # the reply ends inside the first source copied with PASTE_STOP_CHARS of its text under its header
    k = next(at for at, (_, text) in enumerate(shown) if len(text) >= PASTE_STOP_CHARS)
    before, header, last = written.rsplit("\n", 2)
    assert header == shown[k][0] and shown[k][1].startswith(last) and len(last) >= PASTE_STOP_CHARS
    assert before.startswith(f"Answer: {EXPLAINED}\n\nSources:\n") and "More of the same" not in written
    assert all(later not in written for later, _ in shown[k + 1:])
    assert report.short_answer == "In a local file."
    assert "one local file on the disk [" in report.answer
    assert "cut off" not in report.answer and "max_tokens" not in report.answer
    assert all(text not in report.answer for _, text in shown)  # the copy is not the report
    assert of_kind(events, "query.cut_off") == []
    assert [f["error"] for f in of_kind(events, "query.fallback")] == [COPYING]


def test_with_the_option_off_the_report_runs_to_its_end():
    reply = pasting(EXPLAINED, "More of the same. " * 40)
    llm = ScriptedChatModel([reply], max_tokens=512)
    events: list[Event] = []
    report = naive_rag.run(make_ctx(llm, QUESTION, events=events, stop_runaway_reports=False))
    assert llm.history[0].reply.endswith("More of the same. ")
    assert "cut off" in report.answer and of_kind(events, "query.fallback") == []


def test_a_sentence_said_a_third_time_ends_the_reply():
    loop = "Milvus Lite keeps its data in one local file [2]. "
    llm = ScriptedChatModel([ChatResult(f"Answer: {EXPLAINED}\n\n" + loop * 30, finish_reason="length")])
    events: list[Event] = []
    report = naive_rag.run(make_ctx(llm, QUESTION, events=events))
    assert llm.history[0].reply.count("its data in one local file") == 3
    assert report.answer.count("its data in one local file") == 1 and "cut off" not in report.answer
    assert [f["error"] for f in of_kind(events, "query.fallback")] == [LOOPING]


@pytest.mark.parametrize("reply", [
    # the sources used, listed by header, with no text under them
    "Answer: In a local file [1].\n\nSources:\n[1] lite (/d/lite.md)\n[2] lite (/d/lite.md)\n",
    # a source's sentence quoted in the report, not under a header
    f"Answer: In a local file.\n\nThe documentation says: {LITE_FILE.text} [1]\n",
    # a header, then the model's own words
    "Answer: In a local file.\n\n[1] lite (/d/lite.md)\nThe file is where Milvus Lite keeps every collection it "
    "creates, which suits a notebook.\n",
    # a line a config example repeats on purpose, in a code fence
    "Answer: Set the index type per field.\n\n```yaml\nfields:\n" + "  - index_type: IVF_FLAT and metric L2.\n" * 3
    + "```\nEach field gets its own index [1].\n",
    # a sentence said twice (once more may be a summary)
    "Answer: In a local file.\n\nMilvus Lite keeps its data in one local file [1]. Milvus Lite keeps its data in "
    "one local file [1].\n",
])
def test_replies_that_neither_copy_nor_loop_are_written_whole(reply: str):
    guard = ReplyGuard([LITE, LITE_FILE])
    assert fed(guard, reply) == reply and guard.reason == ""


def test_the_copy_is_known_by_a_shown_sources_header_and_text():
    text = LITE.text
    copied = f"Answer: In-process.\n\n[1] lite (/d/lite.md)\n{text}\n[2] limits (/d/limits.md)\nCollection names"
    guard = ReplyGuard([LITE, LITE_FILE])
    stopped = fed(guard, copied)
    last = stopped.rsplit("\n", 1)[-1]  # stopped inside the pasted text, once it is long enough to be a copy
    assert guard.reason == COPYING and text.startswith(last) and PASTE_STOP_CHARS <= len(last) <= len(text)
    assert "[2] limits" not in stopped
    # another location, or text no source holds, is not a copy
    for other in (copied.replace("/d/lite.md", "/d/elsewhere.md"), copied.replace(text, text[::-1])):
        guard = ReplyGuard([LITE, LITE_FILE])
        assert fed(guard, other) == other and guard.reason == ""


class Plugin:
    """A chat model that streams and knows nothing of ``StopReply`` (a third-party provider)."""

    name = "plugin"
    pieces = ["Answer: yes."] + [f" Word {n}." for n in range(100)]

    def chat(self, messages: Sequence[Message], *, schema: object = None, on_token: TokenCallback | None = None,
             max_tokens: int | None = None) -> ChatResult:
        text = ""
        for piece in self.pieces:
            text += piece
            if on_token is not None:
                on_token(piece)
        return ChatResult(text, finish_reason="length")


def test_a_model_that_does_not_catch_the_stop_ends_the_reply_with_what_it_streamed():
    def on_token(piece: str) -> None:
        if "Word 40." in piece:
            raise StopReply("enough")

    reply = ask_text(Plugin(), [Message(role="user", content="Is it so?")], on_token=on_token)
    assert (reply.finish_reason, reply.cut_off) == ("stop", False)
    assert reply.text == "".join(Plugin.pieces[:Plugin.pieces.index(" Word 40.") + 1])


def test_a_copy_with_slips_is_a_copy():
    # When the Stars Go Blue (2Wiki, 2026-12-04): the model dropped the quote marks around the song's name, and ran
    # its report to max_tokens copying source after source
    from deepsearcher.types import Chunk

    panda = Chunk(id="p", text='" Panda" is a song of the Chilean band Astro and is the fifth song of the homonymous '
                  "album of the year 2011. The song was composed and produced by the singer of the band Andrés "
                  "Nusser.", source="/d/slice.json", title="Panda (Astro song)", page=None, chunk_index=0,
                  doc_hash="h")
    reply = ("Answer: American\n\nSources:\n[3] Panda (Astro song) (/d/slice.json)\nPanda is a song of the Chilean "
             "band Astro and is the fifth song of the homonymous album of the year 2011. The song was composed and "
             "produced by the singer of the band Andrés Nusser.\n\n[4] Etan Boritzer (/d/slice.json)\n")
    guard = ReplyGuard([LITE, panda])
    stopped = fed(guard, reply)
    assert guard.reason == COPYING and "[4] Etan" not in stopped


def test_text_past_the_copy_in_the_same_delta_is_not_the_report():
    # MuSiQue (2026-12-04): the copy began within the first 256 characters, which the reasoning filter passes at
    # once, so the stop came with the next header half written: "[2] McRae, Arkansas (/work/…" ended the report
    def reply(messages: Sequence[Message]) -> ChatResult:
        shown = headers(messages[-1]["content"])
        first, text = next((h, t) for h, t in shown if len(t) >= PASTE_STOP_CHARS)
        second = next(h for h, _ in shown if h != first)
        return ChatResult(f"Answer: In a local file.\n\nSources:\n{first}\n{text}\n\n{second[:14]}",
                          finish_reason="length")

    llm = ScriptedChatModel([reply, reply])
    report = naive_rag.run(make_ctx(llm, QUESTION))
    assert report.short_answer == "In a local file."
    assert "[2]" not in report.answer and "(/d/" not in report.answer and "cut off" not in report.answer


def test_a_loop_in_chinese_is_a_loop():
    # no space follows a full-width full stop: each 。 ends a sentence
    loop = "Milvus Lite 把所有数据保存在本机的一个本地文件里，适合原型和笔记本环境使用。"
    reply = "答案：本地文件。\n\n" + loop * 8
    guard = ReplyGuard([])
    streamed = ""
    try:
        for piece in reply:  # one character at a time, as a tokenizer of Han text nearly does
            streamed += piece
            guard(piece)
    except StopReply:
        pass
    assert guard.reason == LOOPING and streamed.count(loop) == 3
    assert guard.kept == "答案：本地文件。\n\n" + loop  # said once
