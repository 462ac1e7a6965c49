"""The words the tool itself adds to a report (headings, notes), in the report's language.

A report is written in ``query.language``, else in the question's language; the headings and notes the tool adds (a
long report's Contents, Introduction, Conclusion, "Contradictions and open questions", the note of a section whose
sources hold nothing and the mark of an uncited sentence; the Sources heading) follow it. ``language_code`` names
that language for the table: ``query.language`` as a name or code ("German", "Deutsch", "de", "de-DE"), else the
question's, by script (kana → ja, Hangul → ko, Han → zh, Cyrillic → ru, Arabic → ar) and, for Latin script, by the
most frequent function words of en, de, fr, es, pt, it — the languages whose negation cues ``dedup_rules`` already
knows. Anything else falls back to English.
"""

from __future__ import annotations

import re

#: scaffolding strings by language code; English is the fallback for a missing language or key
WORDS: dict[str, dict[str, str]] = {
    "en": {"answer": "Answer", "contents": "Contents", "introduction": "Introduction", "conclusion": "Conclusion",
           "contradictions": "Contradictions and open questions",
           "no_contradictions": "No contradictions between the sources were found.",
           "not_compared": "The sections were not compared for contradictions (the editing pass failed).",
           "left_open": "Questions the research left open:", "sources": "Sources",
           "sources_consulted": "Sources consulted (the answer cites none)",
           "no_sources": "No sources: nothing relevant was retrieved."},
    "de": {"answer": "Antwort", "contents": "Inhalt", "introduction": "Einleitung", "conclusion": "Fazit",
           "contradictions": "Widersprüche und offene Fragen",
           "no_contradictions": "Zwischen den Quellen wurden keine Widersprüche gefunden.",
           "not_compared": "Die Abschnitte wurden nicht auf Widersprüche verglichen (der Überarbeitungsschritt "
                           "schlug fehl).",
           "left_open": "Von der Recherche offen gelassene Fragen:", "sources": "Quellen",
           "sources_consulted": "Herangezogene Quellen (die Antwort zitiert keine)",
           "no_sources": "Keine Quellen: nichts Relevantes gefunden."},
    "fr": {"answer": "Réponse", "contents": "Sommaire", "introduction": "Introduction", "conclusion": "Conclusion",
           "contradictions": "Contradictions et questions ouvertes",
           "no_contradictions": "Aucune contradiction entre les sources n'a été trouvée.",
           "not_compared": "Les sections n'ont pas été comparées (l'étape de révision a échoué).",
           "left_open": "Questions laissées ouvertes par la recherche :", "sources": "Sources",
           "sources_consulted": "Sources consultées (la réponse n'en cite aucune)",
           "no_sources": "Aucune source : rien de pertinent n'a été trouvé."},
    "es": {"answer": "Respuesta", "contents": "Contenido", "introduction": "Introducción", "conclusion": "Conclusión",
           "contradictions": "Contradicciones y preguntas abiertas",
           "no_contradictions": "No se encontraron contradicciones entre las fuentes.",
           "not_compared": "Las secciones no se compararon (la revisión falló).",
           "left_open": "Preguntas que la investigación dejó abiertas:", "sources": "Fuentes",
           "sources_consulted": "Fuentes consultadas (la respuesta no cita ninguna)",
           "no_sources": "Sin fuentes: no se encontró nada relevante."},
    "pt": {"answer": "Resposta", "contents": "Sumário", "introduction": "Introdução", "conclusion": "Conclusão",
           "contradictions": "Contradições e questões em aberto",
           "no_contradictions": "Não foram encontradas contradições entre as fontes.",
           "not_compared": "As seções não foram comparadas (a revisão falhou).",
           "left_open": "Questões que a pesquisa deixou em aberto:", "sources": "Fontes",
           "sources_consulted": "Fontes consultadas (a resposta não cita nenhuma)",
           "no_sources": "Sem fontes: nada relevante foi encontrado."},
    "it": {"answer": "Risposta", "contents": "Indice", "introduction": "Introduzione", "conclusion": "Conclusione",
           "contradictions": "Contraddizioni e questioni aperte",
           "no_contradictions": "Non sono state trovate contraddizioni tra le fonti.",
           "not_compared": "Le sezioni non sono state confrontate (la revisione non è riuscita).",
           "left_open": "Domande lasciate aperte dalla ricerca:", "sources": "Fonti",
           "sources_consulted": "Fonti consultate (la risposta non ne cita nessuna)",
           "no_sources": "Nessuna fonte: non è stato trovato nulla di pertinente."},
    "ru": {"answer": "Ответ", "contents": "Содержание", "introduction": "Введение", "conclusion": "Заключение",
           "contradictions": "Противоречия и открытые вопросы",
           "no_contradictions": "Противоречий между источниками не найдено.",
           "not_compared": "Разделы не сравнивались на противоречия (шаг редактирования не удался).",
           "left_open": "Вопросы, оставшиеся открытыми:", "sources": "Источники",
           "sources_consulted": "Просмотренные источники (ответ не ссылается ни на один)",
           "no_sources": "Источников нет: ничего относящегося к делу не найдено."},
    "zh": {"answer": "答案", "contents": "目录", "introduction": "引言", "conclusion": "结论", "contradictions": "矛盾与未决问题",
           "no_contradictions": "未发现来源之间存在矛盾。", "not_compared": "各部分未做矛盾比较（编辑步骤失败）。",
           "left_open": "研究中仍未解决的问题：", "sources": "来源", "sources_consulted": "参考的来源（回答未引用任何来源）",
           "no_sources": "没有来源：未检索到相关内容。"},
    "ja": {"answer": "回答", "contents": "目次", "introduction": "はじめに", "conclusion": "結論", "contradictions": "矛盾点と未解決の問い",
           "no_contradictions": "情報源の間に矛盾は見つかりませんでした。",
           "not_compared": "各セクションの矛盾は比較されていません（編集ステップが失敗しました）。",
           "left_open": "調査で未解決のまま残った問い：", "sources": "出典",
           "sources_consulted": "参照した出典（回答は出典を引用していません）", "no_sources": "出典なし：関連する情報は見つかりませんでした。"},
    "ko": {"answer": "답변", "contents": "목차", "introduction": "서론", "conclusion": "결론", "contradictions": "모순과 열린 질문",
           "no_contradictions": "출처 사이의 모순은 발견되지 않았습니다.",
           "not_compared": "섹션 간 모순은 비교되지 않았습니다(편집 단계 실패).",
           "left_open": "조사에서 해결되지 않은 질문:", "sources": "출처",
           "sources_consulted": "참고한 출처(답변에 인용 없음)", "no_sources": "출처 없음: 관련 내용을 찾지 못했습니다."},
    "ar": {"answer": "الإجابة", "contents": "المحتويات", "introduction": "مقدمة", "conclusion": "خاتمة",
           "contradictions": "التناقضات والأسئلة المفتوحة", "no_contradictions": "لم يُعثر على تناقضات بين المصادر.",
           "not_compared": "لم تُقارَن الأقسام بحثًا عن تناقضات (فشلت خطوة التحرير).",
           "left_open": "أسئلة تركها البحث مفتوحة:", "sources": "المصادر",
           "sources_consulted": "المصادر التي رُوجعت (لا يستشهد الجواب بأي منها)",
           "no_sources": "لا مصادر: لم يُعثر على شيء ذي صلة."},
}

#: a long report's section notes (``long_report.agent``): no evidence, not researched, an uncited sentence's mark,
#: a synthesis section with nothing to sum up
_SECTION_NOTES: dict[str, tuple[str, str, str, str]] = {
    "en": (
        'The sources hold nothing on “{question}”.',
        'This section was not researched (the research stopped first): “{question}”.',
        '(uncited)',
        'This summary could not be written: the other sections hold nothing to sum up.',
    ),
    "de": (
        'Die Quellen enthalten nichts zu „{question}“.',
        'Dieser Abschnitt wurde nicht recherchiert (die Recherche endete vorher): „{question}“.',
        '(ohne Quelle)',
        'Diese Zusammenfassung konnte nicht geschrieben werden: die anderen Abschnitte enthalten nichts dazu.',
    ),
    "fr": (
        'Les sources ne contiennent rien sur « {question} ».',
        "Cette section n'a pas été recherchée (la recherche s'est arrêtée avant) : « {question} ».",
        '(sans source)',
        "Cette synthèse n'a pas pu être rédigée : les autres sections n'offrent rien à résumer.",
    ),
    "es": (
        'Las fuentes no contienen nada sobre «{question}».',
        'Esta sección no se investigó (la investigación se detuvo antes): «{question}».',
        '(sin fuente)',
        'No se pudo escribir este resumen: las demás secciones no ofrecen nada que resumir.',
    ),
    "pt": (
        'As fontes não contêm nada sobre “{question}”.',
        'Esta seção não foi pesquisada (a pesquisa parou antes): “{question}”.',
        '(sem fonte)',
        'Não foi possível escrever este resumo: as outras seções não oferecem nada a resumir.',
    ),
    "it": (
        'Le fonti non contengono nulla su «{question}».',
        'Questa sezione non è stata ricercata (la ricerca si è fermata prima): «{question}».',
        '(senza fonte)',
        'Non è stato possibile scrivere questa sintesi: le altre sezioni non offrono nulla da riassumere.',
    ),
    "ru": (
        'В источниках нет ничего по вопросу «{question}».',
        'Этот раздел не исследовался (исследование остановилось раньше): «{question}».',
        '(без источника)',
        'Это резюме не удалось написать: в других разделах нечего обобщать.',
    ),
    "zh": (
        '来源中没有关于“{question}”的内容。',
        '本节未做研究（研究已提前停止）：“{question}”。',
        '（无来源）',
        '无法撰写此摘要：其他部分没有可总结的内容。',
    ),
    "ja": (
        '情報源には「{question}」に関する記述がありません。',
        'このセクションは調査されていません（調査が先に終了しました）：「{question}」。',
        '（出典なし）',
        'この要約は書けませんでした：他のセクションに要約できる内容がありません。',
    ),
    "ko": (
        '출처에는 "{question}"에 관한 내용이 없습니다.',
        '이 섹션은 조사되지 않았습니다(조사가 먼저 중단됨): "{question}".',
        '(출처 없음)',
        '이 요약을 쓸 수 없었습니다: 다른 섹션에 요약할 내용이 없습니다.',
    ),
    "ar": (
        'لا تتضمن المصادر شيئًا عن «{question}».',
        'لم يُبحث هذا القسم (توقف البحث قبله): «{question}».',
        '(بلا مصدر)',
        'تعذرت كتابة هذا الملخص: لا تتضمن الأقسام الأخرى ما يُلخَّص.',
    ),
}
for _code, _notes in _SECTION_NOTES.items():
    WORDS[_code].update(zip(("nothing_on", "not_researched_on", "uncited", "synthesis_empty"), _notes))

_NAMES = {
    "en": ("english",), "de": ("german", "deutsch"), "fr": ("french", "français", "francais"),
    "es": ("spanish", "español", "espanol", "castellano"), "pt": ("portuguese", "português", "portugues"),
    "it": ("italian", "italiano"), "ru": ("russian", "русский"), "zh": ("chinese", "中文", "汉语", "简体中文"),
    "ja": ("japanese", "日本語"), "ko": ("korean", "한국어"), "ar": ("arabic", "العربية"),
}
_FUNCTION_WORDS = {
    "en": {"the", "what", "how", "which", "is", "are", "does", "and", "of", "in", "with", "for", "was", "were", "by",
           "from", "to", "it", "this", "that", "has", "have", "be", "on", "at", "as", "an", "a", "who", "when", "not",
           "where", "why", "do", "did", "can", "will", "there", "they", "their", "you"},
    "de": {"der", "die", "das", "und", "ist", "wie", "was", "welche", "wird", "mit", "für", "nicht", "ein", "eine",
           "einer", "einem", "einen", "den", "dem", "des", "im", "zu", "von", "auf", "auch", "oder", "sich", "wo",
           "wer", "wann", "warum", "sind", "seine", "ihre", "alle", "bei", "nach", "aus"},
    "fr": {"le", "la", "les", "est", "et", "des", "du", "comment", "quel", "quelle", "quels", "pour", "une", "avec"},
    "es": {"el", "la", "los", "las", "es", "qué", "que", "cómo", "cuál", "del", "para", "una", "con", "y"},
    "pt": {"o", "a", "os", "as", "é", "que", "como", "qual", "do", "da", "para", "uma", "com", "e", "não"},
    "it": {"il", "lo", "la", "gli", "è", "che", "come", "quale", "del", "della", "per", "una", "con", "e", "non"},
}


def language_code(question: str, configured: str | None = None) -> str:
    """The code of the report language (module docstring): ``configured`` when it names a known language, else the
    question's; "en" when neither is known."""
    if configured:
        name = configured.strip().casefold()
        for code, names in _NAMES.items():
            if name in names or re.split(r"[-_ ]", name)[0] == code:
                return code
        return "en"
    return detect(question)


def english_name(code: str) -> str:
    """The English name of a report language's code ("de" → "german"; the code itself when unknown)."""
    return _NAMES.get(code, (code,))[0]


def detect(text: str) -> str:
    """The language of ``text``: the script most of its words are in (a CJK character counts as a word), then, for
    Latin script, the language most of its function words belong to ("en" on a tie or when unsure). A few words in
    another script do not decide: "Milvus uses the jieba analyzer for 向量数据库" is English, "Milvus Lite 是什么？"
    Chinese (a tie goes to the other script: questions in it name things in Latin letters)."""
    kana = len(re.findall(r"[\u3040-\u30ff]", text))
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    scores = {"ja": kana + han if kana else 0, "zh": 0 if kana else han,
              "ko": len(re.findall(r"[\uac00-\ud7af]", text)),
              "ru": len(re.findall(r"[\u0400-\u04ff]+", text)), "ar": len(re.findall(r"[\u0600-\u06ff]+", text))}
    latin = re.findall(r"[^\W\d_\u0400-\u04ff\u0600-\u06ff\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]+", text.casefold())
    script = max(scores, key=lambda c: scores[c])
    if scores[script] and scores[script] >= len(latin):
        return script
    votes = {code: sum(t in words for t in latin) for code, words in _FUNCTION_WORDS.items()}
    best = max(votes, key=lambda c: (votes[c], c == "en"))
    return best if votes[best] else "en"


def word(language: str, key: str) -> str:
    """The scaffolding string ``key`` in ``language`` (English when missing)."""
    return WORDS.get(language, WORDS["en"]).get(key, WORDS["en"][key])
