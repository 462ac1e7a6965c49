"""Does a model judge relevance by reading? The same retrieved chunks, the relevance prompt in several forms.

For each question of a QA dataset folder (``../shared/data/qa/…``), our retrieval keeps the top 5 chunks of a corpus
file (loaded once into a Milvus Lite file in ``--work``); each form of the relevance prompt is then sent to an
OpenAI-compatible server (the reply schema as ``response_format``) and the reply is scored against the gold titles:
which chunk numbers the model kept, and how many gold chunks among them. One JSON line per question and form.

    python scripts/probe_relevance.py /work/shared/data/qa/2wikimultihopqa_hipporag \\
        --corpus WORK/corpus_slice.json --base-url http://127.0.0.1:8196/v1 --limit 4 --work /tmp/relprobe

Forms: ``shipped`` (``prompts.RELEVANCE`` as the agent sends it, without the check passage), ``no_example`` (the
example without numbers, items bounded 1..n), ``per_key`` (one boolean key per chunk number), ``per_chunk`` (one
call per chunk, the reference's design). Found with it (docs/benchmarks.md, "The relevance step with a small
model"): Qwen2.5-Coder-0.5B gives the same numbers whatever the chunks say.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from deepsearcher.agents import prompts  # noqa: E402
from deepsearcher.types import Chunk  # noqa: E402

PER_KEY = """Question: {question}
Search query: {query}

Below are {count} numbered text chunks found by the search. For each chunk, decide whether it contains information \
that helps to answer the question or the search query.

{chunks}

Reply with JSON only: one key per chunk number, true if that chunk helps and false if not, in this form: {form}"""

PER_CHUNK = """Question: {question}
Search query: {query}

A search found the text chunk below.

{chunk}

Does this chunk contain information that helps to answer the question or the search query? Reply with JSON only: \
{{"helpful": true}} or {{"helpful": false}}."""

NO_EXAMPLE = prompts.RELEVANCE.replace('{{"relevant": [1, 3]}} listing the numbers of the helpful chunks',
                                       '{{"relevant": [<numbers of the helpful chunks>]}}')
FORMS = ("shipped", "no_example", "per_key", "per_chunk")


def ask(url: str, model: str, prompt: str, schema: dict[str, Any]) -> str:
    """One chat completion at temperature 0 with ``schema`` as the reply format; the reply text."""
    body = {"model": model, "temperature": 0, "max_tokens": 200,
            "messages": [{"role": "system", "content": prompts.system()}, {"role": "user", "content": prompt}],
            "response_format": {"type": "json_object", "schema": schema}}
    request = urllib.request.Request(f"{url.rstrip('/')}/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=1800) as response:
        return str(json.loads(response.read())["choices"][0]["message"]["content"])


def numbers(reply: str) -> list[int] | None:
    """The chunk numbers a reply keeps (either reply form), or None for an unreadable reply."""
    try:
        data = json.loads(reply)
    except ValueError:
        return None
    if isinstance(data, dict) and isinstance(data.get("relevant"), list):
        return sorted(int(n) for n in data["relevant"] if isinstance(n, int))
    if isinstance(data, dict):
        return sorted(int(k) for k, v in data.items() if k.isdigit() and v is True)
    return None


def judge(form: str, url: str, model: str, question: str, chunks: list[Chunk]) -> tuple[list[int] | None, Any]:
    """(kept numbers, raw reply or replies) of one form for one question."""
    n = len(chunks)
    listed = prompts.chunk_list(chunks)
    if form == "per_chunk":
        kept, replies = [], []
        for i, chunk in enumerate(chunks, start=1):
            reply = ask(url, model, PER_CHUNK.format(question=question, query=question,
                                                      chunk=prompts.chunk_list([chunk])),
                        {"type": "object", "properties": {"helpful": {"type": "boolean"}}, "required": ["helpful"]})
            replies.append(reply)
            if '"helpful": true' in reply.replace(" ", "").replace(":true", ": true"):
                kept.append(i)
        return kept, replies
    if form == "per_key":
        form_text = "{" + ", ".join(f'"{i}": true or false' for i in range(1, n + 1)) + "}"
        prompt = PER_KEY.format(question=question, query=question, count=n, chunks=listed, form=form_text)
        schema: dict[str, Any] = {"type": "object", "properties": {str(i): {"type": "boolean"} for i in range(1, n + 1)},
                                  "required": [str(i) for i in range(1, n + 1)], "additionalProperties": False}
    else:
        template = prompts.RELEVANCE if form == "shipped" else NO_EXAMPLE
        prompt = template.format(question=question, query=question, count=n, chunks=listed)
        items: dict[str, Any] = {"type": "integer"} if form == "shipped" else {"type": "integer", "minimum": 1,
                                                                              "maximum": n}
        schema = {"type": "object", "required": ["relevant"],
                  "properties": {"relevant": {"type": "array", "items": items, "maxItems": n}}}
    reply = ask(url, model, prompt, schema)
    return numbers(reply), reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="a dataset folder of ../shared/data/qa/")
    parser.add_argument("--corpus", default=None, help="corpus file to search (default: the dataset's own)")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--limit", type=int, default=4)
    parser.add_argument("--forms", default=",".join(FORMS))
    parser.add_argument("--work", type=Path, required=True, help="folder for the Milvus Lite file and results")
    args = parser.parse_args()

    from deepsearcher.app import DeepSearcher
    from deepsearcher.eval.datasets import load_dataset
    from deepsearcher.settings import load_settings

    dataset = load_dataset(args.dataset)
    args.work.mkdir(parents=True, exist_ok=True)
    app = DeepSearcher(load_settings(None, {"vector_db": {"uri": str(args.work / "probe.db")}, "llm": None}))
    if "probe" not in {c.name for c in app.collections()}:
        app.load([args.corpus or str(dataset.corpus)], collection="probe")
    with (args.work / "relevance.jsonl").open("a", encoding="utf-8") as out:
        for q in dataset.questions[:args.limit]:
            hits = app.retrieve(q.question, top_k=5, collections=["probe"])
            chunks = [h.chunk for h in hits]
            gold = [i for i, c in enumerate(chunks, start=1) if c.title in q.gold_titles]
            for form in args.forms.split(","):
                started = time.monotonic()
                kept, reply = judge(form, args.base_url, args.model, q.question, chunks)
                row = {"question": q.question, "form": form, "chunks": len(chunks), "gold_at": gold, "kept": kept,
                       "gold_kept": None if kept is None else len(set(gold) & set(kept)), "reply": reply,
                       "seconds": round(time.monotonic() - started, 1)}
                print(json.dumps(row, ensure_ascii=False), flush=True)
                out.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
