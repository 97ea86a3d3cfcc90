// The simulated scene as the headset sees it: primitive geoms grouped by body, body poses
// streamed per tick, and the HUD (world-locked above the table's far edge, plus a head-locked
// alert badge). World frame z-up -> operator -> WebXR y-up.
import * as THREE from 'three';
import { BUTTON_SIZE, buttonLayout } from './hud.js';

// operator (x forward, y left, z up) -> WebXR (x right, y up, -z forward); row-major.
const OP_TO_XR = new THREE.Matrix4().set(0, -1, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0, 0, 0, 0, 1);

function makeGeometry(type, [a, b, c]) {
  switch (type) {
    case 'box': return new THREE.BoxGeometry(2 * a, 2 * b, 2 * c);
    case 'sphere': return new THREE.SphereGeometry(a, 20, 14);
    case 'ellipsoid': return new THREE.SphereGeometry(1, 20, 14).scale(a, b, c);
    // three.js capsules / cylinders run along y, MuJoCo's along z.
    case 'capsule': return new THREE.CapsuleGeometry(a, 2 * b, 6, 16).rotateX(Math.PI / 2);
    case 'cylinder': return new THREE.CylinderGeometry(a, a, 2 * b, 20).rotateX(Math.PI / 2);
    case 'plane': return new THREE.PlaneGeometry(a > 0 ? 2 * a : 10, b > 0 ? 2 * b : 10);
    default: return null;
  }
}

// ``fast``: Lambert shading instead of physically based (a fraction of the per-pixel cost): for a
// software-rendered emulator, where the render loop otherwise delays every message (bench headset).
function makeMesh(g, fast) {
  const geometry = makeGeometry(g.type, g.size);
  if (!geometry) return null;
  const [r, gr, b, alpha] = g.rgba;
  const common = { color: new THREE.Color(r, gr, b), transparent: alpha < 1, opacity: alpha,
                   side: g.type === 'plane' ? THREE.DoubleSide : THREE.FrontSide };
  const material = fast ? new THREE.MeshLambertMaterial(common)
    : new THREE.MeshStandardMaterial({ ...common, roughness: 0.75, metalness: 0.05 });
  const mesh = new THREE.Mesh(geometry, material);
  mesh.position.set(g.pos[0], g.pos[1], g.pos[2]);
  mesh.quaternion.set(g.quat[1], g.quat[2], g.quat[3], g.quat[0]);
  mesh.name = g.name;
  return mesh;
}

const COLOURS = { ok: '#6fdc8c', info: '#c8ccd2', warn: '#ffb74d', error: '#ff6b6b' };
const MODE_COLOURS = { LIVE: '#6fdc8c', RECORDING: '#ff5252', REVIEW: '#64b5f6' };   // as ui/overlay.py
const HUD_SIZE = [0.7, 0.35];               // m, 1024 x 512 canvas; about 35 x 18 degrees seen from 1.1 m
const HUD_DEFAULT_ANCHOR = [1.0, 0, 1.0];   // world frame, when the app sends none
const OPERATOR_HEAD_XR = new THREE.Vector3(0, 1.55, 0);   // where the HUD faces (local-floor origin)
// The badge: head-locked, small, shown only for an alert, in the left periphery (24-38 degrees
// off the view's centre): wherever the operator looks on the table, never over its middle
// (the table's middle half spans about +-17 degrees seen from where the operator stands).
const BADGE_SIZE = [0.22, 0.08];
const BADGE_POS = [-0.38, 0.08, -0.6];

function panel(width, height, canvasW, canvasH) {
  const canvas = document.createElement('canvas');
  canvas.width = canvasW; canvas.height = canvasH;
  const texture = new THREE.CanvasTexture(canvas);
  const material = new THREE.MeshBasicMaterial({ map: texture, transparent: true, depthTest: false });
  const mesh = new THREE.Mesh(new THREE.PlaneGeometry(width, height), material);
  mesh.renderOrder = 10;
  return { canvas, texture, mesh };
}

// The HUD: a world-locked panel above the table's far edge (never over the work) and a small
// head-locked alert badge. ``draw(lines)`` takes ``hud.js``'s hudLines().
class Hud {
  constructor(scene, camera) {
    Object.assign(this, panel(HUD_SIZE[0], HUD_SIZE[1], 1024, 512));
    scene.add(this.mesh);
    this.badge = panel(BADGE_SIZE[0], BADGE_SIZE[1], 1024, 372);
    this.badge.mesh.position.set(...BADGE_POS);
    this.badge.mesh.rotation.y = Math.atan2(-BADGE_POS[0], -BADGE_POS[2]);   // turned to face the eye
    this.badge.mesh.visible = false;
    camera.add(this.badge.mesh);
    this.lines = null;
  }

  // ``anchorXR``: the panel's bottom edge centre in XR coordinates; it faces the operator's head.
  place(anchorXR) {
    this.mesh.position.copy(anchorXR).add(new THREE.Vector3(0, HUD_SIZE[1] / 2, 0));
    this.mesh.lookAt(OPERATOR_HEAD_XR);
    this.mesh.updateMatrixWorld(true);
  }

  draw(lines) {
    this.lines = lines;
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, 1024, 512);
    ctx.fillStyle = 'rgba(18, 20, 24, 0.78)';
    ctx.fillRect(0, 0, 1024, 512);
    let y = 60;
    if (lines.mode) {        // LIVE / RECORDING / REVIEW, times, count: the window's banner
      ctx.fillStyle = MODE_COLOURS[lines.mode.split(' ')[0]] || COLOURS.info;
      ctx.font = 'bold 40px sans-serif';
      y = wrap(ctx, lines.mode, 30, y, 860, 46, 1) + 56;
    }
    if (lines.banner) {
      ctx.fillStyle = COLOURS[lines.banner.level];
      ctx.font = 'bold 46px sans-serif';
      y = wrap(ctx, lines.banner.text, 30, y, 960, 52, 3) + 60;
    }
    if (lines.robot) {
      ctx.fillStyle = COLOURS[lines.robot.level];
      ctx.font = 'bold 46px sans-serif';
      y = wrap(ctx, lines.robot.text, 30, y, 860, 52, 2) + 60;
    }
    if (lines.recording) {
      ctx.fillStyle = '#ff4040';
      ctx.beginPath(); ctx.arc(950, 40, 16, 0, 2 * Math.PI); ctx.fill();
      ctx.font = 'bold 26px sans-serif';
      ctx.fillText('REC', 900, 88);
    }
    ctx.globalAlpha = lines.stale ? 0.5 : 1;     // last known, from a connection that is gone
    ctx.fillStyle = '#ffffff';
    ctx.font = '42px sans-serif';
    y = wrap(ctx, lines.instruction + (lines.stale && lines.instruction ? ' (last known)' : ''), 30, y, 960, 48, 2) + 54;
    ctx.font = '36px sans-serif';
    for (const s of lines.subtasks.slice(0, Math.max(0, Math.floor((540 - y) / 44)))) {
      ctx.fillStyle = s.done ? '#6fdc8c' : '#c8ccd2';
      ctx.fillText(`${s.done ? '✔' : '○'} ${s.name}`, 30, y);
      y += 44;
    }
    ctx.globalAlpha = 1;
    this.texture.needsUpdate = true;
    this.drawBadge(lines.alert, lines.banner ? lines.banner.level : 'warn');
  }

  drawBadge(text, level) {
    this.badge.mesh.visible = Boolean(text);
    if (!text) return;
    const ctx = this.badge.canvas.getContext('2d');
    ctx.clearRect(0, 0, 1024, 372);
    ctx.fillStyle = 'rgba(18, 20, 24, 0.85)';
    ctx.fillRect(0, 0, 1024, 372);
    ctx.fillStyle = COLOURS[level] || COLOURS.warn;
    ctx.font = 'bold 64px sans-serif';
    wrap(ctx, text, 28, 84, 968, 76, 4);
    this.badge.texture.needsUpdate = true;
  }
}

// The HUD buttons (hud.js places them and hit-tests pinches): labelled panels, the hovered one lit.
class Buttons {
  constructor(scene) {
    this.group = new THREE.Group();
    scene.add(this.group);
    this.items = [];
    this.centres = [];
    this.key = '';
    this.hover = -1;
  }

  // ``buttons``: [{label, name, arg}] that apply now; rebuilt only when they change.
  set(buttons) {
    const key = JSON.stringify(buttons);
    if (key === this.key) return;
    this.key = key;
    for (const item of this.items) { item.mesh.geometry.dispose(); item.mesh.material.dispose(); item.texture.dispose(); }
    this.group.clear();
    this.centres = buttonLayout(buttons.length);
    this.items = buttons.map((b, i) => {
      const item = { ...panel(BUTTON_SIZE[0], BUTTON_SIZE[1], 256, 118), button: b };
      item.mesh.position.set(...this.centres[i]);
      this.group.add(item.mesh);
      return item;
    });
    this.hover = -1;
    this.items.forEach((_, i) => this.drawButton(i));
  }

  setHover(index) {
    if (index === this.hover) return;
    const before = this.hover;
    this.hover = index;
    if (before >= 0 && before < this.items.length) this.drawButton(before);
    if (index >= 0) this.drawButton(index);
  }

  drawButton(i) {
    const { canvas, texture, button } = this.items[i];
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, 256, 118);
    ctx.fillStyle = i === this.hover ? 'rgba(58, 122, 254, 0.95)' : 'rgba(18, 20, 24, 0.85)';
    ctx.fillRect(0, 0, 256, 118);
    ctx.strokeStyle = '#c8ccd2';
    ctx.lineWidth = 4;
    ctx.strokeRect(2, 2, 252, 114);
    ctx.fillStyle = '#ffffff';
    ctx.font = 'bold 34px sans-serif';
    ctx.textAlign = 'center';
    wrap(ctx, button.label, 128, 52, 236, 36, 2);
    ctx.textAlign = 'start';
    texture.needsUpdate = true;
  }
}

// Word-wraps ``text`` into at most ``maxLines`` lines; returns the baseline of the last one.
function wrap(ctx, text, x, y, width, lineHeight, maxLines) {
  let line = '', lines = 0;
  for (const word of text.split(/\s+/)) {
    const test = line ? `${line} ${word}` : word;
    if (ctx.measureText(test).width > width && line) {
      ctx.fillText(line, x, y + lines * lineHeight);
      line = word;
      if (++lines >= maxLines) return y + (lines - 1) * lineHeight;
    } else line = test;
  }
  if (line) ctx.fillText(line, x, y + lines * lineHeight);
  return y + lines * lineHeight;
}

export class SceneView {
  constructor({ fast = false } = {}) {
    this.fast = fast;
    this.scene = new THREE.Scene();
    this.camera = new THREE.PerspectiveCamera(70, innerWidth / innerHeight, 0.01, 50);
    this.camera.position.set(0, 1.6, 0.4);
    this.scene.add(this.camera);
    this.scene.add(new THREE.HemisphereLight(0xffffff, 0x444444, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.4);
    sun.position.set(1, 3, 2);
    this.scene.add(sun);
    this.world = new THREE.Group();
    this.world.matrixAutoUpdate = false;
    this.world.matrix.copy(OP_TO_XR);         // until a scene says otherwise (world_to_operator 0)
    this.scene.add(this.world);
    this.bodies = new Map();
    this.hud = new Hud(this.scene, this.camera);
    this.buttons = new Buttons(this.scene);
    this.placeHud(HUD_DEFAULT_ANCHOR);
  }

  // The HUD's anchor is in the simulation's world frame: through the same map as the bodies.
  placeHud(anchorWorld) {
    this.hud.place(new THREE.Vector3(...anchorWorld).applyMatrix4(this.world.matrix));
  }

  // Rebuilds the scene; returns the number of geoms built.
  setScene(msg) {
    for (const body of this.bodies.values()) {
      body.traverse((o) => { if (o.isMesh) { o.geometry.dispose(); o.material.dispose(); } });
      this.world.remove(body);
    }
    this.bodies.clear();
    const [dx, dy, dz] = msg.world_to_operator || [0, 0, 0];
    this.world.matrix.copy(OP_TO_XR).multiply(new THREE.Matrix4().makeTranslation(dx, dy, dz));
    this.world.matrixWorldNeedsUpdate = true;
    this.placeHud(msg.hud_anchor || HUD_DEFAULT_ANCHOR);
    let built = 0;
    for (const g of msg.geoms) {
      const mesh = makeMesh(g, this.fast);
      if (!mesh) continue;
      let body = this.bodies.get(g.body);
      if (!body) { body = new THREE.Group(); body.name = g.body; this.bodies.set(g.body, body); this.world.add(body); }
      body.add(mesh);
      built++;
    }
    return built;
  }

  // Applies body poses [x y z qw qx qy qz]; returns how many bodies were moved.
  setPoses(msg) {
    let applied = 0;
    for (const [name, p] of Object.entries(msg.bodies)) {
      const body = this.bodies.get(name);
      if (!body) continue;
      body.position.set(p[0], p[1], p[2]);
      body.quaternion.set(p[4], p[5], p[6], p[3]);
      applied++;
    }
    return applied;
  }

  setHud(lines) {
    this.hud.draw(lines);
    this.buttons.set(lines.buttons);
  }

  // Tests / debugging: a world-frame point and the HUD's panel and badge corners, in the
  // normalised device coordinates of ``camera`` (x, y in [-1, 1] on screen; z > 1 behind).
  project(camera, pointWorld) {
    camera.updateMatrixWorld();
    return new THREE.Vector3(...pointWorld).applyMatrix4(this.world.matrix).project(camera).toArray();
  }

  hudCorners(camera) {
    camera.updateMatrixWorld();
    const corners = (mesh, [w, h]) => [[-1, -1], [1, -1], [1, 1], [-1, 1]].map(([sx, sy]) =>
      mesh.localToWorld(new THREE.Vector3(sx * w / 2, sy * h / 2, 0)).project(camera).toArray());
    this.scene.updateMatrixWorld(true);
    return { panel: corners(this.hud.mesh, HUD_SIZE),
             badge: this.hud.badge.mesh.visible ? corners(this.hud.badge.mesh, BADGE_SIZE) : null };
  }
}
