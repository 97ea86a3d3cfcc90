// The simulated scene as the headset sees it: primitive geoms grouped by body, body poses
// streamed per tick, and a head-locked HUD. World frame z-up -> operator -> WebXR y-up.
import * as THREE from 'three';

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

function makeMesh(g) {
  const geometry = makeGeometry(g.type, g.size);
  if (!geometry) return null;
  const [r, gr, b, alpha] = g.rgba;
  const material = new THREE.MeshStandardMaterial({
    color: new THREE.Color(r, gr, b), roughness: 0.75, metalness: 0.05,
    transparent: alpha < 1, opacity: alpha, side: g.type === 'plane' ? THREE.DoubleSide : THREE.FrontSide,
  });
  const mesh = new THREE.Mesh(geometry, material);
  mesh.position.set(g.pos[0], g.pos[1], g.pos[2]);
  mesh.quaternion.set(g.quat[1], g.quat[2], g.quat[3], g.quat[0]);
  mesh.name = g.name;
  return mesh;
}

class Hud {
  constructor(camera) {
    this.canvas = document.createElement('canvas');
    this.canvas.width = 1024; this.canvas.height = 512;
    this.texture = new THREE.CanvasTexture(this.canvas);
    const material = new THREE.MeshBasicMaterial({ map: this.texture, transparent: true, depthTest: false });
    this.mesh = new THREE.Mesh(new THREE.PlaneGeometry(0.48, 0.24), material);
    this.mesh.position.set(0, -0.22, -0.8);
    this.mesh.renderOrder = 10;
    camera.add(this.mesh);
    this.draw({ instruction: 'waiting for the app…', subtasks: [], recording: false, status: '' }, 'connecting');
  }

  draw(hud, connection) {
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, 1024, 512);
    ctx.fillStyle = 'rgba(18, 20, 24, 0.72)';
    ctx.fillRect(0, 0, 1024, 512);
    ctx.fillStyle = '#ffffff';
    ctx.font = '40px sans-serif';
    wrap(ctx, hud.instruction || '', 30, 60, 880, 46, 3);
    if (hud.recording) { ctx.fillStyle = '#ff4040'; ctx.beginPath(); ctx.arc(960, 46, 18, 0, 2 * Math.PI); ctx.fill(); }
    ctx.font = '32px sans-serif';
    (hud.subtasks || []).slice(0, 6).forEach((s, i) => {
      ctx.fillStyle = s.done ? '#6fdc8c' : '#c8ccd2';
      ctx.fillText(`${s.done ? '✔' : '○'} ${s.name}`, 30, 220 + i * 40);
    });
    ctx.fillStyle = '#9aa0a6';
    ctx.font = '26px sans-serif';
    ctx.fillText(`${hud.status || ''}  [${connection}]`, 30, 495);
    this.texture.needsUpdate = true;
  }
}

function wrap(ctx, text, x, y, width, lineHeight, maxLines) {
  let line = '', lines = 0;
  for (const word of text.split(/\s+/)) {
    const test = line ? `${line} ${word}` : word;
    if (ctx.measureText(test).width > width && line) {
      ctx.fillText(line, x, y + lines * lineHeight);
      line = word;
      if (++lines >= maxLines) return;
    } else line = test;
  }
  if (line) ctx.fillText(line, x, y + lines * lineHeight);
}

export class SceneView {
  constructor() {
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
    this.scene.add(this.world);
    this.bodies = new Map();
    this.hud = new Hud(this.camera);
    this.lastHud = { instruction: '', subtasks: [], recording: false, status: '' };
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
    let built = 0;
    for (const g of msg.geoms) {
      const mesh = makeMesh(g);
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

  setHud(hud, connection) {
    this.lastHud = hud;
    this.hud.draw(hud, connection);
  }
}
