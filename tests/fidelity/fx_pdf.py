"""PDF fixtures: encryption (empty and real user password), NUL and ligature glyphs, line-end hyphenation,
pages, a page with no text layer, a truncated file."""

from __future__ import annotations

import io

from tests.fidelity.fixture import Fixture
from tests.fidelity.pdfgen import build_pdf

RESTRICTED = "Restricted manual: torque for M8 bolts is 25 Nm"


def _encrypted(name: str, algorithm: str, user_password: str = "") -> bytes:
    from pypdf import PdfReader, PdfWriter  # needs pypdf[crypto] (cryptography) for AES

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(build_pdf([[RESTRICTED.encode()]]))))
    writer.encrypt(user_password=user_password, owner_password="owner-only-secret", algorithm=algorithm,
                   permissions_flag=0b0100)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def encrypted() -> list[Fixture]:
    out = [Fixture(f"pdf/{name}.pdf", "pdf", _encrypted(name, algo), expected=(RESTRICTED,), pages={1: (RESTRICTED,)},
                   source_case="pdf_empty_user_password",
                   note=f"{algo} encryption with an empty user password: opens without a prompt")
           for name, algo in (("aes128", "AES-128"), ("aes256", "AES-256"), ("rc4", "RC4-128"))]
    out.append(Fixture("pdf/user_password.pdf", "pdf", _encrypted("user", "AES-256", "open-sesame"), skip="password",
                       noise=(RESTRICTED,), note="a real user password: skipped with a reason, never a crash"))
    return out


# the shared case's ligature glyphs mapped to U+0000 in the ToUnicode CMap (pypdf #1351)
_NUL_GLYPHS = {0x80: ("fi", "\x00"), 0x81: ("ff", "\x00")}
_FEW = [b"The o\x81ce move is planned for the spring. Sta\x81 will pack their desks on",
        b"Thursday and the new building opens on Monday morning at eight. Parking is free",
        b"for the first month and the canteen serves breakfast from seven."]
_MANY = [b"The o\x81ce review covers the \x80nal \x80gures for the year. Sta\x81 reported that the",
         b"new \x80ling system saves time, although tra\x81c to the portal doubled in March and",
         b"support needed extra e\x81ort. The \x80rm will o\x81er training in May and June, and the",
         b"review board will meet again in the autumn to decide on the budget for next year."]


def nul_glyphs() -> list[Fixture]:
    return [
        Fixture("pdf/nul_few.pdf", "pdf", build_pdf([_FEW], extra_glyphs=_NUL_GLYPHS),
                source_case="nul_in_extracted_text", noise=("\x00",),
                expected=("move is planned for the spring.", "will pack their desks on Thursday and the new building "
                          "opens on Monday morning at eight. Parking is free for the first month and the canteen "
                          "serves breakfast from seven."),
                note="two ligature glyphs mapped to U+0000 (< 1 % of characters)"),
        Fixture("pdf/nul_many.pdf", "pdf", build_pdf([_MANY], extra_glyphs=_NUL_GLYPHS),
                source_case="nul_in_extracted_text", noise=("\x00",),
                expected=("review covers the", "for the year.", "reported that the", "system saves time, although",
                          "to the portal doubled in March and support needed extra",
                          "training in May and June, and the review board will meet again in the autumn to decide on "
                          "the budget for next year."),
                note="a ligature-heavy page (~2.5 % NUL glyphs) must not be discarded as binary"),
    ]


def ligatures() -> Fixture:
    glyphs = {0x80: ("fi", "\ufb01"), 0x81: ("fl", "\ufb02"), 0x82: ("ff", "\ufb00"), 0x83: ("ffi", "\ufb03")}
    lines = [b"The \x80nancial work\x81ow of the o\x83ce starts with the sta\x82 survey.",
             b"E\x82ective \x80ling rules apply to every \x80rm in the \x81eet."]
    return Fixture("pdf/ligatures.pdf", "pdf", build_pdf([lines], extra_glyphs=glyphs),
                   expected=("The financial workflow of the office starts with the staff survey.",
                             "Effective filing rules apply to every firm in the fleet."),
                   noise=("\ufb01", "\ufb02", "\ufb00", "\ufb03"),
                   note="ligature glyphs mapped to U+FB00..U+FB03 (compatibility characters)")


def hyphenation() -> Fixture:
    lines = [b"The new infra-",
             b"structure budget covers the well-",
             b"known cooling upgrade and the docu-",
             b"mentation of every well-known failure mode. Costs of the Anglo-",
             b"French contract stay fixed for 2024-",
             b"2025. The manu\xad",
             b"facturing line restarts in May. Spare parts are re-",
             b"ordered when the re-order level is reached."]
    return Fixture("pdf/hyphenation.pdf", "pdf", build_pdf([lines]),
                   expected=("The new infrastructure budget covers the well-known cooling upgrade and the "
                             "documentation of every well-known failure mode.", "Anglo-French contract",
                             "fixed for 2024-2025.", "The manufacturing line restarts in May.",
                             "Spare parts are re-ordered when the re-order level is reached."),
                   noise=("infra-", "docu-", "wellknown", "\u00ad", "manu-"),
                   note="words hyphenated across line ends (rejoined), compounds and ranges broken at their own "
                        "hyphen (kept), a soft hyphen at a line end")


def pages() -> Fixture:
    pg = [[b"PAGE ONE the ferry timetable changes on 1 April."],
          [b"PAGE TWO the harbour office opens at 07:00."],
          [b"PAGE THREE parking permits are renewed online."]]
    return Fixture("pdf/three_pages.pdf", "pdf", build_pdf(pg, title="Harbour notices"), title="Harbour notices",
                   expected=tuple(p[0].decode() for p in pg),
                   pages={i + 1: (p[0].decode(),) for i, p in enumerate(pg)},
                   note="three pages, page numbers kept, title from the document information dictionary")


def no_text_and_corrupt() -> list[Fixture]:
    empty = build_pdf([[]])
    good = build_pdf([[b"This file was cut off in transfer."]])
    return [Fixture("pdf/no_text.pdf", "pdf", empty, skip="no text", note="a page with no text layer (a scan)"),
            Fixture("pdf/truncated.pdf", "pdf", good[: len(good) // 3], skip="PDF",
                    note="a PDF cut off in transfer: skipped with a reason")]


def all_fixtures() -> list[Fixture]:
    return [*encrypted(), *nul_glyphs(), ligatures(), hyphenation(), pages(), *no_text_and_corrupt()]
