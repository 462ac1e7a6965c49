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


LANGUAGES = ["Afrikaans", "Alemannisch", "Asturianu", "Brezhoneg", "Català", "Čeština", "Cymraeg", "Dansk",
             "Deutsch", "Eesti", "Español", "Esperanto", "Euskara", "Français", "Gaeilge", "Galego", "Hrvatski",
             "Italiano", "Latina", "Lietuvių", "Magyar", "Nederlands", "Norsk bokmål", "Polski", "Português",
             "Română", "Slovenčina", "Suomi", "Svenska", "Türkçe"]
WIKI_BODY = ("The grey heron is a long-legged wading bird of the heron family, native throughout temperate Europe "
             "and Asia and also parts of Africa. It feeds mostly on aquatic creatures which it catches after "
             "standing stationary beside or in the water or stalking its prey through the shallows.")
WIKI_BREEDING = ("Breeding starts in February; the nest is a bulky platform of sticks built high in a tree, and "
                 "both parents incubate the three to five eggs for about 25 days.")


def wiki_like() -> Fixture:
    """A Wikipedia-style page (MediaWiki's Vector skin): <main> also holds the page tools, a language list and
    the category box; a bare text line sits in a <div> between paragraphs."""
    langs = "".join(f'<li class="interlanguage-link"><a href="https://x.org/{i}" lang="x">{name}</a></li>'
                    for i, name in enumerate(LANGUAGES))
    tools = "".join(f'<li class="mw-list-item"><a href="/w/index.php?t={i}"><span>{name}</span></a></li>'
                    for i, name in enumerate(["What links here", "Related changes", "Upload file",
                                              "Permanent link", "Get shortened URL", "Download QR code"]))
    html = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Grey heron - Wikipedia</title></head>
<body class="skin-vector">
<div class="mw-page-container"><div class="mw-page-container-inner">
<div class="vector-main-menu-container"><nav id="mw-panel" class="vector-main-menu-landmark">
<ul><li><a href="/wiki/Main_Page">Main page</a></li><li><a href="/wiki/Contents">Contents</a></li>
<li><a href="/wiki/Random">Random article</a></li></ul></nav></div>
<div class="mw-content-container">
<main id="content" class="mw-body">
<header class="mw-body-header vector-page-titlebar">
<button class="vector-toc-toggle">Toggle the table of contents</button>
<h1 id="firstHeading" class="firstHeading mw-first-heading"><span class="mw-page-title-main">Grey heron</span></h1>
<div id="p-lang-btn" class="vector-dropdown mw-portlet mw-portlet-lang">
<input type="checkbox" id="p-lang-btn-checkbox" role="button" class="vector-dropdown-checkbox"
 aria-label="Go to an article in another language. Available in 30 languages">
<label id="p-lang-btn-label" for="p-lang-btn-checkbox" class="vector-dropdown-label cdx-button" aria-hidden="true">
<span class="vector-icon mw-ui-icon-language-progressive"></span>
<span class="vector-dropdown-label-text">30 languages</span></label>
<div class="vector-dropdown-content"><div class="vector-menu-content"><ul class="vector-menu-content-list">{langs}</ul>
</div></div></div>
</header>
<div class="vector-page-toolbar"><nav class="vector-page-tools-landmark" aria-label="Page tools">
<div id="vector-page-tools" class="vector-page-tools"><div id="p-tb" class="vector-menu mw-portlet mw-portlet-tb">
<div class="vector-menu-heading">General</div><div class="vector-menu-content"><ul class="vector-menu-content-list">
{tools}</ul></div></div></div></nav></div>
<div id="bodyContent" class="vector-body">
<div id="siteSub" class="noprint">From Wikipedia, the free encyclopedia</div>
<div id="mw-content-text" class="mw-body-content"><div class="mw-content-ltr mw-parser-output" lang="en" dir="ltr">
<table class="infobox biota"><tbody><tr><th colspan="2">Grey heron</th></tr>
<tr><td>Order:</td><td>Pelecaniformes</td></tr><tr><td>Family:</td><td>Ardeidae</td></tr></tbody></table>
<p>{WIKI_BODY}<sup class="reference"><a href="#cite_note-1">[1]</a></sup></p>
<div>WINGSPAN LINE the wingspan is 155 to 195 cm and adults weigh 1 to 2 kg.</div>
<h2><span class="mw-headline" id="Breeding">Breeding</span></h2>
<p>{WIKI_BREEDING}</p>
<h2><span class="mw-headline" id="References">References</span></h2>
<ol class="references"><li id="cite_note-1">Cramp, S. (1977). <i>Handbook of the Birds of Europe</i>.</li></ol>
</div></div>
<div id="catlinks" class="catlinks"><div id="mw-normal-catlinks" class="mw-normal-catlinks">
<a href="/wiki/Help:Category">Categories</a>: <ul><li><a href="/wiki/Category:Ardea">Ardea</a></li></ul></div>
<div id="mw-hidden-catlinks" class="mw-hidden-catlinks mw-hidden-cats-hidden">Hidden categories:
<ul><li><a href="/wiki/Category:Articles_with_short_description">Articles with short description</a></li>
</ul></div></div>
</div>
</main>
</div></div></div>
<footer id="footer" class="mw-footer"><ul><li>This page was last edited on 1 March 2024.</li>
<li><a href="/wiki/Privacy">Privacy policy</a></li></ul></footer>
</body></html>
"""
    return Fixture("html/wiki_like.html", "html", html.encode(), title="Grey heron - Wikipedia",
                   expected=("Grey heron", WIKI_BODY, "WINGSPAN LINE the wingspan is 155 to 195 cm and adults "
                             "weigh 1 to 2 kg.", "Breeding", WIKI_BREEDING),
                   noise=("Get shortened URL", "Download QR code", "What links here", "Afrikaans", "Norsk bokmål",
                          "30 languages", "Toggle the table of contents", "Hidden categories", "Random article",
                          "Privacy policy"),
                   note="a MediaWiki page: <main> also holds page tools, languages and categories (a whole-"
                        "<main> extraction stores them)")


def bare_text_between_blocks() -> Fixture:
    steps = ["STEP ONE unplug the unit before opening the case.", "STEP TWO lift the tray by the two green tabs.",
             "STEP THREE the fan filter is washable in lukewarm water."]
    body = (f"<section><h1>Cleaning the fan filter</h1>{steps[0]}<h2>Tray</h2><p>{LOREM}</p>{steps[1]}"
            f"<div class='note'><p>{LOREM}</p>{steps[2]}</div></section>")
    return Fixture("html/bare_text.html", "html", _page(body, "Cleaning the fan filter").encode(),
                   expected=("Cleaning the fan filter", *steps, LOREM.strip()), noise=("Log in", "Cookie settings"),
                   note="bare text between block elements (after a heading, after a paragraph) in a section/div")


def all_fixtures() -> list[Fixture]:
    return [docs_page(), soft_hyphens(), data_uris(), table_and_lists(), *legacy_charsets(), invisible_entities(),
            no_semantic_tags(), wiki_like(), bare_text_between_blocks()]
