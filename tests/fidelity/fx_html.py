"""HTML fixtures: documentation pages with code and bare div lines, soft hyphens, data URIs, tables, lists, legacy
charsets, boilerplate (nav, cookie banner, related links) that must not be stored."""

from __future__ import annotations


from tests.fidelity.fixture import Fixture
from tests.fidelity.fx_text import _b64

LOREM = ("This guide walks through installing the agent on a fresh host, checking its health and rolling it back "
         "if the upgrade fails. Read it once before the maintenance window so that nothing surprises you later. ")
NAV = ('<nav><a href="/">Home</a> | <a href="/docs">Docs</a> | <a href="/pricing">Pricing</a> | '
       '<a href="/login">Log in</a></nav>')
FOOTER = "<footer>Copyright Example Corp. Privacy | Terms | Cookie settings</footer>"


def _page(body: str, title: str, lang: str = "en", charset: str = "utf-8") -> str:
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="{charset}"><title>{title}</title></head>\n'
            f"<body>\n{NAV}\n{body}\n{FOOTER}\n</body></html>\n")


def docs_page() -> Fixture:
    body = f"""<article>
<h1>Installing the relay agent</h1>
<p>{LOREM * 2}</p>
<div>IMPORTANT LINE the agent must run as the relay user, never as root.</div>
<p>{LOREM}</p>
<h2>Install</h2>
<p>Run the following command on the host:</p>
<pre><code>sudo apt-get install relay-agent=4.2.1 --no-install-recommends</code></pre>
<p>Then check the service:</p>
<pre><code class="language-bash">systemctl status relay-agent --no-pager
relayctl health --timeout 30s</code></pre>
<p>{LOREM}</p>
</article>"""
    return Fixture("html/install.html", "html", _page(body, "Installing the relay agent").encode(),
                   source_case="html_docs_page_code_and_div_lines", title="Installing the relay agent",
                   expected=("Installing the relay agent", LOREM.strip(),
                             "IMPORTANT LINE the agent must run as the relay user, never as root.",
                             "Run the following command on the host:",
                             "sudo apt-get install relay-agent=4.2.1 --no-install-recommends",
                             "systemctl status relay-agent --no-pager", "relayctl health --timeout 30s"),
                   noise=("Log in", "Cookie settings", "Pricing"),
                   note="article text, a bare <div> line and code blocks kept; nav and footer dropped")


def soft_hyphens() -> Fixture:
    html = """<!DOCTYPE html><html lang="de"><head><meta charset="utf-8"><title>Anlage</title></head><body><article>
<h1>Anlage&shy;strategie</h1>
<p>Das Gesamt&shy;konzept der Stiftung sieht vor, dass ein Indexfonds einen Wert&shy;papier&shy;index nachbildet und
die Verwaltungs&shy;kosten unter 0,2 Prozent bleiben. Die Ausschüttung erfolgt jährlich im März, und der Vorstand prüft
die Gewichtung zweimal im Jahr. Änderungen werden im Jahres&shy;bericht veröffentlicht.</p>
<p>Weitere Informationen zum Gesamt&shy;konzept erhalten Mitglieder auf der jährlichen Versammlung, die im Herbst
stattfindet und allen Stiftern offensteht.</p>
</article></body></html>
"""
    return Fixture("html/shy.html", "html", html.encode(), source_case="soft_hyphen_zero_width",
                   expected=("Anlagestrategie", "Das Gesamtkonzept der Stiftung sieht vor",
                             "einen Wertpapierindex nachbildet und die Verwaltungskosten unter 0,2 Prozent bleiben.",
                             "Änderungen werden im Jahresbericht veröffentlicht.",
                             "Weitere Informationen zum Gesamtkonzept erhalten Mitglieder"),
                   noise=("\u00ad",), note="&shy; inside German compounds")


def data_uris() -> Fixture:
    png = _b64(23, 6000)
    body = f"""<main><h1>Wiring diagram</h1>
<p>The relay board is powered from the 24 V rail and fused at 2 A.</p>
<p><img alt="wiring" src="data:image/png;base64,{png}"></p>
<p>Pasted from the old wiki: data:image/png;base64,{png[:3000]}</p>
<p>Label every cable at both ends before disconnecting it.</p>
</main>"""
    return Fixture("html/data_uri.html", "html", _page(body, "Wiring diagram").encode(),
                   expected=("The relay board is powered from the 24 V rail and fused at 2 A.",
                             "Pasted from the old wiki:", "Label every cable at both ends before disconnecting it."),
                   noise=(png[:60], png[2000:2060]), note="data URIs in an <img> and pasted into paragraph text")


def table_and_lists() -> Fixture:
    body = """<article><h1>Maintenance schedule</h1>
<p>The table lists every recurring maintenance task for the plant room and its interval.</p>
<table><thead><tr><th>Task</th><th>Interval</th><th>Owner</th></tr></thead>
<tbody><tr><td>Filter change</td><td>every 3 months</td><td>team Wren</td></tr>
<tr><td>Pump inspection</td><td>every 6 months</td><td>team Finch</td></tr></tbody></table>
<ul><li>LIST ITEM isolate the supply before opening a panel</li><li>LIST ITEM log every reading</li></ul>
<dl><dt>Lockout</dt><dd>DEFINITION a padlock on the isolator, key kept by the engineer</dd></dl>
<div>Checked by:<br>night shift<br>day shift</div>
<p><span>SPAN LINE</span> <span>keeps its words apart</span></p>
</article>
<aside class="related"><h3>Related articles</h3><a href="/a">RELATED Ten tips for tidy cables</a></aside>
<div class="cookie-banner">We use cookies to improve your experience. Accept all</div>"""
    return Fixture("html/table_lists.html", "html", _page(body, "Maintenance schedule").encode(),
                   expected=("Maintenance schedule", "Filter change", "every 3 months", "team Wren", "Pump inspection",
                             "every 6 months", "team Finch", "LIST ITEM isolate the supply before opening a panel",
                             "LIST ITEM log every reading", "Lockout",
                             "DEFINITION a padlock on the isolator, key kept by the engineer", "night shift",
                             "day shift", "SPAN LINE keeps its words apart"),
                   noise=("RELATED Ten tips", "We use cookies", "Log in"),
                   note="a data table, lists, a definition list, <br> lines; related links and cookie banner dropped")


def legacy_charsets() -> list[Fixture]:
    ja = "東京本社の移転は四月に完了しました。新しい住所は社内ポータルに掲載されています。"
    fr = "Le café coûte 2,50 € ; l’équipe déménage le 3 mai — merci de vider vos casiers."
    ja_html = _page(f"<article><h1>お知らせ</h1><p>{ja}</p></article>", "お知らせ", "ja", "shift_jis")
    fr_html = _page(f"<article><h1>Déménagement</h1><p>{fr}</p></article>", "Déménagement", "fr", "iso-8859-1")
    return [Fixture("html/shift_jis.html", "html", ja_html.encode("shift_jis"), expected=(ja,),
                    note="Shift-JIS declared in <meta charset>"),
            Fixture("html/latin1_label.html", "html", fr_html.encode("cp1252"), expected=(fr,),
                    note="labelled iso-8859-1 but holding Windows-1252 bytes (€, curly quote), as browsers assume")]


def invisible_entities() -> Fixture:
    body = """<article><h1>Scheduler flags</h1>
<p>Set <code>max&#8203;Concurrent&#8203;Reconciles</code> to 4 on large clusters; the default suits small ones and the
scheduler&nbsp;restarts&nbsp;cleanly after the change. Values above 16 are rarely useful in practice.</p>
<p>Use&#x200B;ful defaults are listed in the reference, with the reason for each default and its unit.</p>
</article>"""
    return Fixture("html/zero_width.html", "html", _page(body, "Scheduler flags").encode(),
                   expected=("maxConcurrentReconciles", "the scheduler restarts cleanly after the change.",
                             "Useful defaults are listed in the reference"),
                   noise=("\u200b", "\u00a0"), note="&#8203; and &nbsp; entities")


def no_semantic_tags() -> Fixture:
    paras = ["The cafeteria menu changes every Monday and is posted by the lifts.",
             "Vegetarian options are marked with a green leaf and vegan ones with a V.",
             "Allergen lists are available at the counter on request."]
    body = "<div class='content'>" + "".join(f"<p>{p}</p>" for p in paras) + "</div>"
    return Fixture("html/plain_divs.html", "html", _page(body, "Cafeteria").encode(), expected=tuple(paras),
                   note="a page without <article>/<main>")


def all_fixtures() -> list[Fixture]:
    return [docs_page(), soft_hyphens(), data_uris(), table_and_lists(), *legacy_charsets(), invisible_entities(),
            no_semantic_tags()]
