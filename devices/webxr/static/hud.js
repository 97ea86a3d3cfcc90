// What the HUD says, from the app's last HUD message and the page's own view of the connection.
// Pure (no DOM, no three.js): the in-XR panel, the alert badge and the 2D page all draw this,
// and the tests read it. The page, not the app, decides the connection lines: when the app is
// gone nobody else can say so, and robot state from a dead connection is "unknown", never the
// last thing the app said.

// link.state -> [level, text]; levels: ok, info, warn, error.
const LINK = {
  connecting: ['info', 'Connecting to the app…'],
  silent: ['error', 'No data from the app for {s} s: robot state unknown'],
  lost: ['error', 'Disconnected from the app: reconnecting…'],
  stopped: ['error', 'Disconnected: {detail}'],
  rejected: ['error', 'Pairing code rejected: the app has a different code now. Scan the QR code the app shows.'],
  busy: ['error', 'Another headset is connected to the app. Use "Take over" on this page to replace it.'],
  taken_over: ['error', 'Another headset took over the connection to the app.'],
  no_code: ['error', 'No pairing code in the page address: scan the QR code the app shows.'],
  untrusted: ['error', 'The page loads but its secure connection is refused: install the app\'s certificate (see the headset guide, step 2).'],
};

const ENGAGE = {
  disengaged: ['info', 'Not engaged: pinch and hold to engage'],
  arming: ['info', 'Engaging: keep pinching'],
  easing: ['ok', 'Engaging: the robot is moving to your hands'],
  engaged: ['ok', 'Engaged: the robot follows your hands'],
  hold: ['warn', 'HOLDING: {reason}'],
};

function fill(text, values) {
  return text.replace(/\{(\w+)\}/g, (_, k) => String(values[k] ?? ''));
}

// hud: the last HUD message (or null); link: {state, detail, silentFor (s)}.
export function hudLines(hud, link) {
  const connected = link.state === 'open';
  const out = { banner: null, robot: null, recording: false, instruction: '', subtasks: [], stale: !connected,
                alert: null, mode: '', buttons: [] };
  if (!connected) {
    const [level, text] = LINK[link.state] || ['error', `connection: ${link.state}`];
    out.banner = { level, text: fill(text, { s: (link.silentFor || 0).toFixed(1), detail: link.detail || 'the app closed the connection' }) };
  }
  if (hud) {
    out.instruction = hud.instruction || '';
    out.subtasks = hud.subtasks || [];
    if (hud.ended) {
      // An ended episode stays ended after the app closes the connection: that close is expected.
      out.robot = { level: 'warn', text: `EPISODE ENDED${hud.result ? `: ${hud.result}` : ''}` };
    } else if (connected) {
      const [level, text] = ENGAGE[hud.engage] || ['info', hud.status || ''];
      out.robot = { level, text: fill(text, { reason: hud.reason || 'tracking lost' }) };
      out.recording = Boolean(hud.recording);
      out.mode = modeLine(hud);
      // Buttons only over a live link: a press on a dead one would be lost without a word.
      out.buttons = hud.buttons || [];
    } else {
      out.robot = { level: 'warn', text: 'Robot state unknown' };
    }
  }
  // The one line a wearer must see wherever they look (the badge): a connection problem, else a hold.
  if (out.banner && out.banner.level === 'error') out.alert = out.banner.text;
  else if (out.robot && out.robot.level === 'warn') out.alert = out.robot.text;
  return out;
}

// "RECORDING · 12 s · 48 s left · accepted 3/100": the window's banner, for the wearer.
export function modeLine(hud) {
  if (!hud || !hud.mode) return '';
  const parts = [hud.mode];
  if (hud.mode === 'RECORDING' || hud.mode === 'REVIEW') {
    parts.push(`${Math.round(hud.elapsed_s || 0)} s`);
    if (hud.remaining_s !== null && hud.remaining_s !== undefined) parts.push(`${Math.round(hud.remaining_s)} s left`);
  }
  if (hud.target) parts.push(`accepted ${hud.accepted}/${hud.target}`);
  return parts.join(' · ');
}

// ---- HUD buttons: where they are and how a pinch presses one --------------------------------
// World-locked in the headset's floor space (XR: x right, y up, -z forward), not the robot's
// world: they must be within reach of the operator's own right hand, beside and above the work
// (hands work at table height, ~0.8-1.0 m; the table spans about +-0.55 m across), so that a
// grasp on the table never lands on a button.
export const BUTTON_SIZE = [0.13, 0.06];         // m: larger than a fingertip's tracking jitter
export const BUTTON_GRID = { origin: [0.42, 1.42, -0.32], columns: 2, pitch: [0.15, 0.075] };
export const PINCH_CLOSE_M = 0.015;               // thumb and index tips this close: a pinch
export const PINCH_OPEN_M = 0.035;                // ... and open again only beyond this (hysteresis:
                                                  //     jitter around one threshold is not two pinches)
export const BUTTON_MARGIN_M = 0.015;             // a pinch this far outside a button's edge still hits it
export const BUTTON_DEPTH_M = 0.06;               // ... and this far in front of / behind its plane
export const PRESS_COOLDOWN_MS = 600;             // after a press, no other (a tracking flicker that
                                                  //     re-closes the pinch is not a second press)

// Centres [x, y, z] (XR) of ``n`` buttons: rows of ``columns``, top to bottom.
export function buttonLayout(n) {
  const { origin: [x0, y0, z0], columns, pitch: [dx, dy] } = BUTTON_GRID;
  return Array.from({ length: n }, (_, i) => [x0 + (i % columns) * dx, y0 - Math.floor(i / columns) * dy, z0]);
}

// The button (index) under point ``p`` [x, y, z], or -1; buttons face the operator (+z).
export function hitButton(centres, p) {
  const [hw, hh] = [BUTTON_SIZE[0] / 2 + BUTTON_MARGIN_M, BUTTON_SIZE[1] / 2 + BUTTON_MARGIN_M];
  return centres.findIndex(([x, y, z]) =>
    Math.abs(p[0] - x) <= hw && Math.abs(p[1] - y) <= hh && Math.abs(p[2] - z) <= BUTTON_DEPTH_M);
}

const midpoint = (a, b) => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2];
const distance = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

// One hand's pinch: ``update(thumbTip, indexTip, centres, nowMs)`` -> {hover, press} (indices,
// -1 for none). A press is the moment a pinch closes on a button; holding, sliding onto another
// button or closing again within the cooldown presses nothing (one pinch = one press).
export class Presser {
  constructor() { this.closed = false; this.lastPress = -Infinity; }

  update(thumbTip, indexTip, centres, nowMs) {
    if (!thumbTip || !indexTip) { this.closed = false; return { hover: -1, press: -1 }; }
    const gap = distance(thumbTip, indexTip);
    const hover = hitButton(centres, midpoint(thumbTip, indexTip));
    let press = -1;
    if (!this.closed && gap < PINCH_CLOSE_M) {
      this.closed = true;
      if (hover >= 0 && nowMs - this.lastPress >= PRESS_COOLDOWN_MS) { press = hover; this.lastPress = nowMs; }
    } else if (this.closed && gap > PINCH_OPEN_M) this.closed = false;
    return { hover, press };
  }
}
