"""Run one question and record every raw model reply: to see *why* a step fell back with a real model.

An eval row says that a step fell back ("research_step: unusable reply after a retry: …"); this shows what the model
wrote. Each call becomes one JSON line: the step's schema name (None for free text), the end of its last prompt and
the reply as the server returned it (reasoning included). The report's short answer, fallbacks and call count are
printed at the end.

    python scripts/record_replies.py "When did Lothair II's mother die?" --config config.yaml \\
        --agent deep_research --collection eval_2wikimultihopqa --out replies.jsonl

Found with it (docs/benchmarks.md, "Probed and fixed"): a grammar-constrained 0.5B model wrote every DeepResearch
answer into ``think`` and left ``answer`` out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--config", type=Path, default=None, help="config.yaml (default: the usual search)")
    parser.add_argument("--agent", default=None, help="agent to run (default: the config's)")
    parser.add_argument("--collection", action="append", default=None, help="collection(s) to search")
    parser.add_argument("--out", type=Path, default=Path("replies.jsonl"), help="where the replies go (JSON lines)")
    args = parser.parse_args()

    from deepsearcher.app import DeepSearcher
    from deepsearcher.events import Event
    from deepsearcher.settings import load_settings

    app = DeepSearcher(load_settings(args.config))
    llm = app.llm
    chat = llm.chat
    with args.out.open("w", encoding="utf-8") as out:
        def recorded(messages: Any, **kwargs: Any) -> Any:
            result = chat(messages, **kwargs)
            schema = kwargs.get("schema")
            out.write(json.dumps({"schema": getattr(schema, "__name__", None),
                                  "prompt_tail": messages[-1]["content"][-1500:], "reply": result.text,
                                  "reasoning": result.reasoning}, ensure_ascii=False) + "\n")
            out.flush()
            return result

        llm.chat = recorded  # type: ignore[method-assign]
        events: list[Event] = []
        report = app.query(args.question, collections=args.collection, agent=args.agent, on_event=events.append)
    print(json.dumps({"short_answer": report.short_answer, "llm_calls": report.usage.llm_calls,
                      "fallbacks": [e.data for e in events if e.kind == "query.fallback"],
                      "unsourced_dates": report.unsourced_dates, "replies": str(args.out)}, indent=1,
                     ensure_ascii=False))


if __name__ == "__main__":
    main()
