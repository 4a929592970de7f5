// krypenv's web page: play against agents and watch replays. Vanilla JS, no network beyond this server.
// The server holds every game and decides legality: this page only draws what it is sent and
// sends back the number of a legal move from the list the server gave it.
"use strict";

const INLINE = window.KRYPENV_INLINE || null; // replay data of a self-contained file (krypenv replay --html)
const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const KILLE_RANKS = ["blaren", "blompotta", "krans", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
  "vardshus", "kavall", "svin", "husar", "gok", "kille"]; // display order only (low to high)

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

function showError(msg) {
  const p = $("error");
  p.textContent = msg || "";
  p.hidden = !msg;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.body = JSON.stringify(body);
    opts.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(path, opts);
  let data;
  try { data = await resp.json(); } catch (e) { throw new Error(`${resp.status} ${resp.statusText} from ${path}`); }
  if (!resp.ok) throw new Error(data.error || `${resp.status} from ${path}`);
  return data;
}

// ---------------------------------------------------------------- cards
function cardEl(game, name, extra) {
  const c = el("div", "card face " + (extra || ""));
  c.dataset.card = name;
  if (game === "krypkasino") {
    const suit = name.slice(-1), rank = name.slice(0, -1);
    c.classList.add("suit-" + suit);
    c.title = `${rank} of ${SUIT_NAMES[suit]}`;
    c.append(el("span", "rank", rank), el("span", "pip", SUITS[suit]));
  } else {
    const k = KILLE_RANKS.indexOf(name);
    c.classList.add("kille", /^\d+$/.test(name) ? "num" : "named");
    c.style.setProperty("--hue", String((k * 47) % 360));
    c.title = `${name} (rank ${k + 1} of 21)`;
    c.append(el("span", "rank", name));
  }
  return c;
}

function backs(n, small) {
  const h = el("div", "hand backs" + (small ? " small" : ""));
  for (let i = 0; i < n; i++) h.append(el("div", "card back"));
  if (!n) h.append(el("span", "small", "no cards"));
  return h;
}

function cardRow(game, names, cls) {
  const h = el("div", "hand " + (cls || ""));
  names.forEach((n, i) => { const c = cardEl(game, n); c.dataset.i = i; h.append(c); });
  if (!names.length) h.append(el("span", "small", "—"));
  return h;
}

// ---------------------------------------------------------------- the board (play and replay)
// ctx: {names, viewer (seat whose hand is drawn at the bottom, or null), showHands, active, handRow}
function board(view, game, ctx) {
  const root = el("div", "table-wrap " + game);
  const seats = el("div", "seats");
  const P = view.hand_sizes.length, hasViewer = ctx.viewer !== null && ctx.viewer !== undefined;
  for (let s = 0; s < P; s++) {
    if (s === ctx.viewer) continue;
    const box = el("div", "seat" + (s === ctx.active ? " active" : "") + (view.folded && view.folded[s] ? " folded" : ""));
    box.dataset.seat = s;
    const head = el("div", "seat-head");
    head.append(el("b", "", ctx.names[s]));
    if (s === view.dealer) head.append(el("span", "tag", "dealer"));
    if (game === "kungsholmskille" && s === view.forehand) head.append(el("span", "tag", "forehand"));
    const team = teamOf(view.teams, s);
    if (team && hasViewer && team.includes(ctx.viewer)) head.append(el("span", "tag partner", "partner"));
    else if (team && !hasViewer) head.append(el("span", "tag", `team ${team.join("+")}`));
    box.append(head);
    const hand = view.hands && ctx.showHands ? cardRow(game, view.hands[s], "small") : backs(view.hand_sizes[s], true);
    box.append(hand, seatFacts(view, game, s));
    seats.append(box);
  }
  root.append(seats);
  const centre = el("div", "centre");
  if (game === "krypkasino") {
    const t = el("div", "felt");
    t.append(el("div", "label", "Table" + (view.call ? ` — ${view.call}` : "")));
    const row = cardRow(game, view.table, "table-cards");
    row.id = ctx.idPrefix + "table";
    t.append(row);
    if (view.aside && view.aside.length) t.append(el("div", "small", `set aside: ${view.aside.join(" ")}`));
    centre.append(t);
  } else {
    const t = el("div", "felt");
    t.append(el("div", "label", `${view.phase} · pot ${view.pot} kr · talon ${view.talon}`));
    const tricks = el("div", "tricks");
    view.tricks.forEach((tr, k) => {
      const box = el("div", "trick");
      box.append(el("div", "small", `trick ${k + 1}` + (tr.winner !== null ? ` → seat ${tr.winner}` : "")));
      const row = el("div", "hand small");
      tr.cards.forEach((c, s) => {
        if (c === null) return;
        const w = el("div", "played");
        const ce = cardEl(game, c, tr.winner === s ? "won" : "");
        w.append(ce, el("div", "small", `seat ${s}`));
        row.append(w);
      });
      box.append(row);
      tricks.append(box);
    });
    if (!view.tricks.length) tricks.append(el("span", "small", "no trick played yet"));
    t.append(tricks);
    if (view.shown && view.shown.some((x) => x)) {
      t.append(el("div", "small", "shown: " + view.shown.map((x, s) => (x ? `seat ${s} ${x}` : "")).filter(Boolean).join(", ")));
    }
    centre.append(t);
  }
  root.append(centre);
  if (hasViewer) {
    const mine = el("div", "mine" + (ctx.viewer === ctx.active ? " active" : ""));
    const head = el("div", "seat-head");
    head.append(el("b", "", `${ctx.names[ctx.viewer]} (seat ${ctx.viewer})`));
    if (ctx.viewer === view.dealer) head.append(el("span", "tag", "dealer"));
    const team = teamOf(view.teams, ctx.viewer);
    if (team) head.append(el("span", "tag", `team ${team.join("+")}`));
    mine.append(head);
    const names = view.hand || (view.hands ? view.hands[ctx.viewer] : []);
    const row = cardRow(game, names, "my-hand");
    row.id = ctx.idPrefix + "hand";
    mine.append(row, seatFacts(view, game, ctx.viewer));
    root.append(mine);
  }
  return root;
}

// The team (a list of seats) holding seat s in a team game (K18), or null.
function teamOf(teams, s) { return teams ? teams.find((t) => t.includes(s)) || null : null; }

function teamNames(team, names) { return team.map((s) => names[s]).join(" + "); }

function seatFacts(view, game, s) {
  if (game === "krypkasino") {
    return el("div", "facts", `pile ${view.pile_sizes[s]} · score ${view.scores[s]} · tabbes ${view.tabbes[s]}`);
  }
  const bits = [`money ${view.money[s]} kr`];
  if (view.calls[s].length) bits.push(view.calls[s].join(", "));
  if (view.folded[s]) bits.push("folded");
  return el("div", "facts", bits.join(" · "));
}

// ---------------------------------------------------------------- play
const play = { id: null, seed: null, state: null, nEvents: 0, busy: false, sel: null, meta: null };

function speed() { return Number($("play-speed").value); }

async function loadMeta() {
  if (play.meta) return play.meta;
  play.meta = await api("GET", "/api/meta");
  $("f-game").replaceChildren(...Object.entries(play.meta.games).map(([name, g]) => new Option(g.title, name)));
  $("f-game").value = play.meta.default_game;
  setupGame();
  return play.meta;
}

function setupGame() {
  const g = $("f-game").value;
  $("f-players").value = play.meta.games[g].default_players;
  buildRules();
  updateRules();
  offerAgents(play.meta.games[g].default_opponent);
}

// The preset chosen in the rules (K22, L22): the option's default where the game has none or it does not fit the
// player count (read from the count, not the input's greying, which updateRules may not have refreshed yet).
function chosenPreset() {
  const o = ruleOptions().preset, input = $("f-preset");
  return o && input && o.players.includes(Number($("f-players").value)) ? input.value : (o && o.default) || "standard";
}

// The opponents the server offers for this game, player count and preset (/api/meta): a name and its line each.
// An offer's ``players`` and ``presets`` list what it plays (null: any).
function offerAgents(keep) {
  const m = play.meta.games[$("f-game").value], P = Number($("f-players").value), box = $("f-agents");
  const preset = chosenPreset();
  const fits = m.agents.filter((a) => (!a.players || a.players.includes(P)) && (!a.presets || a.presets.includes(preset)));
  box.replaceChildren(...fits.map((a) => {
    const o = new Option(`${a.spec} — ${a.summary}`, a.spec);
    o.title = a.summary;
    return o;
  }));
  const pick = [keep, m.default_opponent].find((spec) => fits.some((a) => a.spec === spec));
  box.value = pick || (fits.length ? fits[0].spec : "");
  describeAgent();
}

function describeAgent() {
  const m = play.meta.games[$("f-game").value], a = m.agents.find((x) => x.spec === $("f-agents").value);
  $("agents-help").textContent = a ? `${a.spec}: ${a.summary}` : "";
}

// The chosen game's rules options, as /api/meta describes them: {key: {rule, label, default, players, choices,
// labels}} (Krypkasino's K6, K8, K17, K18; none for a game without variants). ``choices`` is a list (a select, or a
// checkbox for [false, true]) or, for teams, the seatings per player count.
function ruleOptions() {
  const g = play.meta && play.meta.games[$("f-game").value];
  return (g && g.rules) || {};
}

function layoutText(layout) { return `${layout.length} teams: ${layout.map((t) => t.join("+")).join(" v ")}`; }

function buildRules() {
  const box = $("f-rules"), help = $("rules-help");
  box.querySelectorAll("label").forEach((l) => l.remove());
  $("rules-legend").textContent = `${play.meta.games[$("f-game").value].title} rules`;
  for (const [key, o] of Object.entries(ruleOptions())) {
    const label = el("label", "rule-opt"), name = el("span", "", o.label);
    name.append(el("span", "rule", o.rule));
    let input;
    if (Array.isArray(o.choices) && typeof o.choices[0] === "boolean") {
      input = el("input");
      input.type = "checkbox";
      input.checked = Boolean(o.default);
      label.classList.add("check");
      label.append(input, name);
    } else {
      input = el("select");
      if (Array.isArray(o.choices)) {
        input.append(...o.choices.map((c) => new Option(o.labels && o.labels[c] ? o.labels[c] : c, c)));
        input.value = o.default;
      }
      label.append(name, input);
    }
    input.id = `f-${key}`;
    input.dataset.rule = key;
    input.addEventListener("change", () => { updateRules(); offerAgents($("f-agents").value); });
    box.insertBefore(label, help);
  }
}

// Show the rules of a game that has options; offer what fits the player count (teams: its seatings), grey out the rest.
function updateRules() {
  const on = Object.keys(ruleOptions()).length > 0;
  $("f-rules").hidden = !on;
  if (!on) return;
  const P = Number($("f-players").value), seat = Number($("f-seat").value);
  const preset = chosenPreset();
  for (const [key, o] of Object.entries(ruleOptions())) {
    const input = $(`f-${key}`), label = input.closest("label");
    const forPlayers = o.players.includes(P), forPreset = !o.presets || o.presets.includes(preset);
    const fits = forPlayers && forPreset;
    if (!Array.isArray(o.choices)) {
      const keep = input.value, layouts = o.choices[String(P)] || [];
      input.replaceChildren(new Option(fits ? "none" : `none (${o.players.join(" or ")} players)`, ""),
        ...layouts.map((t) => new Option(layoutText(t), JSON.stringify(t))));
      input.value = [...input.options].some((x) => x.value === keep) ? keep : "";
    }
    input.disabled = !fits;
    label.classList.toggle("off", !fits);
    const why = forPlayers ? `only with the ${(o.presets || []).join(" or ")} deck` : `only with ${o.players.join(" or ")} players`;
    label.title = `${o.label} (${o.rule}): ${fits ? o.help || "" : why}`;
  }
  const teams = $("f-teams") && $("f-teams").value ? JSON.parse($("f-teams").value) : null;
  const mine = teamOf(teams, seat), partners = mine ? mine.filter((s) => s !== seat) : [];
  $("rules-help").textContent = partners.length
    ? `You play seat ${seat}; your partner${partners.length > 1 ? "s" : ""}: seat ${partners.join(" and seat ")}. ` +
      "Neighbours are opponents; a team scores the sum of its seats' scores, the lowest wins (K18)."
    : "Greyed-out options do not fit this many players or this deck. The lowest score wins.";
}

// The request's ``rules``: every option open to this player count (teams null for none).
function rulesBody() {
  const out = {};
  for (const [key, o] of Object.entries(ruleOptions())) {
    const input = $(`f-${key}`);
    if (input.disabled) continue;
    if (input.type === "checkbox") out[key] = input.checked;
    else if (!Array.isArray(o.choices)) out[key] = input.value ? JSON.parse(input.value) : null;
    else out[key] = input.value;
  }
  return out;
}

async function startGame(ev) {
  ev.preventDefault();
  showError("");
  const f = new FormData($("setup-form"));
  const body = { game: f.get("game"), players: Number(f.get("players")), seat: Number(f.get("seat")),
    agents: [String(f.get("agents"))], deals: Number(f.get("deals")) };
  if (f.get("seed") !== "") body.seed = Number(f.get("seed"));
  if (play.meta && Object.keys(ruleOptions()).length > 0) body.rules = rulesBody();
  $("play-speed").value = f.get("speed");
  $("start").disabled = true;
  try {
    const out = await api("POST", "/api/games", body);
    play.id = out.id;
    play.seed = out.seed;
    play.state = null;
    play.nEvents = 0;
    $("log").replaceChildren();
    location.hash = `#play/${out.id}`; // route() shows the table
    await receive(out.state);
  } catch (e) {
    showError(e.message);
  } finally {
    $("start").disabled = false;
  }
}

async function resumeGame(gid) {
  if (play.id === gid && play.state) return showSection("play");
  const out = await api("GET", `/api/games/${gid}`);
  play.id = gid;
  play.nEvents = 0;
  $("log").replaceChildren();
  showSection("play");
  await receive(out.state, true);
}

// Animate the new events (each carries the table as the person's seat saw it after it), then show the state;
// then follow the game live: the server sends every seat's move as it is made (a WebSocket, see below).
async function receive(state, instant) {
  await animate(state, instant);
  showProblems(state);
  if (!state.over || state.thinking) connectLive(play.id, state.n_events);
}

// ---------------------------------------------------------------- live play: one WebSocket to the server per game
// The server sends {type: "state", state} whenever the game changes (the events the page has not had yet) and
// {type: "error", status, error} for a move it refused; the page sends {type: "move", n, move_index}.
const live = { ws: null, gid: null, since: 0, chain: Promise.resolve(), retries: 0 };

function closeLive() {
  const ws = live.ws;
  live.ws = null;
  if (ws) ws.close(1000);
}

function connectLive(gid, since) {
  if (live.ws && live.gid === gid && live.ws.readyState <= WebSocket.OPEN) return;
  closeLive();
  if (live.gid !== gid) live.retries = 0;
  live.gid = gid;
  live.since = since;
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/api/games/${encodeURIComponent(gid)}/live?since=${since}`);
  live.ws = ws;
  ws.onopen = () => { live.retries = 0; };
  ws.onmessage = (m) => {
    let msg;
    try { msg = JSON.parse(m.data); } catch (e) { showError("the server sent a message that is not JSON"); return; }
    if (msg.type === "state") live.since = msg.state.n_events; // what a reconnection asks for
    live.chain = live.chain.then(() => onLive(gid, msg)).catch((e) => showError(e.message));
  };
  ws.onclose = (e) => {
    if (live.ws !== ws) return; // closed by the page
    live.ws = null;
    if (play.id !== gid || e.code === 1000) return; // another game, or the match is over
    if (live.retries < 5) {
      live.retries += 1;
      setTimeout(() => { if (play.id === gid && !live.ws) connectLive(gid, live.since); }, 500 * live.retries);
    } else {
      showError(`the connection to the server was lost (${e.code}${e.reason ? ": " + e.reason : ""}); reload the page`);
    }
  };
}

async function onLive(gid, msg) {
  if (play.id !== gid) return;
  if (msg.type === "state") {
    await animate(msg.state);
    showProblems(msg.state);
  } else if (msg.type === "error") {
    play.busy = false;
    showError(msg.error);
    drawPlay(play.state, play.state, play.state.to_act, null);
  }
}

function showProblems(state) {
  const problems = [state.agent_error, state.record_error].filter(Boolean);
  if (problems.length) showError(problems.join("; "));
}

async function animate(state, instant) {
  play.busy = true;
  play.sel = { card: null, table: new Set(), discard: new Set() };
  $("hint").hidden = true;
  try {
    for (const e of state.events) {
      logEvent(state, e);
      if (e.view && !instant && speed() > 0 && e.seat !== state.human && e.seat >= 0) {
        drawPlay(state, e.view, e.seat, `${e.text}${e.talk.length ? " — " + e.talk.join("; ") : ""}`);
        await sleep(speed());
      }
    }
  } finally {
    play.busy = false;
  }
  play.state = state;
  play.nEvents = state.n_events;
  drawPlay(state, state, state.to_act, null);
  document.body.dataset.events = String(state.n_events); // the page has drawn this many events (tests wait on it)
}

function logEvent(state, e) {
  const li = el("li", e.seat === state.human ? "me" : "");
  li.textContent = [e.text, ...e.talk].filter(Boolean).join(" — ");
  $("log").prepend(li);
}

// A game's name for people: the registry's title from /api/meta (a resumed game may not have read it yet).
function title(game) {
  return play.meta && play.meta.games[game] ? play.meta.games[game].title : game[0].toUpperCase() + game.slice(1);
}

function drawPlay(state, view, active, banner) {
  // Only on this game's route: a live update that arrives after the person went to the replays or to a new game's
  // setup draws the (hidden) table but never takes them back to it.
  if (location.hash === `#play/${play.id}`) showSection("play");
  const game = state.game;
  $("play-info").textContent = `${title(game)} · deal ${state.deal_no + 1}/${state.deals}` +
    (game === "krypkasino" ? ` · round ${view.round}/${view.rounds} · deck ${view.deck_left}` : "") +
    (state.teams ? ` · teams ${state.teams.map((t) => t.join("+")).join(" v ")}` : "") +
    (play.seed !== null ? ` · seed ${play.seed}` : "");
  const b = board(view, game, { names: state.names, viewer: state.human, showHands: false, active, idPrefix: "play-" });
  $("play-board").replaceChildren(b);
  const interactive = !banner && state.your_turn && !play.busy;
  const status = banner ? banner : state.over ? "The match is over." : state.your_turn ? "Your move." :
    `Waiting for seat ${state.to_act}…`;
  $("play-status").textContent = status;
  $("hint-btn").disabled = !interactive;
  drawMoves(state, interactive);
  drawEnd(state);
}

function legalOf(card) { return play.state.legal.filter((m) => m.card === card && (play.state.game === "krypkasino" || !m.capture.length)); }

function sameCards(a, b) { return a.length === b.length && [...a].sort().join() === [...b].sort().join(); }

function drawMoves(state, interactive) {
  const box = $("moves");
  box.replaceChildren();
  if (!interactive) return;
  const game = state.game, legal = state.legal, sel = play.sel;
  const hand = $("play-hand"), table = $("play-table");
  hand.querySelectorAll(".card").forEach((c) => {
    const name = c.dataset.card, i = Number(c.dataset.i);
    const playable = game === "krypkasino" ? legal.some((m) => m.card === name)
      : legal.some((m) => m.card === name) || legal.some((m) => m.capture.includes(name));
    c.classList.toggle("playable", playable);
    c.classList.toggle("disabled", !playable);
    c.setAttribute("aria-disabled", String(!playable));
    c.tabIndex = playable ? 0 : -1;
    if (sel.card === i || sel.discard.has(i)) c.classList.add("selected");
    c.onclick = () => playable && clickHand(i, name);
  });
  if (game === "krypkasino") {
    const card = sel.card === null ? null : hand.querySelector(`[data-i="${sel.card}"]`).dataset.card;
    const mine = card ? legal.filter((m) => m.card === card) : legal;
    if (table) {
      table.querySelectorAll(".card").forEach((c) => {
        const i = Number(c.dataset.i), can = card !== null && mine.some((m) => m.capture.includes(c.dataset.card));
        c.classList.toggle("playable", can);
        c.classList.toggle("disabled", !can);
        if (sel.table.has(i)) c.classList.add("selected");
        c.onclick = () => { if (!can) return; sel.table.has(i) ? sel.table.delete(i) : sel.table.add(i); drawMoves(state, true); };
      });
    }
    if (card) {
      const taken = [...sel.table].map((i) => table.querySelector(`[data-i="${i}"]`).dataset.card);
      const match = mine.find((m) => sameCards(m.capture, taken));
      const go = el("button", "primary", match ? `Play ${match.label}` : "Click the table cards it takes");
      go.id = "play-selected";
      go.disabled = !match;
      go.onclick = () => match && sendMove(match.n);
      box.append(go);
    }
    box.append(el("div", "small", card ? `Legal moves with ${card}:` : "Click a card in your hand, or pick a legal move:"));
  } else {
    const discards = legal.filter((m) => m.capture.length);
    if (discards.length) {
      const chosen = [...sel.discard].map((i) => hand.querySelector(`[data-i="${i}"]`).dataset.card);
      const match = discards.find((m) => sameCards(m.capture, chosen));
      const go = el("button", "primary", match ? `Exchange: ${match.label}` : "Select one or two cards to exchange");
      go.id = "play-selected";
      go.disabled = !match;
      go.onclick = () => match && sendMove(match.n);
      box.append(go);
    }
  }
  const list = el("div", "legal");
  list.id = "legal";
  const card = game === "krypkasino" && sel.card !== null ? hand.querySelector(`[data-i="${sel.card}"]`).dataset.card : null;
  for (const m of legal) {
    if (card && m.card !== card) continue;
    const btn = el("button", "move", m.label);
    btn.dataset.n = m.n;
    btn.dataset.key = m.key;
    btn.onclick = () => sendMove(m.n);
    list.append(btn);
  }
  box.append(list);
}

function clickHand(i, name) {
  const sel = play.sel, state = play.state;
  if (play.busy || !state.your_turn) return;
  if (state.game === "krypkasino") {
    sel.card = sel.card === i ? null : i;
    sel.table.clear();
    const mine = legalOf(name);
    if (sel.card !== null && mine.length === 1 && !mine[0].capture.length) return sendMove(mine[0].n); // a creep
  } else {
    const plays = state.legal.filter((m) => m.card === name);
    if (plays.length) return sendMove(plays[0].n);
    sel.discard.has(i) ? sel.discard.delete(i) : sel.discard.add(i);
  }
  drawMoves(state, true);
}

function sendMove(n) {
  if (play.busy) return;
  if (!live.ws || live.ws.readyState !== WebSocket.OPEN) {
    showError("not connected to the server; reconnecting…");
    connectLive(play.id, live.since);
    return;
  }
  play.busy = true; // until the server's answer: the state after the move, or why it was refused
  showError("");
  drawMoves(play.state, false);
  live.ws.send(JSON.stringify({ type: "move", n, move_index: play.state.move_index }));
}

async function askHint() {
  const btn = $("hint-btn");
  btn.disabled = true;
  try {
    const h = await api("POST", `/api/games/${play.id}/hint`, {});
    $("hint").textContent = h.text;
    $("hint").hidden = false;
    document.querySelectorAll("#legal .move").forEach((b) => b.classList.toggle("hinted", Number(b.dataset.n) === h.best.n));
  } catch (e) {
    showError(e.message);
  } finally {
    btn.disabled = !(play.state && play.state.your_turn);
  }
}

function drawEnd(state) {
  const end = $("end");
  end.hidden = !state.over;
  if (!state.over) return;
  const money = state.game === "kungsholmskille";
  end.replaceChildren(el("h2", "", "Game over"));
  const t = el("table", "scores");
  t.id = "end-seats";
  const head = el("tr");
  head.append(el("th", "", "seat"), ...state.results.map((_, k) => el("th", "", `deal ${k + 1}`)),
    el("th", "", money ? "net money (kr)" : "total score"));
  t.append(head);
  state.names.forEach((name, s) => {
    const tr = el("tr", s === state.human ? "me" : "");
    tr.append(el("td", "", name), ...state.results.map((r) => el("td", "", r[s])), el("td", "", state.totals[s]));
    t.append(tr);
  });
  end.append(t);
  if (!money) {
    // K18: a team's score is the sum of its seats' scores; without teams every seat is its own side. Lowest wins (K19).
    const sides = state.teams || state.names.map((_, s) => [s]);
    const totals = state.team_totals || state.totals, best = Math.min(...totals);
    if (state.teams) {
      const tt = el("table", "scores teams");
      tt.id = "end-teams";
      const th = el("tr");
      th.append(el("th", "", "team"), ...state.results.map((_, k) => el("th", "", `deal ${k + 1}`)), el("th", "", "team total"));
      tt.append(th);
      sides.forEach((team, k) => {
        const tr = el("tr", (team.includes(state.human) ? "me" : "") + (totals[k] === best ? " win" : ""));
        tr.dataset.team = team.join(",");
        const who = el("td", "", teamNames(team, state.names));
        if (totals[k] === best) who.append(el("span", "tag win", "winner"));
        tr.append(who, ...state.results.map((r) => el("td", "", team.reduce((a, s) => a + r[s], 0))),
          el("td", "", totals[k]));
        tt.append(tr);
      });
      end.append(tt);
    }
    const won = sides.filter((_, k) => totals[k] === best);
    const p = el("p", "winner", `Winner: ${won.map((team) => teamNames(team, state.names)).join(" and ")} (${best})`);
    p.id = "end-winner";
    end.append(p);
  }
  end.append(el("p", "small", money ? "Money won or lost, antes included (kronor)." :
    state.teams ? "A team's score is the sum of its seats' scores; the lowest wins." : "The lowest score wins."));
  const a = el("a", "button", "Watch the replay of this game");
  a.id = "replay-link";
  a.href = `#replay/game-${play.id}/0/0`;
  end.append(a);
}

// ---------------------------------------------------------------- replay
const rep = { rid: null, deals: [], deal: null, data: null, move: 0, timer: null };

async function listFiles() {
  if (INLINE) return;
  const out = await api("GET", "/api/replay");
  const sel = $("r-file"), keep = sel.value;
  sel.replaceChildren(new Option("choose a file…", ""), ...out.files.map((f) => new Option(`${f.name} (${f.deals} deals)`, f.id)));
  if (rep.rid && ![...sel.options].some((o) => o.value === rep.rid)) sel.append(new Option(rep.rid, rep.rid));
  sel.value = rep.rid || keep;
}

async function openFile(rid, deal, move) {
  let out;
  if (INLINE) out = { id: "inline", deals: INLINE.deals, errors: [] };
  else if (rid.startsWith("game-")) out = await api("GET", `/api/games/${rid.slice(5)}/replay`);
  else out = await api("GET", `/api/replay/${rid}`);
  rep.rid = out.id;
  rep.deals = out.deals;
  $("r-deal").replaceChildren(...out.deals.map((d) => new Option(`${d.index + 1}: ${d.game}, ${d.moves} moves — ${d.label}`, d.index)));
  $("r-errors").textContent = out.errors.length ? `${out.errors.length} record(s) skipped: ${out.errors.slice(0, 3).join("; ")}` : "";
  $("r-errors").hidden = !out.errors.length;
  await listFiles();
  await openDeal(Math.min(deal || 0, out.deals.length - 1), move || 0);
}

async function openDeal(k, move) {
  stopPlaying();
  rep.deal = k;
  $("r-deal").value = k;
  rep.data = INLINE ? INLINE.frames[k] : await api("GET", `/api/replay/${rep.rid}/${k}`);
  $("r-slider").max = rep.data.moves.length;
  $("r-summary").textContent = rep.data.summary || "";
  showMove(Math.max(0, Math.min(move || 0, rep.data.moves.length)));
}

function showMove(m) {
  const d = rep.data;
  if (!d) return;
  rep.move = Math.max(0, Math.min(m, d.moves.length));
  const f = d.frames[rep.move], done = rep.move - 1 >= 0 ? d.moves[rep.move - 1] : null;
  const names = Array.from({ length: d.players }, (_, s) => `seat ${s}`);
  const active = done ? done.seat : f.turn;
  $("replay-board").replaceChildren(board(f, d.game, { names, viewer: null, showHands: $("r-show").checked, active, idPrefix: "replay-" }));
  $("r-slider").value = rep.move;
  $("r-pos").textContent = `${rep.move} / ${d.moves.length}`;
  $("r-move").textContent = done ? `move ${rep.move}: seat ${done.seat} ${done.text}` + (done.talk.length ? ` — ${done.talk.join("; ")}` : "")
    : "start of the deal" + (f.turn >= 0 ? `; seat ${f.turn} to play` : "");
  if (done && done.card) {
    document.querySelectorAll(`#replay-board .seat[data-seat="${done.seat}"]`).forEach((s) => s.classList.add("active"));
  }
  drawProbs(done);
  if (rep.move === d.moves.length && d.final) $("r-move").textContent += ` · final ${d.game === "krypkasino" ? "scores" : "money"}: ${d.final.join(", ")}`;
  const hash = `#replay/${rep.rid}/${rep.deal}/${rep.move}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

// Where a record carries the acting agent's view of its legal moves (``policy``: [{label, p}] or ``values``), show it.
function drawProbs(move) {
  const box = $("r-probs"), rows = move && (move.policy || move.values);
  box.hidden = !rows;
  if (!rows) return;
  box.replaceChildren(el("div", "small", move.policy ? "the agent's probabilities:" : "the agent's values:"));
  for (const r of rows) {
    const line = el("div", "prob");
    const bar = el("span", "bar");
    bar.style.width = move.policy ? `${Math.round(100 * r.p)}%` : "0";
    line.append(bar, el("span", "", `${move.policy ? (100 * r.p).toFixed(1) + "%" : r.v} ${r.label}`));
    box.append(line);
  }
}

function stopPlaying() {
  clearInterval(rep.timer);
  rep.timer = null;
  $("r-play").textContent = "▶ play";
}

function togglePlaying() {
  if (rep.timer) return stopPlaying();
  if (!rep.data) return;
  if (rep.move >= rep.data.moves.length) showMove(0);
  $("r-play").textContent = "⏸ pause";
  rep.timer = setInterval(() => {
    if (rep.move >= rep.data.moves.length) return stopPlaying();
    showMove(rep.move + 1);
  }, Number($("r-speed").value));
}

async function uploadFile() {
  const file = $("r-upload").files[0];
  if (!file) return;
  showError("");
  try {
    const out = await api("POST", "/api/replay", { name: file.name, text: await file.text() });
    await openFile(out.id, 0, 0);
  } catch (e) {
    showError(e.message);
  }
}

// ---------------------------------------------------------------- routing
function showSection(name) {
  $("nav-play").href = play.id ? `#play/${play.id}` : "#play"; // back to the game in progress
  for (const s of ["setup", "play", "replay"]) $(s).hidden = s !== name;
  $("nav-play").classList.toggle("on", name !== "replay");
  $("nav-replay").classList.toggle("on", name === "replay");
}

async function route() {
  const parts = location.hash.replace(/^#/, "").split("/").filter(Boolean);
  showError("");
  try {
    if (INLINE || parts[0] === "replay") {
      showSection("replay");
      const [rid, deal, move] = INLINE ? ["inline", parts[2], parts[3]] : parts.slice(1);
      if (!rid) return await listFiles();
      if (rid === rep.rid && rep.data && Number(deal || 0) === rep.deal) return showMove(Number(move || 0));
      return await openFile(rid, Number(deal || 0), Number(move || 0));
    }
    stopPlaying();
    if (parts[0] === "play" && parts[1]) return await resumeGame(parts[1]);
    await loadMeta();
    showSection("setup");
  } catch (e) {
    showError(e.message);
  }
}

function init() {
  $("setup-form").addEventListener("submit", startGame);
  $("f-game").addEventListener("change", setupGame);
  $("f-players").addEventListener("input", () => { updateRules(); offerAgents($("f-agents").value); });
  $("f-agents").addEventListener("change", describeAgent);
  $("f-seat").addEventListener("input", updateRules);
  $("hint-btn").addEventListener("click", askHint);
  $("new-btn").addEventListener("click", () => { location.hash = "#play"; });
  $("r-file").addEventListener("change", (e) => e.target.value && openFile(e.target.value, 0, 0).catch((x) => showError(x.message)));
  $("r-upload").addEventListener("change", uploadFile);
  $("r-deal").addEventListener("change", (e) => openDeal(Number(e.target.value), 0).catch((x) => showError(x.message)));
  $("r-first").addEventListener("click", () => showMove(0));
  $("r-prev").addEventListener("click", () => showMove(rep.move - 1));
  $("r-next").addEventListener("click", () => showMove(rep.move + 1));
  $("r-last").addEventListener("click", () => rep.data && showMove(rep.data.moves.length));
  $("r-play").addEventListener("click", togglePlaying);
  $("r-slider").addEventListener("input", (e) => showMove(Number(e.target.value)));
  $("r-show").addEventListener("change", () => showMove(rep.move));
  $("r-speed").addEventListener("change", () => { if (rep.timer) { stopPlaying(); togglePlaying(); } });
  document.addEventListener("keydown", (e) => {
    if ($("replay").hidden || ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target.id !== "r-show") return;
    const keys = { ArrowLeft: () => showMove(rep.move - 1), ArrowRight: () => showMove(rep.move + 1),
      Home: () => showMove(0), End: () => rep.data && showMove(rep.data.moves.length), " ": togglePlaying };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  if (INLINE) {
    document.body.classList.add("inline");
    $("nav-play").hidden = true;
  }
  window.addEventListener("hashchange", route);
  route();
}

init();
