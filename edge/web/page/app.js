// edge-agent's web page: the project's own script, no framework. Every name the agent sends is
// put in the page as text (textContent), never as markup; the URL is never read: the page talks
// only to the origin it came from, with relative paths.
"use strict";
const state = { csrf: "", role: "", pins: [], locks: [], timer: 0 };
const $ = (id) => document.getElementById(id);
const RANK = { viewer: 0, operator: 1, admin: 2 };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

async function call(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (method === "POST") { headers["Content-Type"] = "application/json"; headers["X-CSRF-Token"] = state.csrf; }
  const answer = await fetch(path, { method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body) });
  let data = {};
  try { data = await answer.json(); } catch (e) { data = {}; }
  return { status: answer.status, data };
}

async function op(name, args) {
  const { status, data } = await call("POST", "/api/op", { op: name, args: args || {} });
  if (status === 401) { showPairing(); throw new Error("not paired"); }
  return data;
}

function say(text, bad) { const m = $("message"); m.textContent = text || ""; m.className = bad ? "error" : ""; }
function may(role) { return RANK[state.role] >= RANK[role]; }

function showPairing() {
  $("pair").hidden = false; $("tabs").hidden = true;
  for (const s of document.querySelectorAll(".tab")) s.hidden = true;
  $("code").focus();
}

function signedIn(data) {
  state.csrf = data.csrf; state.role = data.role;
  $("who").textContent = `${data.name} (${data.role})`;
  $("pair").hidden = true; $("tabs").hidden = false;
  $("safe-state").hidden = !may("admin");
  document.querySelector('#tabs [data-tab="chat"]').hidden = !data.chat;
  show("pins"); listen();
}

function show(tab) {
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
  for (const s of document.querySelectorAll(".tab")) s.hidden = s.id !== tab;
  if (tab === "pins") loadPins();
  if (tab === "approvals") loadApprovals();
  if (tab === "sensors") loadSensors();
  if (tab === "history") loadHistory();
  if (tab === "health") loadHealth();
}

function pinName(p) { return p.aliases && p.aliases.length ? p.aliases[0] : p.pin; }
function pinRef(p) { return `${p.board}:${p.pin}`; }

async function loadPins() {
  const answer = await op("pins");
  if (!answer.ok) { say(answer.error, true); return; }
  state.pins = answer.data.pins || [];
  const recent = await op("history", { limit: 100 });
  const last = {};
  for (const r of (recent.ok && recent.data.records) || []) {
    const key = `${r.board}:${r.pin}`;
    if (!last[key] || last[key].at < r.at) last[key] = r;
  }
  const locks = await op("interlocks");
  state.locks = (locks.ok && locks.data.interlocks) || [];
  const list = $("pin-list"); list.replaceChildren();
  for (const p of state.pins) list.append(pinCard(p, last[pinRef(p)]));
}

function locksOn(p) {
  const names = [p.pin, ...(p.aliases || [])];
  const words = (text) => String(text || "").split(/[^A-Za-z0-9_:.-]+/);
  return state.locks.filter((l) => words(l.rule).some((w) => names.includes(w) || names.includes(w.split(":").pop())));
}

function countdown(p, last) {
  if (!p.max_on_seconds || !(p.value > 0) || !last || !(last.asked > 0)) return null;
  const node = el("div", { class: "facts", "data-auto-off": "" });
  const tick = () => {
    const left = Math.max(0, Math.round(last.at + p.max_on_seconds - Date.now() / 1000));
    node.textContent = `auto-off in ${left} s`;
    if (left > 0 && (node.isConnected || !node.dataset.started)) { node.dataset.started = "1"; setTimeout(tick, 1000); }
  };
  tick();
  return node;
}

function lastWords(r) {
  if (!r) return "";
  const back = r.read_back === null || r.read_back === undefined ? "" : `, read back ${r.read_back > 0 ? "on" : "off"}`;
  return `last: ${r.action} by ${r.caller} (${r.outcome}${back}) ${new Date(r.at * 1000).toLocaleTimeString()}`;
}

function pinCard(p, last) {
  const on = p.value !== null && p.value > 0;
  const words = p.shown || (p.value === null ? "unknown" : on ? "on" : "off");
  const card = el("article", { class: "card", "data-pin": pinName(p) },
    el("h3", {}, pinName(p)),
    el("div", { class: `state ${on ? "on" : "off"}`, "data-state": "" }, words),
    el("div", { class: "facts" }, `${p.board} ${p.pin} · ${p.mode}` + (p.safe ? ` · safe ${p.safe}` : "")),
    el("div", { class: "facts", "data-last": "" }, lastWords(last)));
  const timer = countdown(p, last);
  if (timer) card.append(timer);
  for (const l of locksOn(p)) {
    const holding = l.active ? `holding: ${l.why}` : l.tripped ? `tripped: ${JSON.stringify(l.tripped)}` : "clear";
    card.append(el("div", { class: `facts${l.active || l.tripped ? " error" : ""}`, "data-interlock": l.name }, `interlock ${l.name}: ${holding}`));
  }
  if (may("operator") && p.mode === "output") {
    const button = el("button", { type: "button", "aria-pressed": String(on) }, on ? "Switch off" : "Switch on");
    button.addEventListener("click", () => act("gpio.write", { pin: pinRef(p), value: on ? "off" : "on" }));
    card.append(el("div", { class: "controls" }, button));
  } else if (may("operator") && (p.mode === "pwm" || p.mode === "servo")) {
    const servo = p.mode === "servo";
    const input = el("input", { type: "range", min: "0", max: servo ? "180" : "1", step: servo ? "1" : "0.05",
      value: String(p.value || 0), "aria-label": `${pinName(p)} ${servo ? "angle" : "duty"}` });
    input.addEventListener("change", () => act(servo ? "gpio.servo" : "gpio.pwm",
      servo ? { pin: pinRef(p), angle: Number(input.value) } : { pin: pinRef(p), duty: Number(input.value) }));
    card.append(el("div", { class: "controls" }, input));
  }
  return card;
}

async function act(name, args) {
  const answer = await op(name, args);
  say(answer.ok ? answer.message : answer.error, !answer.ok);
  loadPins();
}

function listen() {
  const stream = new EventSource("/api/events");
  stream.addEventListener("hello", () => { $("live").textContent = "live"; $("live").className = "on"; });
  stream.addEventListener("approval", (e) => {
    const count = JSON.parse(e.data).approvals;
    $("approval-count").textContent = count ? `(${count})` : "";
    if (!$("approvals").hidden) loadApprovals();
  });
  stream.addEventListener("chat", (e) => chatLine("agent", JSON.parse(e.data).chat));
  stream.addEventListener("pin", () => {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => { if (!$("pins").hidden) loadPins(); }, 15);
  });
  stream.onerror = () => { $("live").textContent = "offline"; $("live").className = "off"; };
}

async function loadApprovals() {
  const { data } = await call("GET", "/api/approvals");
  const list = $("approval-list"); list.replaceChildren();
  for (const a of data.approvals || []) {
    const card = el("article", { class: "card", "data-approval": a.token }, el("h3", {}, a.summary),
      el("div", { class: "facts" }, `asked by ${a.requester}` + (a.why ? ` · ${a.why}` : "")));
    if (may("admin")) {
      for (const decision of ["approve", "deny"]) {
        const button = el("button", { type: "button" }, decision === "approve" ? "Approve" : "Deny");
        button.addEventListener("click", async () => {
          const answer = await call("POST", "/api/approve", { token: a.token, decision });
          say(answer.data.message || answer.data.error, !answer.data.ok);
          loadApprovals();
        });
        card.append(button);
      }
    }
    list.append(card);
  }
  $("approval-count").textContent = list.children.length ? `(${list.children.length})` : "";
  if (!list.children.length) list.append(el("p", {}, "Nothing is waiting for approval."));
}

async function loadSensors() {
  const answer = await op("sensors");
  const list = $("sensor-list"); list.replaceChildren();
  for (const s of (answer.data && answer.data.sensors) || []) {
    const card = el("article", { class: "card", "data-sensor": s.name }, el("h3", {}, s.name));
    for (const [quantity, r] of Object.entries(s.readings || {})) {
      const button = el("button", { type: "button", "aria-label": `Chart ${s.name} ${quantity}` }, "Chart");
      button.addEventListener("click", () => chart(s.name, quantity));
      card.append(el("div", { class: "controls" }, el("span", {}, `${quantity}: ${r.value} ${r.unit}`), button));
    }
    if (s.error) card.append(el("div", { class: "error" }, s.error));
    list.append(card);
  }
  if (!list.children.length) list.append(el("p", {}, answer.ok ? "No sensors are configured." : answer.error));
}

async function chart(name, quantity) {
  let answer = await op("sensors.history", { name, quantity, since: "7d", points: 200 });
  const wide = ((answer.data && answer.data.series) || [])[0];
  const first = wide && wide.buckets.find((b) => b.count > 0);
  if (first) {  // zoom to the span that has data
    const zoomed = await op("sensors.history", { name, quantity, since: new Date(first.start * 1000).toISOString(), points: 200 });
    if (zoomed.ok) answer = zoomed;
  }
  const series = ((answer.data && answer.data.series) || [])[0];
  $("chart-box").hidden = false;
  $("chart-title").textContent = series ? `${series.sensor} ${series.quantity} (${series.unit})` : (answer.error || "no history");
  const buckets = series ? series.buckets.filter((b) => b.mean !== null) : [];
  const records = buckets.length ? await op("history", { since: "7d", limit: 200 }) : { data: {} };
  draw($("chart"), buckets, onPeriods((records.data && records.data.records) || []));
  $("chart").setAttribute("data-points", String(buckets.length));
}

function onPeriods(records) {
  const periods = {};
  const since = {};
  for (const r of [...records].sort((a, b) => a.at - b.at)) {
    if (r.action !== "write" || r.outcome !== "ok") continue;
    const key = r.label || r.pin;
    if (r.asked > 0 && since[key] === undefined) since[key] = r.at;
    if (!(r.asked > 0) && since[key] !== undefined) { (periods[key] = periods[key] || []).push([since[key], r.at]); delete since[key]; }
  }
  const now = Date.now() / 1000;
  for (const [key, start] of Object.entries(since)) (periods[key] = periods[key] || []).push([start, now]);
  return periods;
}

function draw(canvas, buckets, periods) {
  const g = canvas.getContext("2d"); const w = canvas.width, pad = 30;
  const lanes = Object.keys(periods), h = canvas.height - lanes.length * 14;
  g.clearRect(0, 0, w, canvas.height);
  if (!buckets.length) return;
  const t0 = buckets[0].start, t1 = Math.max(buckets[buckets.length - 1].end, buckets[0].start + 1);
  const lo = Math.min(...buckets.map((b) => b.low)), hi = Math.max(...buckets.map((b) => b.high));
  const x = (t) => pad + (w - 2 * pad) * (Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0);
  const y = (v) => h - pad - (h - 2 * pad) * (v - lo) / Math.max(hi - lo, 1e-9);
  g.strokeStyle = "#2e7d32"; g.lineWidth = 2; g.beginPath();
  buckets.forEach((b, i) => { const px = x((b.start + b.end) / 2), py = y(b.mean); if (i) g.lineTo(px, py); else g.moveTo(px, py); });
  g.stroke(); g.fillStyle = "#1c2419"; g.font = "12px sans-serif";
  g.fillText(hi.toFixed(1), 2, pad); g.fillText(lo.toFixed(1), 2, h - pad);
  g.fillText(new Date(t0 * 1000).toLocaleTimeString(), pad, h - 8);
  lanes.forEach((lane, i) => {
    const top = h + i * 14;
    g.fillStyle = "#1c2419"; g.fillText(lane, 2, top + 11);
    g.fillStyle = "#e6a700";
    for (const [a, b] of periods[lane]) if (b > t0 && a < t1) g.fillRect(x(a), top + 2, Math.max(x(b) - x(a), 2), 10);
  });
}

async function loadHistory(event) {
  if (event) event.preventDefault();
  const args = { limit: 50 };
  if ($("h-pin").value) args.pin = $("h-pin").value;
  if ($("h-who").value) args.who = $("h-who").value;
  if ($("h-since").value) args.since = $("h-since").value;
  const answer = await op("history", args);
  const rows = $("history-rows"); rows.replaceChildren();
  if (!answer.ok) { say(answer.error, true); return; }
  for (const r of answer.data.records || []) {
    rows.append(el("tr", {}, el("td", {}, new Date(r.at * 1000).toLocaleString()), el("td", {}, r.label || r.pin),
      el("td", {}, r.action), el("td", {}, r.caller), el("td", {}, r.outcome + (r.reason ? ` (${r.reason})` : ""))));
  }
}

async function loadHealth() {
  const answer = await op("status");
  $("status-text").textContent = answer.ok ? answer.message : answer.error;
}

function chatLine(who, text) {
  $("chat-log").append(el("li", { class: who }, el("b", {}, who === "agent" ? "agent: " : "you: "), text));
}

async function sendChat(event) {
  event.preventDefault();
  const text = $("chat-text").value.trim();
  if (!text) return;
  const { status, data } = await call("POST", "/api/chat", { text });
  if (status === 202) { chatLine("you", text); $("chat-text").value = ""; } else say(data.error, true);
}

async function safeState() {
  if (!window.confirm("Put every output in its safe state now?")) return;
  const { data } = await call("POST", "/api/safe-state", {});
  $("safe-result").textContent = data.ok ? data.message : (data.error || "refused");
}

async function pair(event) {
  event.preventDefault();
  const { status, data } = await call("POST", "/api/pair", { code: $("code").value.trim() });
  if (status === 200) { $("pair-error").textContent = ""; signedIn(data); }
  else $("pair-error").textContent = data.error || `refused (${status})`;
}

document.addEventListener("DOMContentLoaded", async () => {
  $("pair-form").addEventListener("submit", pair);
  $("history-form").addEventListener("submit", loadHistory);
  $("safe-state").addEventListener("click", safeState);
  $("chat-form").addEventListener("submit", sendChat);
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => show(b.dataset.tab));
  const { status, data } = await call("GET", "/api/session");
  if (status === 200) signedIn(data); else showPairing();
});
