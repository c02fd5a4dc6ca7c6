"use strict";
// The inspector's page: the exchanges arrive as server-sent events (recorded, then
// answered), newest first; Enter or a click shows one; arrow keys move in the list.
const rows = new Map(); // id → {ex, tr}
let selected = null;
const tbody = document.querySelector("#list tbody");
const $ = (id) => document.getElementById(id);

function fmtTime(t) { return new Date(t).toLocaleTimeString(); }
function decode(b64) {
  if (!b64) return "";
  const bin = atob(b64);
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}
function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
}
function fill(tr, ex) {
  tr.replaceChildren();
  cell(tr, fmtTime(ex.time));
  cell(tr, ex.method + (ex.replay ? " (replay)" : ""), ex.replay ? "replay" : "");
  cell(tr, ex.path);
  cell(tr, ex.status ? String(ex.status) : (ex.error ? "error" : "…"), ex.status ? "s" + String(ex.status)[0] : (ex.error ? "err" : ""));
  cell(tr, ex.status ? ex.duration_ms.toFixed(1) + " ms" : "");
}
function upsert(ex) {
  let r = rows.get(ex.id);
  if (!r) {
    const tr = document.createElement("tr");
    tr.tabIndex = 0;
    tr.dataset.id = ex.id;
    tr.addEventListener("click", () => select(ex.id));
    tr.addEventListener("keydown", onRowKey);
    tbody.prepend(tr);
    r = { tr };
    rows.set(ex.id, r);
  }
  r.ex = ex;
  fill(r.tr, ex);
  $("empty").hidden = true;
  if (selected === ex.id) show(ex);
}
function onRowKey(ev) {
  const tr = ev.currentTarget;
  if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(Number(tr.dataset.id)); }
  else if (ev.key === "ArrowDown" && tr.nextElementSibling) { ev.preventDefault(); tr.nextElementSibling.focus(); }
  else if (ev.key === "ArrowUp" && tr.previousElementSibling) { ev.preventDefault(); tr.previousElementSibling.focus(); }
}
function headerTable(table, headers) {
  table.replaceChildren();
  for (const h of headers || []) {
    const tr = document.createElement("tr");
    cell(tr, h.name);
    cell(tr, h.value);
    table.appendChild(tr);
  }
}
function select(id) {
  selected = id;
  for (const [k, r] of rows) r.tr.setAttribute("aria-selected", String(k === id));
  $("editor").hidden = true;
  $("replay-result").textContent = "";
  show(rows.get(id).ex);
}
function show(ex) {
  $("detail").hidden = false;
  $("detail-title").textContent = ex.method + " " + ex.host + ex.path;
  headerTable($("req-headers"), ex.request_headers);
  headerTable($("resp-headers"), ex.response_headers);
  $("req-body").textContent = decode(ex.request_body) + (ex.request_body_truncated ? "\n… (cut)" : "");
  $("resp-body").textContent = ex.error ? ex.error : decode(ex.response_body) + (ex.response_body_truncated ? "\n… (cut)" : "");
}
async function replay(edit) {
  $("replay-result").textContent = "replaying…";
  const res = await fetch("api/exchanges/" + selected + "/replay", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(edit || {}),
  });
  const body = await res.json();
  $("replay-result").textContent = res.ok ? "Replayed " + body.method + " " + body.path + ": " + body.status : "Replay failed: " + body.error;
  if (res.ok) upsert(body);
}
$("replay").addEventListener("click", () => replay());
$("edit").addEventListener("click", () => {
  const ex = rows.get(selected).ex;
  $("edit-method").value = ex.method;
  $("edit-path").value = ex.path;
  $("edit-headers").value = (ex.request_headers || []).map((h) => h.name + ": " + h.value).join("\n");
  $("edit-body").value = decode(ex.request_body);
  $("editor").hidden = false;
  $("edit-method").focus();
});
$("editor").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const headers = $("edit-headers").value.split("\n").filter((l) => l.includes(":")).map((l) => {
    const i = l.indexOf(":");
    return { name: l.slice(0, i).trim(), value: l.slice(i + 1).trim() };
  });
  replay({ method: $("edit-method").value, path: $("edit-path").value, headers, body: $("edit-body").value });
});
const events = new EventSource("api/events");
events.onopen = () => { $("status").textContent = "live"; };
events.onerror = () => { $("status").textContent = "reconnecting…"; };
events.onmessage = (m) => upsert(JSON.parse(m.data));
