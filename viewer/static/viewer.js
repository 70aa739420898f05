// mnemo viewer: keyboard shortcuts and the live timeline.
// Record contents are untrusted data: they only ever reach the page through textContent.
"use strict";

function rows() { return Array.from(document.querySelectorAll(".rows .row")); }

function select(delta) {
  const all = rows();
  if (!all.length) return;
  const current = all.findIndex((r) => r.classList.contains("selected"));
  const next = Math.max(0, Math.min(all.length - 1, current < 0 ? 0 : current + delta));
  all.forEach((r) => r.classList.remove("selected"));
  all[next].classList.add("selected");
  all[next].scrollIntoView({ block: "nearest" });
}

function openSelected() {
  const row = document.querySelector(".rows .row.selected a");
  if (row) window.location.href = row.getAttribute("href");
}

function toggle(id, focusSelector) {
  const box = document.getElementById(id);
  if (!box) return;
  box.open = true;
  const target = box.querySelector(focusSelector);
  if (target) target.focus();
}

let pendingG = false;
function onKey(event) {
  const tag = (event.target.tagName || "").toLowerCase();
  if (event.key === "Escape") {
    if (tag === "input" || tag === "select") { event.target.blur(); return; }
    document.querySelectorAll("details[open]").forEach((d) => { d.open = false; });
    return;
  }
  if (tag === "input" || tag === "select" || tag === "textarea" || event.metaKey || event.ctrlKey || event.altKey) return;
  if (pendingG) {
    pendingG = false;
    if (event.key === "t") { window.location.href = "/"; return; }
    if (event.key === "s") { window.location.href = "/search"; return; }
  }
  switch (event.key) {
    case "/": event.preventDefault(); (document.getElementById("q") || document.getElementById("quick-search")).focus(); break;
    case "j": select(1); break;
    case "k": select(-1); break;
    case "o": case "Enter": openSelected(); break;
    case "g": pendingG = true; break;
    case "e": event.preventDefault(); toggle("edit", "input"); break;
    case "w": event.preventDefault(); toggle("wrong", "input, button"); break;
    case "d": event.preventDefault(); toggle("forget", "button"); break;
    case "?": document.getElementById("help").showModal(); break;
    default: break;
  }
}

function rowElement(row) {
  const li = document.createElement("li");
  li.className = "row kind-" + row.kind;
  li.dataset.id = row.id;
  const a = document.createElement("a");
  a.href = "/record/" + encodeURIComponent(row.id);
  const parts = [["span", "rid", row.display_id], ["span", "badge type-" + row.type, row.type],
    ["span", "title", row.title], ["span", "proj", row.project], ["time", "", row.created_at]];
  for (const [tag, cls, text] of parts) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    el.textContent = text;
    a.appendChild(el);
  }
  li.appendChild(a);
  return li;
}

// -- the live timeline: state pushed by the server (/api/events, Server-Sent Events) -------
// The stream is open only while the tab is visible: a hidden tab closes it, and showing the
// tab again reopens it (the first event brings the page up to date).

function setText(el, text) { if (el && el.textContent !== text) el.textContent = text; }

function showRows(list, rows, emptyText) {
  const ids = rows.map((row) => row.id).join(",");
  if (list.dataset.ids === ids && (rows.length || list.querySelector(".empty"))) {
    if (!rows.length) setText(list.querySelector(".empty"), emptyText);
    return;
  }
  const known = new Set(Array.from(list.querySelectorAll(".row")).map((r) => r.dataset.id));
  const selected = (list.querySelector(".row.selected") || {}).dataset;
  const fresh = rows.map((row) => {
    const el = rowElement(row);
    if (known.size && !known.has(row.id)) el.classList.add("fresh");
    if (selected && selected.id === row.id) el.classList.add("selected");
    return el;
  });
  if (!fresh.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = emptyText;
    fresh.push(li);
  }
  list.replaceChildren(...fresh);
  list.dataset.ids = ids;
}

function showState(state) {
  const health = document.getElementById("health");
  const live = document.getElementById("live");
  if (!health || !live) return;
  // A page drawn while the stack was down has no counts or chart: draw it again, whole.
  if (health.dataset.down === "yes" && !state.down) { window.location.reload(); return; }
  for (const [name, up] of Object.entries(state.services)) {
    const pill = health.querySelector('[data-service="' + name + '"]');
    if (!pill) continue;
    pill.classList.toggle("up", up);
    pill.classList.toggle("down", !up);
    setText(pill, name + " " + (up ? "●" : "○"));
  }
  const problem = document.getElementById("stack-problem");
  setText(problem, state.problem || "");
  problem.hidden = !state.problem;
  problem.classList.toggle("banner", state.down);
  document.getElementById("live-dot").classList.toggle("off", state.down);
  setText(document.getElementById("disk"), "disk " + state.disk);
  if (state.down) {
    const empty = live.querySelector(".empty");
    if (empty) setText(empty, live.dataset.downEmpty);
    return;  // what the page shows stays; the banner says it is not current
  }
  for (const [name, count] of Object.entries(state.counts || {})) {
    setText(document.querySelector('[data-count="' + name + '"]'), String(count));
  }
  const lag = document.getElementById("vector-lag");
  if (lag && state.vector) {
    setText(lag, "vector lag " + state.vector.lag);
    lag.classList.toggle("up", state.vector.lag === 0);
    lag.classList.toggle("warn", state.vector.lag !== 0);
  }
  setText(document.getElementById("db"), "db " + state.db);
  showRows(document.getElementById("timeline"), state.rows || [], live.dataset.empty);
}

let stream = null;

function openStream() {
  if (stream || document.hidden || !document.getElementById("live")) return;
  const project = new URLSearchParams(window.location.search).get("project") || "";
  stream = new EventSource("/api/events?project=" + encodeURIComponent(project));
  stream.addEventListener("state", (event) => showState(JSON.parse(event.data)));
  // The viewer itself stopped (or the network dropped): EventSource retries by itself.
  stream.onerror = () => document.getElementById("live-dot").classList.add("off");
}

function closeStream() {
  if (stream) stream.close();
  stream = null;
}

function startLive() {
  document.addEventListener("visibilitychange", () => (document.hidden ? closeStream() : openStream()));
  openStream();
}

document.addEventListener("keydown", onKey);
document.addEventListener("DOMContentLoaded", () => {
  startLive();
  const help = document.querySelector("[data-help]");
  if (help) help.addEventListener("click", () => document.getElementById("help").showModal());
});
