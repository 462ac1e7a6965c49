"""Plain-text and Markdown fixtures: legacy encodings, BOMs, invisible characters, compatibility characters,
base64 runs and data URIs, front matter."""

from __future__ import annotations

import base64
import random

from tests.fidelity.fixture import Fixture


def _b64(seed: int, n_bytes: int) -> str:
    rng = random.Random(seed)
    return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(n_bytes))).decode("ascii")


CP1252_SHORT = "Grüße aus München – Straße €5. Der Kaffee kostet 3 €."
LATIN1_SHORT = "Ça coûte très peu : l'élève a payé 5 francs à l'hôtel, température 21 °C « agréable »."
CP1252_PAGE = "\n".join(
    f"Item {i}: the vendor’s “premium” plan costs €{40 + i} — billed yearly… Zoë’s team reviews it in {month}."
    for i, month in enumerate(["January", "February", "March", "April", "May", "June", "July", "August",
                               "September", "October", "November", "December"] * 3))
CP1251_SHORT = "Привет! Отчёт о продажах готов к пятнице, совещание в 10:00."
SHIFT_JIS = "東京の会議は来週の月曜日に開催されます。資料は金曜日までに提出してください。"
GB18030 = "北京办公室将于下周一搬迁。请在周五之前提交所有文件，谢谢。"
EUC_KR = "서울 사무소는 다음 주 월요일에 이전합니다. 금요일까지 서류를 제출해 주세요."
MIXED = "Résumé of the 東京 meeting: budget approved, naïve estimate was 12 % low."


def encodings() -> list[Fixture]:
    def fx(name: str, text: str, encoding: str, note: str, case: str | None = None,
           noise: tuple[str, ...] = ()) -> Fixture:
        return Fixture(f"txt/{name}.txt", "txt", (text + "\n").encode(encoding), expected=(text,), noise=noise,
                       source_case=case, note=note)

    return [
        fx("cp1252_short", CP1252_SHORT, "cp1252", "one short Windows-1252 line (Notepad/Excel export)",
           "short_cp1252_text"),
        fx("latin1_short", LATIN1_SHORT, "latin-1", "one short ISO-8859-1 line"),
        fx("cp1252_page", CP1252_PAGE, "cp1252", "a page of Windows-1252 with curly quotes, dashes, euro"),
        fx("cp1251_short", CP1251_SHORT, "cp1251", "short Windows-1251 Russian (must not become cp1252 mojibake)"),
        fx("shift_jis", SHIFT_JIS, "shift_jis", "Japanese in Shift-JIS"),
        fx("gb18030", GB18030, "gb18030", "Chinese in GB18030"),
        fx("euc_kr", EUC_KR, "euc_kr", "Korean in EUC-KR"),
        fx("utf16le_bom", MIXED, "utf-16", "UTF-16 little endian with BOM", noise=("\ufeff",)),
        Fixture("txt/utf16be_bom.txt", "txt", b"\xfe\xff" + (MIXED + "\n").encode("utf-16-be"), expected=(MIXED,),
                noise=("\ufeff",), note="UTF-16 big endian with BOM"),
        fx("utf8_bom", "Überblick: the byte order mark must not be stored.", "utf-8-sig", "UTF-8 with BOM",
           noise=("\ufeff",)),
    ]


def invisible() -> list[Fixture]:
    shy = ("Das Gesamt\u00adkonzept sieht einen Wert\u00adpapier\u00adindex mit Verwaltungs\u00adkosten unter 0,2 "
           "Prozent vor.\n")
    zw = ("The Replication\u200bController\u200bManager restarts pods; the cluster\u200c-wide quota file is read "
          "every 30 seconds. Word\u2060joiner and left\u200eto\u200fright marks are invisible.\n"
          "Emoji sequences keep their joiner: \U0001F469\u200d\U0001F4BB and \u2764\ufe0f\u200d\U0001F525.\n"
          "Persian keeps its non-joiner: \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.\n")
    concat = ("\ufeffFirst export: the printer queue is cleared nightly.\n"
              "\ufeffSecond export: toner is ordered at 20 percent.\n")
    return [
        Fixture("txt/soft_hyphen.txt", "txt", shy.encode("utf-8"), source_case="soft_hyphen_zero_width",
                expected=("Das Gesamtkonzept sieht einen Wertpapierindex mit Verwaltungskosten unter 0,2 "
                          "Prozent vor.",),
                noise=("\u00ad",), note="soft hyphens inside words (copied from a web page or an e-book)"),
        Fixture("txt/zero_width.txt", "txt", zw.encode("utf-8"),
                expected=("The ReplicationControllerManager restarts pods; the cluster-wide quota file",
                          "Wordjoiner and lefttoright marks are invisible.", "\U0001F469\u200d\U0001F4BB",
                          "\u2764\ufe0f\u200d\U0001F525", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"),
                noise=("\u200b", "\u2060", "\u200e", "\u200f", "r\u200c-"),
                note="ZWSP, word joiner, bidi marks removed; ZWJ in emoji and ZWNJ in Persian kept"),
        Fixture("txt/bom_inside.txt", "txt", concat.encode("utf-8"),
                expected=("First export: the printer queue is cleared nightly.",
                          "Second export: toner is ordered at 20 percent."),
                noise=("\ufeff",), note="files concatenated with their BOMs: a BOM inside the text"),
    ]


def compatibility() -> Fixture:
    text = ("The \ufb01nal work\ufb02ow was signed o\ufb00 by ＡＢＣ株式会社 in ２０２４年. ｶﾀｶﾅ forms and Chapter Ⅳ "
            "follow.\u00a0Keep m² and H₂O and ½ cup as written. 价格为１２０元，包含税。Ｑ＆Ａ session at ９：３０.\n")
    return Fixture("txt/compatibility.txt", "txt", text.encode("utf-8"),
                   expected=("The final workflow was signed off by ABC株式会社 in 2024年.", "カタカナ forms",
                             "Chapter IV follow. Keep m² and H₂O and ½ cup as written.", "价格为120元，包含税。",
                             "Q＆A session at 9：30."),
                   noise=("\ufb01", "\ufb02", "\ufb00", "ＡＢＣ", "２０２４", "ｶ", "Ⅳ"),
                   note="ligatures, full-width Latin and digits, half-width katakana, Roman numeral: mapped; "
                        "superscripts, subscripts, fractions and full-width punctuation: kept")


def base64_runs() -> list[Fixture]:
    blob = _b64(11, 3000)
    log = (f"2024-03-01 12:00:01 INFO upload started for invoice batch 17\n"
           f"2024-03-01 12:00:02 DEBUG payload={blob} status=ok\n"
           f"2024-03-01 12:00:03 INFO upload finished, checksum sha256 "
           "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n")
    return [Fixture("txt/base64_log.txt", "txt", log.encode(), noise=(blob[:60], blob[-60:]),
                    expected=("upload started for invoice batch 17", "payload=", "status=ok",
                              "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
                    note="a long base64 run in a log line (replaced); a hex checksum (kept)")]


def markdown() -> list[Fixture]:
    payload = _b64(57, 90_000)
    note = ("# Backup rota\n\nThe backup rota: Anna covers Mondays, Ben covers Tuesdays, and restores are tested on "
            "the first Friday of each month.\n\n"
            f"![diagram](data:image/png;base64,{payload})\n\n"
            "Escalations go to the storage team channel.\n")
    zw = ("# Controllers\n\nThe Replication\u200bController\u200bManager restarts pods that exit with code 137. "
          "It reads its limits from the cluster\u200c-wide quota file and reports to the scheduler every 30 seconds.\n")
    yaml_fm = ("---\ntitle: Incident handbook\nlayout: post\ntags: [oncall, sre]\ndate: 2024-02-01\n---\n\n"
               "# How we handle incidents\n\nPage the on-call engineer first, then open a ticket.\n")
    toml_fm = ('+++\ntitle = "Release notes 4.2"\ndraft = false\nweight = 30\n+++\n\n'
               "Version 4.2 removes the legacy sync endpoint.\n")
    svg = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">' + b"<rect/>" * 60
                           + b"</svg>").decode()
    html_img = ("# Floor plan\n\nThe fire exits are at both ends of the corridor.\n\n"
                f'<img alt="plan" src="data:image/svg+xml;base64,{svg}">\n\n'
                "[download the raw file](data:text/plain;charset=utf-8,Exit%20A%20and%20Exit%20B)\n\n"
                "Assembly point: the car park by the north gate.\n")
    pem_lines = "\n".join(_b64(5, 900)[i:i + 64] for i in range(0, 1200, 64))
    pem = ("# Gateway certificate\n\nThe gateway presents this certificate; renew it before 1 June.\n\n"
           f"```\n-----BEGIN CERTIFICATE-----\n{pem_lines}\n-----END CERTIFICATE-----\n```\n\n"
           "See https://example.org/docs/gateway/renewal-procedure-for-certificates-and-keys for the steps.\n")
    policy = ("# Travel policy\n\nEconomy class is required for flights under six hours. Hotel bookings above 180 EUR "
              "per night need approval from a director. Receipts must be uploaded within 30 days of the trip.\n")
    return [
        Fixture("md/note_base64.md", "md", note.encode(), source_case="markdown_base64_image",
                expected=("Backup rota", "The backup rota: Anna covers Mondays, Ben covers Tuesdays, and restores are "
                          "tested on the first Friday of each month.", "Escalations go to the storage team channel."),
                noise=(payload[:60], payload[40_000:40_060], "base64,"),
                note="an inline base64 image (data URI) of ~120 KB"),
        Fixture("md/zero_width.md", "md", zw.encode(), source_case="soft_hyphen_zero_width",
                expected=("ReplicationControllerManager restarts pods", "cluster-wide quota file"),
                noise=("\u200b", "\u200c"), note="zero-width space and non-joiner inside Latin words"),
        Fixture("md/front_matter_yaml.md", "md", yaml_fm.encode(), title="Incident handbook",
                expected=("How we handle incidents", "Page the on-call engineer first, then open a ticket."),
                noise=("layout: post", "tags:", "date: 2024-02-01"), note="YAML front matter -> title and metadata"),
        Fixture("md/front_matter_toml.md", "md", toml_fm.encode(), title="Release notes 4.2",
                expected=("Version 4.2 removes the legacy sync endpoint.",),
                noise=("draft = false", "weight = 30", "+++"), note="TOML front matter (Hugo) -> title"),
        Fixture("md/html_data_uri.md", "md", html_img.encode(),
                expected=("The fire exits are at both ends of the corridor.",
                          "Assembly point: the car park by the north gate."),
                noise=(svg[:60], "Exit%20A"), note="data URIs in an <img> tag and in a link"),
        Fixture("md/pem_block.md", "md", pem.encode(),
                expected=("The gateway presents this certificate; renew it before 1 June.", "BEGIN CERTIFICATE",
                          "https://example.org/docs/gateway/renewal-procedure-for-certificates-and-keys"),
                noise=(pem_lines[:64], pem_lines[-64:]), note="a base64 block wrapped at 64 columns; a long URL kept"),
        Fixture("md/policy.md", "md", policy.encode(), source_case="same_file_two_folders",
                expected=("Travel policy", "Economy class is required for flights under six hours.",
                          "Receipts must be uploaded within 30 days of the trip."),
                note="extraction side of the duplicate-file case (de-duplication is the retrieval stage's job)"),
    ]


def all_fixtures() -> list[Fixture]:
    return [*encodings(), *invisible(), compatibility(), *base64_runs(), *markdown()]
