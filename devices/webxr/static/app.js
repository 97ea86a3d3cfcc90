// Headset page: connects to the app's secure websocket (pairing code from the URL), enters an
// immersive session with hand tracking, streams both hands' 25 joints and the head pose every
// XR frame, and renders the simulation the app streams back. `?emulate=1` installs the iwer
// WebXR emulator (tests, desktop development).
import * as THREE from 'three';
import { SceneView } from './scene.js';

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
};
const statusEl = document.getElementById('status');
const hudEl = document.getElementById('hud');
const enterBtn = document.getElementById('enter');

function report(text, isError = false) {
  statusEl.textContent = text;
  if (isError) state.errors = [...state.errors.slice(-49), text];   // the last 50 only
}

const renderer = new THREE.WebGLRenderer({ antialias: true, alpha: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(innerWidth, innerHeight);
renderer.xr.enabled = true;
renderer.xr.setReferenceSpaceType('local-floor');
document.body.appendChild(renderer.domElement);
const view = new SceneView();
addEventListener('resize', () => {
  view.camera.aspect = innerWidth / innerHeight;
  view.camera.updateProjectionMatrix();
  renderer.setSize(innerWidth, innerHeight);
});

// ---- connection: reconnects forever; the XR session and the scene survive a dropout ----------
let ws = null;
let seq = 0;
let emulator = null;      // iwer XRDevice in ?emulate=1 mode

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function connect() {
  state.ws = 'connecting';
  ws = new WebSocket(`wss://${location.host}/ws?code=${encodeURIComponent(code)}`);
  ws.onopen = () => {
    state.ws = 'open';
    state.connects++;
    report(`connected${state.xr === 'running' ? ' (in XR)' : ''}`);
    send({ type: 'hello', v: 1, agent: navigator.userAgent });
  };
  ws.onmessage = (event) => {
    try { handle(JSON.parse(event.data)); } catch (err) { report(`bad message: ${err}`, true); }
  };
  ws.onclose = () => {
    state.ws = 'closed';
    report(code ? 'disconnected, reconnecting…' : 'no pairing code in the URL (scan the QR code)', true);
    setTimeout(connect, code ? 500 : 3000);
  };
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
    send({ type: 'ack', what: 'poses', seq: msg.seq, count: applied });
  } else if (msg.type === 'hud') {
    view.setHud(msg, state.ws);
    state.huds++;
    hudEl.innerHTML = '';
    const p = document.createElement('p');
    p.textContent = msg.instruction;
    if (msg.recording) { const r = document.createElement('span'); r.className = 'rec'; r.textContent = ' ● REC'; p.append(r); }
    const ul = document.createElement('ul');
    for (const s of msg.subtasks) { const li = document.createElement('li'); li.textContent = `${s.done ? '✔' : '○'} ${s.name}`; ul.append(li); }
    hudEl.append(p, ul);
    send({ type: 'ack', what: 'hud', seq: state.huds, count: msg.subtasks.length });
  }
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
  const viewer = frame.getViewerPose(ref);
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  if (ws.bufferedAmount > MAX_BUFFERED) { state.framesSkipped++; return; }
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

function animateEmulatedHands(t) {
  for (const [side, sign] of [['left', -1], ['right', 1]]) {
    const hand = emulator.hands[side];
    if (!hand) continue;
    hand.position.set(sign * 0.18 + 0.05 * Math.sin(t), 1.1 + 0.04 * Math.sin(2 * t), -0.35);
    hand.updatePinchValue(0.5 - 0.5 * Math.cos(t * 2));
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
  connect();
  if (emulate) enterXR();     // the emulator needs no user gesture
  report(code ? 'connecting…' : 'no pairing code in the URL (scan the QR code)');
}

window.__teleopEnterXR = enterXR;
window.__teleopView = view;     // inspection hook (tests, debugging)
main().catch((err) => report(`startup failed: ${err.message}`, true));
