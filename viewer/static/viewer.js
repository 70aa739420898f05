// mnemo viewer: keyboard shortcuts and the live timeline.
// Record contents are untrusted data: they only ever reach the page through textContent.
"use strict";

const POLL_MS = 1000;

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

async function refreshTimeline(list, dot) {
  const project = new URLSearchParams(window.location.search).get("project") || "";
  try {
    const reply = await fetch("/api/recent?project=" + encodeURIComponent(project), { credentials: "same-origin" });
    if (!reply.ok) throw new Error(String(reply.status));
    const body = await reply.json();
    const known = new Set(Array.from(list.querySelectorAll(".row")).map((r) => r.dataset.id));
    const selected = (list.querySelector(".row.selected") || {}).dataset;
    const fresh = body.rows.map((row) => {
      const el = rowElement(row);
      if (known.size && !known.has(row.id)) el.classList.add("fresh");
      if (selected && selected.id === row.id) el.classList.add("selected");
      return el;
    });
    if (fresh.length) list.replaceChildren(...fresh);
    dot.classList.remove("off");
  } catch (err) {
    dot.classList.add("off");
  }
}

function startLive() {
  const list = document.getElementById("timeline");
  const dot = document.getElementById("live-dot");
  if (!list || !dot) return;
  const tick = () => refreshTimeline(list, dot).finally(() => setTimeout(tick, POLL_MS));
  setTimeout(tick, POLL_MS);
}

document.addEventListener("keydown", onKey);
document.addEventListener("DOMContentLoaded", () => {
  startLive();
  const help = document.querySelector("[data-help]");
  if (help) help.addEventListener("click", () => document.getElementById("help").showModal());
});
