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
                alert: null };
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
    } else {
      out.robot = { level: 'warn', text: 'Robot state unknown' };
    }
  }
  // The one line a wearer must see wherever they look (the badge): a connection problem, else a hold.
  if (out.banner && out.banner.level === 'error') out.alert = out.banner.text;
  else if (out.robot && out.robot.level === 'warn') out.alert = out.robot.text;
  return out;
}
