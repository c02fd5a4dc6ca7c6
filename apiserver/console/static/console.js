// The Warren console: reads and acts through the public API only, with the API key (and the
// operator's admin token) kept in this tab's session storage. Every view is built with DOM
// calls (text is never parsed as HTML); the pictures are inline SVG.
"use strict";

const KEY = "warren.apiKey", ADMIN = "warren.adminToken";
const SVGNS = "http://www.w3.org/2000/svg";
const MODULES = ["ip_restriction", "circuit_breaker", "compression", "request_headers", "response_headers",
  "webhook_verification", "oauth", "saml", "oidc", "websocket_tcp_converter", "user_agent_filter",
  "traffic_policy", "mutual_tls", "tls_termination"];
const SUMMARY = ["name", "description", "domain", "addr", "hostports", "match", "labels", "forwards_to",
  "public_url", "proto", "agent_version", "ip", "url", "event_type", "state"];
let families = [];

// el builds an element: attributes (on* are listeners), then children (strings are text).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function show(...nodes) {
  const main = document.getElementById("main");
  main.replaceChildren(...nodes.flat());
}

// api calls the API with the API key, or the admin token for /_admin/ paths, and returns the
// decoded answer; an error answer throws its message and code.
async function api(method, path, body) {
  const token = sessionStorage.getItem(path.startsWith("/_admin/") ? ADMIN : KEY);
  const headers = { "Authorization": "Bearer " + token, "Service-Version": "2" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
  if (resp.status === 204) return null;
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error((data.msg || resp.statusText) + (data.error_code ? " (" + data.error_code + ")" : ""));
  return data;
}

// local turns an absolute uri of the API into its path: the console only calls its origin.
function local(uri) { const u = new URL(uri, location.href); return u.pathname + u.search; }

function link(text, hash) { return el("a", { href: "#" + hash }, text); }

function params() {
  const [view, query] = location.hash.slice(1).split("?");
  return { view: view || "/", q: new URLSearchParams(query || "") };
}

function familyOf(id) { return families.find(f => id.startsWith(f.prefix) && !f.parent); }

function objectHash(obj) {
  if (obj.uri) return "/object?path=" + encodeURIComponent(local(obj.uri));
  const f = familyOf(obj.id);
  return f ? "/object?path=" + encodeURIComponent(f.path + "/" + obj.id) : "/";
}

function edgeKind(path) { const m = /^\/edges\/(https|tcp|tls)\/([^/]+)$/.exec(path); return m && { kind: m[1], id: m[2] }; }

function summary(obj) {
  const parts = [];
  for (const k of SUMMARY) {
    const v = obj[k];
    if (v === undefined || v === null || v === "" || (Array.isArray(v) && !v.length)) continue;
    parts.push(k + ": " + (typeof v === "object" ? (Array.isArray(v) ? v.join(", ") : Object.entries(v).map(([a, b]) => a + "=" + b).join(", ")) : v));
    if (parts.length === 3) break;
  }
  return parts.join(" · ");
}

function errorView(err) { return el("p", { class: "error", role: "alert" }, String(err.message || err)); }

// --- Views -------------------------------------------------------------------------------

function signInView() {
  const err = el("p", { class: "error", role: "alert", id: "signin-error" });
  const form = el("form", { id: "signin", onsubmit: async ev => {
    ev.preventDefault();
    const key = form.querySelector("#api-key").value.trim(), admin = form.querySelector("#admin-token").value.trim();
    sessionStorage.setItem(KEY, key);
    if (admin) sessionStorage.setItem(ADMIN, admin); else sessionStorage.removeItem(ADMIN);
    try {
      await api("GET", "/api_keys?limit=1");
      if (admin) await api("GET", "/_admin/events?limit=1");
    } catch (e) {
      sessionStorage.removeItem(KEY); sessionStorage.removeItem(ADMIN);
      err.textContent = "Sign-in failed: " + e.message;
      return;
    }
    location.hash = "#/";
    route();
  } },
    el("h2", {}, "Sign in"),
    el("p", { class: "muted" }, "The key stays in this tab's session storage and is sent only to this server's API."),
    el("label", { for: "api-key" }, "API key"),
    el("input", { id: "api-key", type: "password", autocomplete: "off", required: true }),
    el("label", { for: "admin-token" }, "Admin token (optional: the operator views)"),
    el("input", { id: "admin-token", type: "password", autocomplete: "off" }),
    el("div", { class: "row" }, el("button", { type: "submit", id: "signin-submit" }, "Sign in")),
    err);
  show(form);
  form.querySelector("#api-key").focus();
}

function homeView() {
  const listed = families.filter(f => !f.no_list);
  show(el("h2", {}, "Objects"),
    el("ul", { class: "families" }, listed.map(f => el("li", {}, link(f.path.slice(1), "/list?path=" + encodeURIComponent(f.path))))));
}

async function listView(q) {
  const path = q.get("path"), filter = q.get("filter") || "", page = q.get("page");
  const input = el("input", { type: "text", id: "filter", value: filter, "aria-label": "CEL filter", placeholder: "a CEL filter, e.g. obj.description.contains(\"web\")" });
  const form = el("form", { class: "row", role: "search", onsubmit: ev => {
    ev.preventDefault();
    location.hash = "#/list?" + new URLSearchParams({ path, filter: input.value });
  } }, input, el("button", { type: "submit", id: "search" }, "Search"));
  show(el("h2", {}, path.slice(1)), form, el("p", {}, "Loading…"));
  try {
    const fam = families.find(f => f.path === path);
    const url = page ? page : path + "?" + new URLSearchParams(Object.assign({ limit: "20" }, filter ? { filter } : {}));
    const data = await api("GET", url);
    const objs = data[fam ? fam.member : Object.keys(data).find(k => Array.isArray(data[k]))] || [];
    const rows = objs.map(o => el("tr", {},
      el("td", {}, link(o.id, objectHash(o.uri ? o : Object.assign({ uri: path + "/" + o.id }, o)))),
      el("td", {}, summary(o)),
      el("td", { class: "muted" }, o.created_at || o.started_at || "")));
    const next = data.next_page_uri ? el("button", { type: "button", id: "next-page", onclick: () => {
      location.hash = "#/list?" + new URLSearchParams({ path, filter, page: local(data.next_page_uri) });
    } }, "Next page") : null;
    const first = page ? el("button", { type: "button", onclick: () => { location.hash = "#/list?" + new URLSearchParams({ path, filter }); } }, "First page") : null;
    show(el("h2", {}, path.slice(1)), form,
      objs.length ? el("table", { id: "results" }, el("thead", {}, el("tr", {}, el("th", {}, "ID"), el("th", {}, "Summary"), el("th", {}, "Created"))), el("tbody", {}, rows))
        : el("p", { id: "results", class: "muted" }, "No objects."),
      el("div", { class: "row" }, first, next));
  } catch (e) {
    show(el("h2", {}, path.slice(1)), form, errorView(e));
  }
  input.focus();
}

async function objectView(q) {
  const path = q.get("path");
  const edge = edgeKind(path);
  if (edge) return edgeView(edge.kind, edge.id);
  try {
    const obj = await api("GET", path);
    show(el("h2", {}, obj.id || path), el("pre", { id: "object" }, JSON.stringify(obj, null, 2)));
  } catch (e) { show(el("h2", {}, path), errorView(e)); }
}

// backendTunnels resolves a backend to what it sends to: its own node and the tunnels online
// behind it (a failover or weighted backend's through its backends).
async function backendTunnels(id, depth) {
  const f = familyOf(id);
  if (!f || depth > 3) return { label: id, tunnels: [] };
  const b = await api("GET", f.path + "/" + id);
  const kind = f.path.split("/").pop();
  let tunnels = [], label = kind + " " + id;
  if (kind === "tunnel_group") {
    tunnels = (b.tunnels || []).map(t => t.id);
    label += " " + Object.entries(b.labels || {}).map(([k, v]) => k + "=" + v).join(",");
  } else if (kind === "failover" || kind === "weighted") {
    const subs = kind === "failover" ? (b.backends || []) : Object.keys(b.backends || {});
    for (const s of subs) tunnels.push(...(await backendTunnels(s, depth + 1)).tunnels);
  } else if (kind === "static") label += " " + (b.address || "");
  else if (kind === "http_response") label += " " + (b.status_code || "");
  return { label, kind, tunnels };
}

function modulesOf(o) { return MODULES.filter(m => o[m] && o[m].enabled !== false); }

async function edgeView(kind, id) {
  show(el("h2", {}, kind.toUpperCase() + " edge " + id), el("p", {}, "Loading…"));
  try {
    const edge = await api("GET", "/edges/" + kind + "/" + id);
    // An HTTPS edge's paths are its routes; a TCP or TLS edge is one path of its own.
    const paths = kind === "https" ? (edge.routes || []).map(r => ({ id: r.id, label: r.match_type + " " + r.match, obj: r }))
      : [{ id: edge.id, label: "(the edge)", obj: edge }];
    for (const p of paths) {
      p.modules = modulesOf(p.obj);
      p.backend = p.obj.backend && p.obj.backend.backend ? await backendTunnels(p.obj.backend.backend.id, 0) : null;
    }
    const sessions = await tunnelStates();
    show(el("h2", {}, kind.toUpperCase() + " edge " + id),
      el("p", { class: "muted" }, edge.description || ""),
      el("div", { class: "card" }, el("h3", {}, "Shape"), shape(edge.hostports || [], paths, sessions)),
      el("ul", { id: "routes" }, paths.map(p => el("li", {}, link(p.label, kind === "https" ? "/object?path=" + encodeURIComponent("/edges/https/" + id + "/routes/" + p.id) : "/object?path=" + encodeURIComponent("/edges/" + kind + "/" + id)),
        " → ", p.backend ? p.backend.label : "no backend",
        " → ", p.backend && p.backend.tunnels.length ? p.backend.tunnels.map(t => el("span", { class: "online tunnel" }, t + " (online) ")) : el("span", { class: "offline" }, "no tunnel online")))),
      el("h3", {}, "Traffic, last hour"),
      el("div", { class: "charts", id: "charts" }, "Loading…"),
      el("details", {}, el("summary", {}, "JSON"), el("pre", {}, JSON.stringify(edge, null, 2))));
    const charts = [];
    charts.push(chart("Edge " + id, await api("GET", "/edges/" + kind + "/" + id + "/traffic")));
    if (kind === "https") for (const p of paths) charts.push(chart("Route " + p.label, await api("GET", "/edges/https/" + id + "/routes/" + p.id + "/traffic")));
    document.getElementById("charts").replaceChildren(...charts);
  } catch (e) { show(el("h2", {}, kind + " edge " + id), errorView(e)); }
}

async function tunnelStates() {
  const data = await api("GET", "/tunnels?limit=100");
  return new Map((data.tunnels || []).map(t => [t.id, t]));
}

// shape draws hostports → routes → modules → backend → tunnels as boxes joined by lines.
function shape(hostports, paths, tunnels) {
  const W = 190, H = 34, GAP = 48, VGAP = 14, cols = 5;
  const rows = Math.max(hostports.length, paths.reduce((n, p) => n + Math.max(1, p.backend ? p.backend.tunnels.length : 1), 0), 1);
  const width = cols * W + (cols - 1) * GAP + 2, height = rows * (H + VGAP) + 30;
  const g = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", id: "shape",
    "aria-label": "Edge shape: hostports, routes, modules, backend and tunnels" });
  const heads = ["hostports", "routes", "modules", "backend", "tunnels"];
  heads.forEach((h, i) => g.append(svg("text", { x: i * (W + GAP) + 4, y: 14, fill: "#5b6475", "font-size": 12 }, h)));
  const box = (col, row, text, color) => {
    const x = col * (W + GAP) + 1, y = 24 + row * (H + VGAP);
    g.append(svg("rect", { x, y, width: W, height: H, rx: 5, fill: "#fff", stroke: color || "#1f5fbf" }),
      svg("text", { x: x + 8, y: y + 21, fill: color || "#1d2330", "font-size": 12 }, svg("title", {}, text), text.length > 26 ? text.slice(0, 25) + "…" : text));
    return { x, y };
  };
  const line = (a, b) => g.insertBefore(svg("line", { x1: a.x + W, y1: a.y + H / 2, x2: b.x, y2: b.y + H / 2, stroke: "#8a93a5" }), g.firstChild);
  const hosts = hostports.map((h, i) => box(0, i, h));
  let row = 0;
  for (const p of paths) {
    const span = Math.max(1, p.backend ? p.backend.tunnels.length : 1);
    const r = box(1, row, p.label), m = box(2, row, p.modules.length ? p.modules.join(", ") : "no modules", "#5b6475");
    hosts.forEach(h => line(h, r));
    line(r, m);
    const b = box(3, row, p.backend ? p.backend.label : "no backend", p.backend ? undefined : "#b3261e");
    line(m, b);
    if (p.backend && p.backend.tunnels.length) {
      p.backend.tunnels.forEach((t, i) => {
        const info = tunnels.get(t);
        line(b, box(4, row + i, t + (info ? " " + info.forwards_to : "") + " online", "#1e7d32"));
      });
    } else if (p.backend && p.backend.kind !== "http_response" && p.backend.kind !== "static") {
      line(b, box(4, row, "no tunnel online", "#b3261e"));
    }
    row += span;
  }
  return g;
}

// chart draws a traffic answer: requests per minute stacked by status class, and the p90
// latency as a line, over the last hour.
function chart(title, t) {
  const W = 360, H = 150, PAD = 28, n = t.buckets.length;
  const colors = { "2xx": "#1e7d32", "3xx": "#1f5fbf", "4xx": "#d08700", "5xx": "#b3261e", "1xx": "#8a93a5" };
  const max = Math.max(1, ...t.buckets.map(b => b.requests + b.connections));
  const maxLat = Math.max(1, ...t.buckets.map(b => b.latency_ms ? b.latency_ms.p90 : 0));
  const bw = (W - PAD) / n;
  const total = t.buckets.reduce((s, b) => s + b.requests, 0), conns = t.buckets.reduce((s, b) => s + b.connections, 0);
  const g = svg("svg", { viewBox: `0 0 ${W} ${H + 20}`, width: W, height: H + 20, role: "img", class: "chart",
    "aria-label": `${title}: ${total} requests and ${conns} connections in the last hour` });
  g.append(svg("line", { x1: PAD, y1: H, x2: W, y2: H, stroke: "#d5dae3" }),
    svg("text", { x: 0, y: 12, "font-size": 10, fill: "#5b6475" }, String(max)),
    svg("text", { x: 0, y: H, "font-size": 10, fill: "#5b6475" }, "0"),
    svg("text", { x: PAD, y: H + 14, "font-size": 10, fill: "#5b6475" }, "-60 min"),
    svg("text", { x: W - 30, y: H + 14, "font-size": 10, fill: "#5b6475" }, "now"));
  t.buckets.forEach((b, i) => {
    let y = H;
    for (const c of ["2xx", "3xx", "4xx", "5xx", "1xx"]) {
      const v = b.status[c];
      if (!v) continue;
      const h = (v / max) * (H - 10);
      y -= h;
      g.append(svg("rect", { x: PAD + i * bw, y, width: Math.max(1, bw - 1), height: h, fill: colors[c] }, svg("title", {}, `${b.start}: ${v} ${c}`)));
    }
    if (b.connections) {
      const h = (b.connections / max) * (H - 10);
      g.append(svg("rect", { x: PAD + i * bw, y: y - h, width: Math.max(1, bw - 1), height: h, fill: "#6b4fbb" }, svg("title", {}, `${b.start}: ${b.connections} connections`)));
    }
  });
  const pts = t.buckets.map((b, i) => b.latency_ms ? `${PAD + i * bw + bw / 2},${H - (b.latency_ms.p90 / maxLat) * (H - 10)}` : null).filter(Boolean);
  if (pts.length > 1) g.append(svg("polyline", { points: pts.join(" "), fill: "none", stroke: "#1d2330", "stroke-dasharray": "3 2" }));
  const last = t.buckets.filter(b => b.latency_ms).pop();
  return el("figure", { class: "card" }, el("figcaption", {}, el("strong", {}, title), " — ",
    `${total} requests` + (conns ? `, ${conns} connections` : "") + (last ? `, latest p50 ${last.latency_ms.p50} ms, p90 ${last.latency_ms.p90} ms, p99 ${last.latency_ms.p99} ms` : "")), g);
}

async function agentsView() {
  show(el("h2", {}, "Agents online"), el("p", {}, "Loading…"));
  try {
    const [sessions, tunnels] = await Promise.all([api("GET", "/tunnel_sessions?limit=100"), api("GET", "/tunnels?limit=100")]);
    const list = sessions.tunnel_sessions || [];
    const cards = list.map(s => {
      const own = (tunnels.tunnels || []).filter(t => t.tunnel_session && t.tunnel_session.id === s.id);
      const command = name => el("button", { type: "button", class: name === "stop" ? "danger" : "", id: name + "-" + s.id,
        onclick: () => confirmThen(`${name === "stop" ? "Stop" : "Restart"} the agent session ${s.id} (${s.os}, ${s.ip})?`, async () => {
          await api("POST", "/tunnel_sessions/" + s.id + "/" + name, {});
          await sessionEnded(s.id);
          agentsView();
        }) }, name === "stop" ? "Stop" : "Restart");
      return el("div", { class: "card session", id: "session-" + s.id },
        el("h3", {}, s.id), el("p", { class: "muted" }, `agent ${s.agent_version} on ${s.os}, ${s.ip}, since ${s.started_at}, region ${s.region}`),
        own.length ? el("ul", {}, own.map(t => el("li", {}, t.id, " ", t.public_url || "", " → ", t.forwards_to, " ",
          Object.entries(t.labels || {}).map(([k, v]) => k + "=" + v).join(", ")))) : el("p", { class: "muted" }, "No tunnels."),
        el("div", { class: "row" }, command("restart"), command("stop")));
    });
    show(el("h2", {}, "Agents online"), cards.length ? cards : el("p", { class: "muted", id: "no-agents" }, "No agent is online."));
  } catch (e) { show(el("h2", {}, "Agents online"), errorView(e)); }
}

// sessionEnded waits (up to 10 s) until the server no longer lists a session that was told
// to stop or restart: the agent answers before its session ends.
async function sessionEnded(id) {
  for (let i = 0; i < 40; i++) {
    const data = await api("GET", "/tunnel_sessions?limit=100");
    if (!(data.tunnel_sessions || []).some(s => s.id === id)) return;
    await new Promise(done => setTimeout(done, 250));
  }
}

// confirmThen asks in a modal dialog (Escape or Cancel keeps things as they are).
function confirmThen(text, action) {
  const d = document.getElementById("confirm");
  document.getElementById("confirm-text").textContent = text;
  const ok = document.getElementById("confirm-ok"), cancel = document.getElementById("confirm-cancel");
  const done = () => { ok.onclick = cancel.onclick = null; d.close(); };
  cancel.onclick = done;
  ok.onclick = async () => {
    done();
    try { await action(); } catch (e) { document.getElementById("main").prepend(errorView(e)); }
  };
  d.showModal();
  cancel.focus();
}

async function adminList(title, path, member, columns) {
  show(el("h2", {}, title), el("p", {}, "Loading…"));
  try {
    const data = await api("GET", path + "?limit=50");
    const objs = data[member] || [];
    show(el("h2", {}, title), objs.length ? el("table", { id: member },
      el("thead", {}, el("tr", {}, columns.map(c => el("th", {}, c)))),
      el("tbody", {}, objs.map(o => el("tr", { id: (o.id || o.event_id) }, columns.map(c =>
        el("td", c === "state" ? { class: "state-" + o[c] } : {}, o[c] === null || o[c] === undefined ? "" : String(o[c]))))))) : el("p", { class: "muted" }, "None."));
  } catch (e) { show(el("h2", {}, title), errorView(e)); }
}

// --- Navigation ----------------------------------------------------------------------------

function nav() {
  const links = [["Objects", "/"], ["Agents", "/agents"]];
  if (sessionStorage.getItem(ADMIN)) links.push(["Events", "/events"], ["Deliveries", "/deliveries"]);
  const current = params().view;
  document.getElementById("nav").replaceChildren(...links.map(([t, h]) => el("a", { href: "#" + h, "aria-current": current === h ? "page" : false }, t)));
}

async function route() {
  const signedIn = !!sessionStorage.getItem(KEY);
  document.getElementById("signout").hidden = !signedIn;
  if (!signedIn) { document.getElementById("nav").replaceChildren(); return signInView(); }
  nav();
  const { view, q } = params();
  switch (view) {
    case "/list": return listView(q);
    case "/object": return objectView(q);
    case "/agents": return agentsView();
    case "/events": return adminList("Events", "/_admin/events", "events", ["event_id", "event_type", "event_timestamp", "account_id"]);
    case "/deliveries": return adminList("Deliveries", "/_admin/deliveries", "deliveries", ["id", "event_id", "destination_id", "state", "attempts", "last_error", "updated_at"]);
    default: return homeView();
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("signout").addEventListener("click", () => {
    sessionStorage.removeItem(KEY); sessionStorage.removeItem(ADMIN);
    location.hash = "#/";
    route();
  });
  families = await (await fetch("families.json")).json();
  window.addEventListener("hashchange", () => { route(); document.getElementById("main").focus(); });
  route();
});
