// deepsearcher web page: pick collections, ask, watch the agent's steps live, read the cited report.
// No build step and no third-party code. The report's HTML is rendered by the server (markdown-it-py, raw HTML
// disabled); everything else is put on the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { token: sessionStorage.getItem("deepsearcher-token") || "", report: null, controller: null };

function headers(json) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  if (state.token) h["Authorization"] = "Bearer " + state.token;
  return h;
}

const plural = (n, word) => `${n} ${word}${Number(n) === 1 ? "" : "s"}`;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function showError(body) {
  const box = $("error");
  if (!body) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = (body.detail || String(body)) + (body.hint ? "\nhint: " + body.hint : "");
  box.hidden = false;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(Boolean(options.body)) });
  if (response.status === 401) $("token-form").hidden = false;
  if (!response.ok) {
    let body;
    try { body = await response.json(); } catch (_) { body = { detail: response.status + " " + response.statusText }; }
    const error = new Error(body.detail || "request failed");
    error.body = body;
    throw error;
  }
  return response;
}

// --- collections and info -------------------------------------------------------------------------------------
async function loadInfo() {
  try {
    const health = await (await fetch("/api/health")).json();
    if (health.auth_required && !state.token) $("token-form").hidden = false;
    const info = await (await api("/api/info")).json();
    $("info").textContent = `v${info.version} · LLM ${info.llm_model || "none"} · embeddings ${info.embedding_model}` +
      ` · agent ${info.agent}, ${plural(info.max_iter, "round")}` + (info.web_search ? ` · web ${info.web_search}` : "");
    $("web-label").hidden = !info.web_search;
    $("web-provider").textContent = info.web_search ? `(${info.web_search})` : "";
    const select = $("agent");
    select.replaceChildren(el("option", "default"));
    select.firstChild.value = "";
    for (const name of info.agents || []) {
      const option = el("option", name);
      option.value = name;
      select.append(option);
    }
  } catch (err) {
    if (err.body) showError(err.body);
  }
}

async function loadCollections() {
  const list = $("collections");
  list.replaceChildren(el("li", "Loading…", "muted small"));
  try {
    const items = await (await api("/api/collections")).json();
    list.replaceChildren();
    if (!items.length) list.append(el("li", "No collections yet: load documents with `deepsearcher load PATH`.", "muted small"));
    for (const c of items) {
      const li = el("li");
      const label = el("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.value = c.name;
      box.name = "collection";
      label.append(box, el("span", c.name), el("span", `${c.chunk_count} chunks`, "muted small"));
      li.append(label, el("span", c.description + (c.description_generated ? " (generated)" : ""), "desc"));
      list.append(li);
    }
  } catch (err) {
    list.replaceChildren(el("li", "Could not list collections.", "muted small"));
    if (err.body) showError(err.body);
  }
}

function pickedCollections() {
  return [...document.querySelectorAll("#collections input:checked")].map((b) => b.value);
}

// --- Server-Sent Events over fetch (EventSource cannot POST or send a bearer header) ----------------------------
async function* readEvents(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let kind = "message";
      const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith(":")) continue; // keep-alive comment
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") kind = val;
        else if (field === "data") data.push(val);
      }
      if (data.length) yield { kind, data: JSON.parse(data.join("\n")) };
    }
  }
}

// --- steps ------------------------------------------------------------------------------------------------------
// The words for each event come from the server (`lines`: deepsearcher.events Event.describe, the same words the
// CLI prints); the page only lays them out: the first line beside the kind, further lines below it.
const mark = (ok) => (ok === true ? "✓" : ok === false ? "✗" : "?");
const checks = (c) => Object.entries(c || {}).map(([k, v]) => `${k} ${mark(v)}`).join(", ");
const clip = (text, n = 400) => (String(text).length > n ? String(text).slice(0, n) + "…" : String(text));

function stepLines(data) {
  return Array.isArray(data.lines) ? data.lines.map((line) => clip(line)) : [];
}

function addStep(kind, data) {
  const lines = stepLines(data);
  if (!lines.length) return; // nothing to say (a round that goes on without new gaps)
  const li = el("li");
  li.dataset.kind = kind;
  li.append(el("span", kind.replace(/^query\./, ""), "kind"), el("span", lines[0]));
  for (const line of lines.slice(1)) li.append(el("span", line, "detail"));
  $("steps").append(li);
}

// --- report -----------------------------------------------------------------------------------------------------
function sourceLocation(chunk) {
  return chunk.page !== null && chunk.page !== undefined ? `${chunk.source}, p. ${chunk.page}` : chunk.source;
}

// other sources holding the same text: they took no slot of their own (Hit.also_in)
const alsoIn = (others) => "also in " + others.map(sourceLocation).join(", ");

function showReport(report) {
  state.report = report;
  $("answer-stream").textContent = "";
  $("short-answer").textContent = report.short_answer ? `Answer: ${report.short_answer}` : ""; // plain text
  $("answer").innerHTML = report.answer_html; // server-rendered with raw HTML disabled
  $("notes").innerHTML = report.notes_html || ""; // the report's notes (unsupported citations, copied dates…), likewise
  const sources = $("sources");
  sources.replaceChildren();
  // one entry per file or URL (server-side grouping: citations.group_sources), a link per cited chunk
  for (const g of report.source_groups || []) {
    const li = el("li");
    li.append(el("span", g.source + (g.title ? " — " + g.title : "") + ": ", "source-file"));
    const others = [];
    g.sources.forEach((s, i) => {
      // the place in the file (citations.place): "p. 3", "slide 4", "sheet Prices", "› Install › Linux"
      const a = el("a", `[${s.number}]` + (s.place ? ` ${s.place}` : ""));
      a.id = `source-${s.number}`;
      a.dataset.source = s.number;
      a.className = "source-link";
      a.href = `#source-${s.number}`;
      if (i) li.append(", ");
      li.append(a);
      for (const o of s.also_in || []) if (!others.some((x) => x.source === o.source && x.page === o.page)) others.push(o);
    });
    if (others.length) li.append(el("span", ` (${alsoIn(others)})`, "also-in"));
    sources.append(li);
  }
  $("sources-title").hidden = !(report.sources || []).length;
  const u = report.usage || {};
  const cost = u.cost === null || u.cost === undefined ? "" : ` · cost ${Number(u.cost).toFixed(4)}`;
  $("usage").textContent = `${u.llm_calls ?? 0} LLM calls · ${u.prompt_tokens ?? 0} prompt + ` +
    `${u.completion_tokens ?? 0} completion tokens · ${Number(u.seconds ?? 0).toFixed(1)} s${cost}` +
    (report.iterations !== undefined ? ` · ${plural(report.iterations, "round")}` : "") + (report.agent ? ` · ${report.agent}` : "") +
    (report.beast_mode ? " · forced final answer (beast mode)" : "") +
    (Object.keys(report.checks || {}).length ? ` · evaluator: ${checks(report.checks)}` : "");
  $("copy").disabled = $("download").disabled = false;
}

function openSource(number) {
  const report = state.report;
  const source = report && (report.sources || []).find((s) => Number(s.number) === Number(number));
  if (!source) return;
  const c = source.chunk;
  $("source-title").textContent = `Source [${source.number}]`;
  $("source-doc-title").textContent = c.title || "—";
  const where = $("source-location");
  where.replaceChildren();
  if (/^https?:\/\//i.test(c.source)) {
    const a = el("a", sourceLocation(c));
    a.href = c.source;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    where.append(a);
  } else {
    where.textContent = sourceLocation(c);
  }
  $("source-collection").textContent = source.collection;
  $("source-also-in").textContent = (source.also_in || []).length ? alsoIn(source.also_in) : "—";
  $("source-text").textContent = c.text;
  document.querySelectorAll("a.cite.active").forEach((a) => a.classList.remove("active"));
  document.querySelectorAll(`a.cite[data-source="${source.number}"]`).forEach((a) => a.classList.add("active"));
  $("source-panel").hidden = false;
  document.querySelector(".layout").classList.add("with-source");
}

function closeSource() {
  $("source-panel").hidden = true;
  document.querySelector(".layout").classList.remove("with-source");
}

// --- asking -----------------------------------------------------------------------------------------------------
function setRunning(running, status) {
  $("ask").disabled = running;
  $("stop").hidden = !running;
  $("status").textContent = status || "";
}

async function ask(event) {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  showError(null);
  closeSource();
  state.report = null;
  $("steps").replaceChildren();
  $("answer").replaceChildren();
  $("notes").replaceChildren();
  $("short-answer").textContent = "";
  $("answer-stream").textContent = "";
  $("sources").replaceChildren();
  $("sources-title").hidden = true;
  $("usage").textContent = "";
  $("copy").disabled = $("download").disabled = true;
  $("steps-box").hidden = false;
  $("report-box").hidden = false;
  const body = { question, stream: true, lines: true }; // lines: each event in words, as the CLI prints them
  const picked = pickedCollections();
  if (picked.length) body.collections = picked;
  if ($("agent").value) body.agent = $("agent").value;
  if ($("max-iter").value) body.max_iter = Number($("max-iter").value);
  if ($("report-kind").value === "long") body.report = "long";
  if (!$("web-label").hidden && !$("web").checked) body.web = false;
  state.controller = new AbortController();
  setRunning(true, "running…");
  try {
    const response = await api("/api/query", { method: "POST", body: JSON.stringify(body), signal: state.controller.signal });
    for await (const { kind, data } of readEvents(response)) {
      if (kind === "query.answer_token") {
        $("answer-stream").textContent += data.token ?? data.text ?? "";
      } else if (kind === "query.answer_restart") {
        // a replaced reply's text is taken back; dropped counts code points, as Array.from splits a string
        const shown = Array.from($("answer-stream").textContent);
        $("answer-stream").textContent = shown.slice(0, Math.max(0, shown.length - data.dropped)).join("");
      } else if (kind === "query.section" && data.status !== "written") {
        // each section streams under its heading; the editing pass streams the whole report again
        $("answer-stream").textContent = data.status === "editing" ? "" : $("answer-stream").textContent + `\n\n## ${data.title}\n\n`;
        addStep(kind, data);
      } else if (kind === "query.report") {
        addStep(kind, data);
        showReport(data);
      } else if (kind === "error") {
        showError(data);
      } else {
        addStep(kind, data);
      }
    }
    setRunning(false, state.report ? "done" : "stopped");
  } catch (err) {
    setRunning(false, err.name === "AbortError" ? "stopped" : "failed");
    if (err.name !== "AbortError") showError(err.body || { detail: String(err) });
  }
}

async function copyMarkdown() {
  if (!state.report) return;
  const text = state.report.markdown;
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) { // no clipboard API outside secure contexts: fall back to a selection copy
    const area = el("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  $("copy").textContent = "Copied";
  setTimeout(() => { $("copy").textContent = "Copy Markdown"; }, 1500);
}

async function downloadReport() {
  if (!state.report) return;
  const format = $("download-format").value;
  let blob;
  if (format === "md") {
    blob = new Blob([state.report.markdown], { type: "text/markdown;charset=utf-8" });
  } else {  // the server makes HTML, DOCX and PDF from the same Markdown (POST /api/export)
    try {
      const response = await api("/api/export", { method: "POST",
        body: JSON.stringify({ markdown: state.report.markdown, format }) });
      blob = await response.blob();
    } catch (error) {
      showError(error.body || { detail: String(error.message || error) });
      return;
    }
  }
  const a = el("a");
  a.href = URL.createObjectURL(blob);
  const slug = state.report.question.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60);
  a.download = `${slug || "report"}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  $("ask-form").addEventListener("submit", ask);
  $("stop").addEventListener("click", () => state.controller && state.controller.abort());
  $("refresh").addEventListener("click", loadCollections);
  $("copy").addEventListener("click", copyMarkdown);
  $("download").addEventListener("click", downloadReport);
  $("close-source").addEventListener("click", closeSource);
  $("question").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("ask-form").requestSubmit();
  });
  $("report-box").addEventListener("click", (e) => {
    const link = e.target.closest("a.cite, a.source-link");
    if (!link) return;
    e.preventDefault();
    openSource(link.dataset.source);
  });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("deepsearcher-token", state.token);
    $("token-form").hidden = true;
    showError(null);
    loadInfo();
    loadCollections();
  });
  loadInfo();
  loadCollections();
});
