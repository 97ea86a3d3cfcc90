// Headset page: connects to the app's secure websocket (pairing code from the URL), enters an
// immersive session with hand tracking, streams both hands' 25 joints and the head pose every
// XR frame, and renders the simulation the app streams back. `?emulate=1` installs the iwer
// WebXR emulator (tests, desktop development).
import * as THREE from 'three';
import { SceneView } from './scene.js';
import { Presser, hudLines } from './hud.js';

const JOINTS = [
  'wrist', 'thumb-metacarpal', 'thumb-phalanx-proximal', 'thumb-phalanx-distal', 'thumb-tip',
  ...['index-finger', 'middle-finger', 'ring-finger', 'pinky-finger'].flatMap((f) => [
    `${f}-metacarpal`, `${f}-phalanx-proximal`, `${f}-phalanx-intermediate`, `${f}-phalanx-distal`, `${f}-tip`]),
];
const params = new URLSearchParams(location.search);
const code = params.get('code') || '';
const emulate = params.get('emulate') === '1';
const MAX_BUFFERED = 64 * 1024;     // skip a frame rather than queue stale hand data

const state = window.__teleop = {
  ws: 'idle', connects: 0, xr: 'none', mode: '', framesSent: 0, framesSkipped: 0, handsSeen: 0,
  scenes: 0, geoms: 0, posesApplied: 0, lastPosesSeq: -1, huds: 0, errors: [],
  presses: [], buttonHover: -1, tips: {},
};
const statusEl = document.getElementById('status');
const hudEl = document.getElementById('hud');
const enterBtn = document.getElementById('enter');
const takeoverBtn = document.getElementById('takeover');
const hooks = window.__teleopHooks = {};    // tests / benchmarks: onPoses(msg, now), onFrame(seq, now)

function report(text, isError = false) {
  statusEl.textContent = text;
  if (isError) state.errors = [...state.errors.slice(-49), text];   // the last 50 only
}

// `?render=fast` (the default with ?emulate=1): no MSAA, Lambert shading. Headless Chromium
// rasterises in software, where a full-quality frame of the robot took ~125 ms on a loaded
// 2-core machine and every robot-pose message waited behind it (docs/benchmarks.md).
const fastRender = (params.get('render') || (emulate ? 'fast' : 'full')) === 'fast';
const renderer = new THREE.WebGLRenderer({ antialias: !fastRender, alpha: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(innerWidth, innerHeight);
renderer.xr.enabled = true;
renderer.xr.setReferenceSpaceType('local-floor');
document.body.appendChild(renderer.domElement);
const view = new SceneView({ fast: fastRender });
addEventListener('resize', () => {
  view.camera.aspect = innerWidth / innerHeight;
  view.camera.updateProjectionMatrix();
  renderer.setSize(innerWidth, innerHeight);
});

// ---- connection: reconnects forever; the XR session and the scene survive a dropout ----------
// The page keeps its own truth about the link (``link``) and redraws the HUD the moment it
// changes: a HUD message from the app cannot say that the app is gone. A browser cannot read
// a refused websocket's HTTP status, so after a connection that never opened the page asks
// ``/pairing`` whether its code is wrong (rejected) or the app unreachable (lost).
let ws = null;
let seq = 0;
let emulator = null;      // iwer XRDevice in ?emulate=1 mode
let lastHud = null;       // the app's last HUD message
let lastMessageAt = 0;    // performance.now() of the last message from the app
let takeover = false;     // the next connection asks to replace the connected headset
let retryTimer = null;
let goodCodeFailures = 0; // connections refused although /pairing accepts the code
const SILENT_MS = 1000;   // the app sends at least every 250 ms (poses or keepalive)
const ABANDON_MS = 5000;  // a silent socket is dropped and a new one tried
const clientId = (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`).slice(0, 64);
const link = state.link = { state: 'connecting', detail: '', silentFor: 0 };

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function setLink(name, detail = '', silentFor = 0) {
  const changed = link.state !== name || link.detail !== detail || Math.abs(link.silentFor - silentFor) >= 0.1;
  Object.assign(link, { state: name, detail, silentFor });
  if (changed) redraw();
}

function redraw() {
  const lines = hudLines(lastHud, link);
  state.hudLines = lines;
  view.setHud(lines);
  statusEl.textContent = lines.banner ? lines.banner.text : `connected${state.xr === 'running' ? ' (in XR)' : ''}`;
  takeoverBtn.hidden = !['busy', 'taken_over'].includes(link.state);
  hudEl.innerHTML = '';
  const p = document.createElement('p');
  p.textContent = [lines.robot ? lines.robot.text : '', lines.instruction].filter(Boolean).join(' | ');
  if (lines.recording) { const r = document.createElement('span'); r.className = 'rec'; r.textContent = ' ● REC'; p.append(r); }
  const ul = document.createElement('ul');
  for (const s of lines.subtasks) { const li = document.createElement('li'); li.textContent = `${s.done ? '✔' : '○'} ${s.name}`; ul.append(li); }
  const mode = document.createElement('p');
  mode.textContent = lines.mode;
  const bar = document.createElement('div');     // the same buttons, clickable outside XR
  for (const b of lines.buttons) {
    const el = document.createElement('button');
    el.textContent = b.label;
    el.addEventListener('click', () => pressButton(b));
    bar.append(el);
  }
  hudEl.append(mode, p, ul, bar);
}

// ---- HUD buttons: a pinch on one sends its operator action (the app runs it like the key) ----
const pressers = { left: new Presser(), right: new Presser() };
const THUMB_TIP = JOINTS.indexOf('thumb-tip');
const INDEX_TIP = JOINTS.indexOf('index-finger-tip');

function pressButton(button) {
  send({ type: 'action', name: button.name, arg: button.arg ?? null });
  state.presses = [...state.presses.slice(-19), button.name];     // the last 20 (tests, debugging)
}

function tip(hand, j) {
  return hand.tracked[j] ? hand.joints.slice(j * 7, j * 7 + 3) : null;
}

// Every XR frame: each hand's pinch against the buttons shown; the hovered button is lit.
function pinchButtons(hands, now) {
  const { centres, items } = view.buttons;
  let hover = -1;
  for (const side of ['left', 'right']) {
    const hand = hands[side];
    const thumb = hand ? tip(hand, THUMB_TIP) : null, index = hand ? tip(hand, INDEX_TIP) : null;
    state.tips[side] = thumb && index ? [thumb, index] : null;
    const { hover: h, press } = pressers[side].update(thumb, index, centres, now);
    if (h >= 0) hover = h;
    if (press >= 0 && items[press]) pressButton(items[press].button);
  }
  state.buttonHover = hover;
  view.buttons.setHover(hover);
}

function scheduleConnect(delay) {
  clearTimeout(retryTimer);
  retryTimer = setTimeout(connect, delay);
}

function connect() {
  if (!code) { setLink('no_code'); return; }
  if (link.state === 'open' || link.state === 'silent') setLink('lost');
  state.ws = 'connecting';
  const url = `wss://${location.host}/ws?code=${encodeURIComponent(code)}&client=${encodeURIComponent(clientId)}`;
  const sock = new WebSocket(url + (takeover ? '&takeover=1' : ''));
  takeover = false;
  let opened = false;
  ws = sock;
  sock.onopen = () => {
    opened = true;
    state.ws = 'open';
    state.connects++;
    lastMessageAt = performance.now();
    send({ type: 'hello', v: 1, agent: navigator.userAgent });
  };
  sock.onmessage = (event) => {
    if (sock !== ws) return;
    lastMessageAt = performance.now();
    goodCodeFailures = 0;
    if (link.state !== 'open') setLink('open');     // admitted: the app talks to this page
    try { handle(JSON.parse(event.data)); } catch (err) { report(`bad message: ${err}`, true); }
  };
  sock.onclose = (event) => { if (sock === ws) closed(event, opened); };
}

async function closed(event, opened) {
  state.ws = 'closed';
  state.lastClose = { code: event.code, reason: event.reason };
  if (event.code === 4411) return;                  // replaced by this page's own newer socket
  if (event.code === 4409) { setLink('busy', event.reason); scheduleConnect(3000); return; }
  if (event.code === 4410) { setLink('taken_over', event.reason); scheduleConnect(3000); return; }
  if (event.code === 1001 && event.reason) { setLink('stopped', event.reason); scheduleConnect(1000); return; }
  if (opened) { setLink('lost'); scheduleConnect(500); return; }
  const verdict = await checkPairing();
  setLink(verdict);
  report(`connection failed: ${verdict}`, true);
  scheduleConnect(verdict === 'rejected' ? 3000 : 500);
}

async function checkPairing() {
  try {
    const answer = await fetch(`/pairing?code=${encodeURIComponent(code)}`, { cache: 'no-store' });
    if (answer.status === 403) return 'rejected';
    // The code is right and HTTPS works, yet the websocket fails: a browser that accepted the
    // certificate warning for the page but not for the socket (docs/headset.md, step 2).
    if (answer.ok) return ++goodCodeFailures >= 3 ? 'untrusted' : 'lost';
  } catch (err) { /* unreachable: the network or the app is down */ }
  return 'lost';
}

// Silence means a dead or frozen app (a half-open connection never closes by itself).
setInterval(() => {
  if (!ws || ws.readyState !== WebSocket.OPEN || !['open', 'silent'].includes(link.state)) return;
  const gap = performance.now() - lastMessageAt;
  if (gap > ABANDON_MS) {
    const dead = ws;
    ws = null;
    dead.onclose = dead.onmessage = null;
    dead.close();
    state.ws = 'closed';
    setLink('lost');
    scheduleConnect(0);
  } else if (gap > SILENT_MS) setLink('silent', '', Math.floor(gap / 100) / 10);
}, 100);

function takeOver() {
  takeover = true;
  scheduleConnect(0);
}

function handle(msg) {
  if (msg.type === 'scene') {
    state.geoms = view.setScene(msg);
    state.scenes++;
    send({ type: 'ack', what: 'scene', seq: state.scenes, count: state.geoms });
  } else if (msg.type === 'poses') {
    const applied = view.setPoses(msg);
    state.posesApplied++;
    state.lastPosesSeq = msg.seq;
    if (hooks.onPoses) hooks.onPoses(msg, performance.now());
    send({ type: 'ack', what: 'poses', seq: msg.seq, count: applied });
  } else if (msg.type === 'hud') {
    lastHud = msg;
    state.huds++;
    redraw();
    send({ type: 'ack', what: 'hud', seq: state.huds, count: msg.subtasks.length });
  }
  // 'alive': nothing to do; its arrival is the point.
}

// ---- streaming: every XR frame, both hands (25 joints) and the head -------------------------
const r5 = (v) => Math.round(v * 1e5) / 1e5;

function poseArray(transform) {
  const p = transform.position, o = transform.orientation;
  return [r5(p.x), r5(p.y), r5(p.z), r5(o.x), r5(o.y), r5(o.z), r5(o.w)];
}

function readHand(frame, hand, ref) {
  const joints = new Array(JOINTS.length * 7).fill(0);
  const tracked = new Array(JOINTS.length).fill(false);
  const emulated = new Array(JOINTS.length).fill(false);
  JOINTS.forEach((name, j) => {
    const space = hand.get(name);
    const pose = space ? frame.getJointPose(space, ref) : null;
    if (pose) {
      poseArray(pose.transform).forEach((v, k) => { joints[j * 7 + k] = v; });
      tracked[j] = true;
      emulated[j] = Boolean(pose.emulatedPosition);
    } else {
      joints[j * 7 + 6] = 1;      // identity quaternion placeholder, flagged untracked
    }
  });
  return { joints, tracked, emulated };
}

function streamFrame(frame) {
  const ref = renderer.xr.getReferenceSpace();
  const hands = {};
  for (const source of frame.session.inputSources) {
    if (source.hand && (source.handedness === 'left' || source.handedness === 'right')) {
      hands[source.handedness] = readHand(frame, source.hand, ref);
    }
  }
  if (Object.keys(hands).length) state.handsSeen++;
  pinchButtons(hands, performance.now());
  const viewer = frame.getViewerPose(ref);
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  if (ws.bufferedAmount > MAX_BUFFERED) { state.framesSkipped++; return; }
  if (hooks.onFrame) hooks.onFrame(seq, performance.now());
  send({
    type: 'frame', v: 1, seq: seq++, t: (frame.predictedDisplayTime || performance.now()) / 1000,
    head: viewer ? poseArray(viewer.transform) : null, hands, engage: false,
  });
  state.framesSent++;
}

// ---- XR session ------------------------------------------------------------------------------
async function requestSession() {
  const xr = navigator.xr;
  const mode = (await xr.isSessionSupported('immersive-ar')) ? 'immersive-ar' : 'immersive-vr';
  const optionalFeatures = ['local-floor'];
  try {
    return [mode, await xr.requestSession(mode, { requiredFeatures: ['hand-tracking'], optionalFeatures })];
  } catch (err) {
    report(`hand tracking unavailable (${err.message}); trying without`, true);
    return [mode, await xr.requestSession(mode, { optionalFeatures: ['hand-tracking', ...optionalFeatures] })];
  }
}

async function enterXR() {
  if (!navigator.xr) { report('WebXR is not available in this browser', true); return; }
  try {
    state.xr = 'starting';
    const [mode, session] = await requestSession();
    state.mode = mode;
    session.addEventListener('end', () => { state.xr = 'ended'; enterBtn.disabled = false; });
    let space = 'local-floor';
    try {
      await renderer.xr.setSession(session);
    } catch (err) {
      // No floor-level space on this headset: fall back to 'local' (origin at the starting head
      // pose); the server keeps using the head pose the page streams, so this stays consistent.
      report(`local-floor unavailable (${err.message}); using local`, true);
      space = 'local';
      renderer.xr.setReferenceSpaceType(space);
      await renderer.xr.setSession(session);
    }
    state.space = space;
    state.xr = 'running';
    enterBtn.disabled = true;
    report(`in ${mode}${state.ws === 'open' ? ', connected' : ''}`);
  } catch (err) {
    state.xr = 'failed';
    report(`could not start XR: ${err.message}`, true);
  }
}

renderer.setAnimationLoop((time, frame) => {
  if (frame) {
    if (emulator) animateEmulatedHands(time / 1000);
    streamFrame(frame);
  }
  renderer.render(view.scene, view.camera);
});

// ---- emulation (tests / desktop): iwer, served from node_modules ----------------------------

// ``motion``: 'wave' (both hands sway and pinch, the default) or 'hold' (hands at ``hands``
// [x, y, z] in XR coordinates, pinched by ``pinch``: 0 open .. 1 closed): a benchmark steps
// ``hands`` and times the robot; a test pinches a HUD button.
const emulation = window.__teleopEmulation = {
  motion: 'wave', hands: { left: [-0.18, 1.1, -0.35], right: [0.18, 1.1, -0.35] }, pinch: { left: 0, right: 0 },
};

function animateEmulatedHands(t) {
  for (const [side, sign] of [['left', -1], ['right', 1]]) {
    const hand = emulator.hands[side];
    if (!hand) continue;
    if (emulation.motion === 'hold') {
      hand.position.set(...emulation.hands[side]);
      hand.updatePinchValue(emulation.pinch[side]);
    } else {
      hand.position.set(sign * 0.18 + 0.05 * Math.sin(t), 1.1 + 0.04 * Math.sin(2 * t), -0.35);
      hand.updatePinchValue(0.5 - 0.5 * Math.cos(t * 2));
    }
  }
}

async function main() {
  if (emulate) {
    const { XRDevice, metaQuest3 } = await import('/vendor/iwer/iwer.module.js');
    emulator = new XRDevice(metaQuest3);
    emulator.primaryInputMode = 'hand';
    emulator.installRuntime({ forceInstall: true });   // Chromium has its own navigator.xr
    state.emulated = true;
  }
  enterBtn.disabled = false;
  enterBtn.addEventListener('click', enterXR);
  takeoverBtn.addEventListener('click', takeOver);
  redraw();
  connect();
  if (emulate) enterXR();     // the emulator needs no user gesture
}

// The camera the operator sees through: the XR view's while presenting (left eye).
function viewCamera() {
  return renderer.xr.isPresenting ? renderer.xr.getCamera().cameras[0] : view.camera;
}

window.__teleopEnterXR = enterXR;
window.__teleopTakeOver = takeOver;
window.__teleopView = view;     // inspection hooks (tests, debugging)
window.__teleopProbe = {
  emulator: () => emulator,
  project: (pointWorld) => view.project(viewCamera(), pointWorld),
  hudCorners: () => view.hudCorners(viewCamera()),
  buttons: () => view.buttons.items.map((item, i) => ({ ...item.button, centre: view.buttons.centres[i] })),
};
main().catch((err) => report(`startup failed: ${err.message}`, true));
