// lockstep's flight viewer: a flight's or a fleet's page, drawn from the
// JSON in #lockstep-data with three.js (the scene) and uPlot (the plots),
// both from the vendored bundle (window.LockstepVendor). One clock, the
// slider, drives the scene, the plots' time markers, the timeline and the
// read-out; `window.lockstepViewer` lets a test drive and read it.
(function () {
  'use strict';
  const { THREE, OrbitControls, uPlot } = window.LockstepVendor;
  const data = JSON.parse(document.getElementById('lockstep-data').textContent);
  const $ = (id) => document.getElementById(id);
  const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const MODE_COLORS = {
    none: '#cfd3da', disarmed: '#b9bfca', idle: '#9ecae1', takeoff: '#74c476', mission: '#6baed6',
    hold: '#fdd0a2', rtl: '#fd8d3c', land: '#c6dbef', landed: '#a1d99b', offboard: '#bcbddc', 'flight-stack': '#dadaeb',
  };
  const BAD = /fail|crash|error|fault|collision|lost|timeout|disconnect/i;

  // --- the data ---------------------------------------------------------
  const vehicles = data.vehicles.map((v, k) => {
    const c = v.cols;
    const n = c.time_us ? c.time_us.length : 0;
    return Object.assign(v, {
      k, n, color: COLORS[k % COLORS.length],
      t: (c.time_us || []).map((u) => u / 1e6),
      label: v.name || 'vehicle',
    });
  });
  const fleet = data.kind === 'fleet';
  // The clock: the times of the vehicle with the most rows (a fleet's
  // vehicles log together); each vehicle shows its last row at or before.
  const master = vehicles.reduce((a, b) => (b.n > a.n ? b : a), vehicles[0]);
  const clock = master.cols.time_us || [0];
  const lastRowAt = (v, us) => {
    const t = v.cols.time_us;
    if (!t || t.length === 0 || us < t[0]) return t && t.length ? 0 : -1;
    let lo = 0, hi = t.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (t[mid] <= us) lo = mid; else hi = mid - 1;
    }
    return lo;
  };
  const modeName = (v, code) => (v.modes && v.modes[String(code)]) || ('mode ' + code);
  const fmt = (x, d) => (x === null || x === undefined || !isFinite(x) ? '—' : x.toFixed(d));

  // --- heading and verdict ------------------------------------------------
  (function heading() {
    const v = vehicles[0];
    const parts = [];
    if (fleet) parts.push(vehicles.length + ' vehicles');
    if (v.scenario) parts.push('scenario ' + v.scenario);
    if (!fleet && v.spec) parts.push('airframe ' + v.spec);
    const seed = fleet ? data.seed : v.seed;
    if (seed !== null && seed !== undefined) parts.push((fleet ? 'fleet seed ' : 'seed ') + seed);
    if (!fleet && v.digest) parts.push('log ' + v.log + ' (' + v.digest + ')');
    parts.push('lockstep ' + data.version);
    $('subtitle').textContent = parts.join(' · ');
    const box = $('verdict');
    const verdicts = vehicles.filter((x) => x.verdict);
    if (verdicts.length === 0) {
      box.className = 'verdict none';
      box.innerHTML = '<b>no verdict</b><div>the run\'s report was not found beside the log</div>';
      return;
    }
    const failed = verdicts.filter((x) => !x.verdict.passed);
    box.className = 'verdict ' + (failed.length ? 'fail' : 'pass');
    const b = document.createElement('b');
    b.textContent = failed.length
      ? (fleet ? failed.length + ' of ' + verdicts.length + ' vehicles failed their verdict' : 'verdict: failed')
      : (fleet ? 'all ' + verdicts.length + ' vehicles passed' : 'verdict: passed');
    box.appendChild(b);
    const ul = document.createElement('ul');
    for (const x of (fleet ? failed : verdicts)) {
      for (const c of x.verdict.checks || []) {
        const li = document.createElement('li');
        li.className = c.passed ? 'passed' : 'failed';
        li.textContent = (fleet ? x.label + ': ' : '') + (c.passed ? '✓ ' : '✗ ') + c.key + ' — ' + c.detail;
        ul.appendChild(li);
      }
      for (const cr of x.verdict.crashes || []) {
        const li = document.createElement('li');
        li.className = 'failed';
        li.textContent = (fleet ? x.label + ': ' : '') + 'crash: ' + (typeof cr === 'string' ? cr : JSON.stringify(cr));
        ul.appendChild(li);
      }
    }
    if (ul.children.length) box.appendChild(ul);
  })();

  // --- the scene ----------------------------------------------------------
  // three.js is y-up: x = east, y = up, z = south (= -north).
  const toScene = (n, e, d) => new THREE.Vector3(e, -d, -n);
  const host = $('scene');
  const scene = new THREE.Scene();
  scene.background = new THREE.Color('#dfe6ee');
  const camera = new THREE.PerspectiveCamera(50, 1, 0.05, 20000);
  // Without WebGL 2 (a VM, a remote desktop, a hardened browser) there is
  // no 3D view: the pane says why, and the plots, timeline, slider and
  // read-out work on. The scene is still built and moved (state() reads it).
  let sceneError = null;
  let renderer = null;
  try {
    if (!document.createElement('canvas').getContext('webgl2')) sceneError = 'this browser gives no WebGL 2 context';
    else renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (e) {
    sceneError = 'WebGL failed: ' + e.message;
  }
  if (renderer) {
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    host.appendChild(renderer.domElement);
  } else {
    const why = document.createElement('p');
    why.className = 'no-scene';
    why.textContent = 'No 3D view: ' + sceneError + '. The plots, the timeline, the slider and the read-out work without it.';
    host.appendChild(why);
  }
  const draw = () => { if (renderer) renderer.render(scene, camera); };
  scene.add(new THREE.AmbientLight(0xffffff, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(30, 80, 40);
  scene.add(sun);

  // The extent of every path, waypoint and home.
  let lo = [0, 0, 0], hi = [0, 0, 0];
  const grow = (n, e, d) => {
    const p = [n, e, d];
    for (let i = 0; i < 3; i++) { if (isFinite(p[i])) { lo[i] = Math.min(lo[i], p[i]); hi[i] = Math.max(hi[i], p[i]); } }
  };
  for (const v of vehicles) {
    for (let i = 0; i < v.n; i++) grow(v.cols.x_m[i], v.cols.y_m[i], v.cols.z_m[i]);
    for (const w of v.waypoints) grow(w[0], w[1], 0);
  }
  const span = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 4);
  const centre = toScene((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);

  const gridStep = Math.pow(10, Math.floor(Math.log10(span / 2)));
  const gridSize = Math.ceil((span * 1.4) / gridStep / 2) * 2 * gridStep;
  const grid = new THREE.GridHelper(gridSize, Math.round(gridSize / gridStep), 0x8a94a6, 0xc3cad6);
  grid.position.set(Math.round(centre.x / gridStep) * gridStep, 0, Math.round(centre.z / gridStep) * gridStep);
  scene.add(grid);

  const line = (points, color, dashed) => {
    const g = new THREE.BufferGeometry();
    const flat = [];
    for (const p of points) flat.push(p.x, p.y, p.z);
    g.setAttribute('position', new THREE.Float32BufferAttribute(flat, 3));
    const m = dashed
      ? new THREE.LineDashedMaterial({ color, dashSize: span / 80, gapSize: span / 120 })
      : new THREE.LineBasicMaterial({ color });
    const l = new THREE.Line(g, m);
    if (dashed) l.computeLineDistances();
    return l;
  };
  const marker = span / 120;
  // Home: the origin.
  const home = new THREE.Mesh(new THREE.CylinderGeometry(marker * 2, marker * 2, marker / 4, 32), new THREE.MeshLambertMaterial({ color: '#2ca02c' }));
  scene.add(home);
  const label = (text, color) => {
    const c = document.createElement('canvas');
    c.width = 256; c.height = 64;
    const g = c.getContext('2d');
    g.font = 'bold 34px sans-serif';
    g.fillStyle = color;
    g.textAlign = 'center';
    g.fillText(text, 128, 44);
    const s = new THREE.Sprite(new THREE.SpriteMaterial({ map: new THREE.CanvasTexture(c), depthTest: false }));
    s.scale.set(marker * 16, marker * 4, 1);
    return s;
  };
  const homeLabel = label('home', '#1c6b1c');
  homeLabel.position.set(0, marker * 4, 0);
  scene.add(homeLabel);

  // The vehicle: body, arms, rotor discs coloured by spin, a red nose;
  // drawn larger than life when the scene is large (said on the page).
  const frd = (p) => new THREE.Vector3(p[1], -p[2], -p[0]);
  const makeVehicle = (v) => {
    const g = new THREE.Group();
    const a = v.airframe || { rotors: [], propeller_radius_m: 0.1 };
    const r = a.propeller_radius_m || 0.1;
    let reach = r;
    for (const rot of a.rotors) reach = Math.max(reach, Math.hypot(rot.position_m[0], rot.position_m[1]) + r);
    const body = new THREE.Mesh(new THREE.BoxGeometry(reach * 0.45, reach * 0.18, reach * 0.45), new THREE.MeshLambertMaterial({ color: v.color }));
    g.add(body);
    const rotors = [];
    for (const rot of a.rotors) {
      const p = frd(rot.position_m);
      const arm = new THREE.Mesh(new THREE.BoxGeometry(reach * 0.06, reach * 0.05, p.length() || 1e-3), new THREE.MeshLambertMaterial({ color: '#39404d' }));
      arm.position.copy(p).multiplyScalar(0.5);
      arm.lookAt(p);
      g.add(arm);
      const disc = new THREE.Mesh(new THREE.CylinderGeometry(r, r, reach * 0.02, 28),
        new THREE.MeshLambertMaterial({ color: rot.spin_dir > 0 ? '#3b7dd8' : '#f08c2c', transparent: true, opacity: 0.75 }));
      disc.position.copy(p);
      disc.position.y += reach * 0.06;
      g.add(disc);
      rotors.push(disc);
    }
    const nose = new THREE.Mesh(new THREE.SphereGeometry(reach * 0.09, 12, 8), new THREE.MeshBasicMaterial({ color: '#d62728' }));
    nose.position.copy(frd([reach * 0.35, 0, 0]));
    g.add(nose);
    const scale = Math.max(1, (span / (fleet ? 40 : 16)) / reach);
    g.scale.setScalar(scale);
    g.userData = { rotors, scale, reach };
    return g;
  };
  let drawnLarger = 1;
  for (const v of vehicles) {
    const pts = [];
    for (let i = 0; i < v.n; i++) {
      const x = v.cols.x_m[i], y = v.cols.y_m[i], z = v.cols.z_m[i];
      if (isFinite(x) && isFinite(y) && isFinite(z)) pts.push(toScene(x, y, z));
    }
    scene.add(line(pts, v.color, false));
    if (!fleet && v.cols.sp_x_m) {
      const sp = [];
      for (let i = 0; i < v.n; i++) {
        const x = v.cols.sp_x_m[i], y = v.cols.sp_y_m[i], z = v.cols.sp_z_m[i];
        if (isFinite(x) && isFinite(y) && isFinite(z) && v.cols.armed[i]) sp.push(toScene(x, y, z));
      }
      if (sp.length > 1) scene.add(line(sp, '#7f7f7f', true));
    }
    for (const w of v.waypoints) {
      const m = new THREE.Mesh(new THREE.SphereGeometry(marker * 1.2, 16, 12), new THREE.MeshLambertMaterial({ color: fleet ? v.color : '#d62728' }));
      m.position.copy(toScene(w[0], w[1], 0));
      scene.add(m);
    }
    v.object = makeVehicle(v);
    drawnLarger = Math.max(drawnLarger, v.object.userData.scale);
    scene.add(v.object);
    if (fleet) {
      v.tag = label(v.label, v.color);
      scene.add(v.tag);
    }
  }
  // A fleet's closest approach: a line between the pair, where they were.
  if (fleet && data.closest && data.closest.a) {
    const a = vehicles.find((v) => v.name === data.closest.a);
    const b = vehicles.find((v) => v.name === data.closest.b);
    if (a && b) {
      const pa = lastRowAt(a, data.closest.time_us), pb = lastRowAt(b, data.closest.time_us);
      const at = (v, i) => toScene(v.cols.x_m[i], v.cols.y_m[i], v.cols.z_m[i]);
      const l = line([at(a, pa), at(b, pb)], '#d62728', false);
      scene.add(l);
      const t = label('closest ' + fmt(data.closest.separation_m, 2) + ' m', '#a32320');
      t.position.copy(at(a, pa).add(at(b, pb)).multiplyScalar(0.5));
      t.position.y += marker * 5;
      scene.add(t);
    }
  }
  // The wind arrow, above home: where the air goes, 1 m/s drawn as span/40.
  const wind = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(0, marker * 8, 0), 1, 0x0b63ce, marker * 3, marker * 2);
  scene.add(wind);
  // A note of some vehicles, said once when every vehicle has it.
  const notes = (f) => {
    const said = vehicles.map(f);
    if (said.every((x) => x && x === said[0])) return [(fleet ? 'every vehicle: ' : '') + said[0]];
    return vehicles.filter((v, i) => said[i]).map((v, i) => v.label + ': ' + said[vehicles.indexOf(v)]);
  };
  $('scene-note').textContent = [
    drawnLarger > 1.01 ? 'vehicles drawn ×' + drawnLarger.toFixed(0) + ' life size' : 'vehicles drawn life size',
    'rotors: blue counter-clockwise, orange clockwise; red dot: the nose',
    'blue arrow: the wind (where the air goes)',
    (fleet ? 'spheres: each vehicle\'s waypoints' : 'red: waypoints') + ' (on the ground below them)' + (fleet ? '' : '; dashed: setpoints'),
    'drag to orbit, wheel to zoom; plots carry 6 significant digits, positions and attitude every digit',
  ].concat(notes((v) => v.airframe_note), notes((v) => (v.stride > 1 ? 'every ' + v.stride + 'th row shown (of ' + v.rows + ')' : null))).join(' · ');

  camera.position.set(centre.x + span * 0.75, centre.y + span * 0.85, centre.z + span * 1.35);
  const controls = renderer ? new OrbitControls(camera, renderer.domElement) : null;
  if (controls) {
    controls.target.copy(centre);
    controls.update();
  }
  const resize = () => {
    const w = host.clientWidth || 800, h = host.clientHeight || 480;
    if (renderer) {
      renderer.setSize(w, h, false);
      renderer.domElement.style.width = w + 'px';
      renderer.domElement.style.height = h + 'px';
    }
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
  };

  // --- the plots ----------------------------------------------------------
  // Yaw unwrapped: no jump of 360 degrees where the angle wraps.
  const attitude = (c, n) => {
    const r = [], p = [], y = [];
    let prev = null, turns = 0;
    for (let i = 0; i < n; i++) {
      const w = c.qw[i], x = c.qx[i], yy = c.qy[i], z = c.qz[i];
      r.push(Math.atan2(2 * (w * x + yy * z), 1 - 2 * (x * x + yy * yy)) * 180 / Math.PI);
      p.push(Math.asin(Math.max(-1, Math.min(1, 2 * (w * yy - z * x)))) * 180 / Math.PI);
      const raw = Math.atan2(2 * (w * z + x * yy), 1 - 2 * (yy * yy + z * z)) * 180 / Math.PI;
      if (prev !== null) {
        const d = raw - prev;
        if (d > 180) turns -= 1; else if (d < -180) turns += 1;
      }
      prev = raw;
      y.push(raw + 360 * turns);
    }
    return [['roll', r], ['pitch', p], ['yaw (unwrapped)', y]];
  };
  const indexed = (c, prefix, suffix, scale) => {
    const out = [];
    for (let i = 0; i < 64; i++) {
      const col = c[prefix + i + suffix];
      if (!col) break;
      out.push([prefix + i, col.map((x) => (x === null ? null : x * scale))]);
    }
    return out;
  };
  const neg = (a) => (a ? a.map((x) => (x === null ? null : -x)) : null);
  const panels = (v) => {
    const c = v.cols, n = v.n;
    return [
      ['Altitude', 'm', [['true', neg(c.z_m)], ['estimate', neg(c.est_z_m)], ['setpoint', neg(c.sp_z_m)]]],
      ['Velocity', 'm/s', [['north', c.vx_mps], ['east', c.vy_mps], ['down', c.vz_mps]]],
      ['Attitude', 'deg', c.qw ? attitude(c, n) : []],
      ['Motor commands', '0..1', indexed(c, 'motor', '', 1)],
      ['Battery voltage', 'V', indexed(c, 'battery', '_v', 1)],
      ['State of charge', '%', indexed(c, 'battery', '_soc', 100)],
      ['Wind', 'm/s', [['north', c.wind_n_mps], ['east', c.wind_e_mps], ['down', c.wind_d_mps]]],
    ].map(([t, u, s]) => [t, u, s.filter((x) => x[1])]).filter((p) => p[2].length);
  };
  // Mode segments of a vehicle: [t0, t1, name].
  const segments = (v) => {
    const out = [];
    const m = v.cols.mode || [];
    let start = 0;
    for (let i = 1; i <= v.n; i++) {
      if (i === v.n || m[i] !== m[start]) {
        out.push([v.t[start], i < v.n ? v.t[i] : v.t[v.n - 1], modeName(v, m[start])]);
        start = i;
      }
    }
    return out;
  };
  const events = (v) => (v.timeline || []).filter((e) => e.kind !== 'mode' && e.kind !== 'arming');
  let plots = [];
  let selected = vehicles[0];
  const buildPlots = () => {
    for (const p of plots) p.u.destroy();
    plots = [];
    const box = $('plots');
    box.innerHTML = '';
    const v = selected;
    const segs = segments(v);
    const evs = events(v);
    const width = Math.max(320, box.clientWidth - 8);
    for (const [title, unit, series] of panels(v)) {
      const div = document.createElement('div');
      div.className = 'plot';
      const h = document.createElement('h2');
      h.textContent = title + ' (' + unit + ')' + (fleet ? ' — ' + v.label : '');
      div.appendChild(h);
      box.appendChild(div);
      const opts = {
        width, height: 150,
        cursor: { sync: { key: 'lockstep' }, drag: { x: false, y: false } },
        scales: { x: { time: false } },
        legend: { live: true },
        axes: [{ label: 'time (s)', labelSize: 18, size: 36 }, { size: 56 }],
        series: [{ label: 't (s)', value: (u, x) => fmt(x, 3) }].concat(series.map(([name], k) => ({
          label: name, stroke: COLORS[k % COLORS.length], width: 1.5, points: { show: false },
          value: (u, x) => fmt(x, 3),
        }))),
        hooks: {
          // Mode bands behind the series, event lines over the grid.
          drawClear: [(u) => {
            const ctx = u.ctx;
            ctx.save();
            for (const [t0, t1, name] of segs) {
              const x0 = u.valToPos(t0, 'x', true), x1 = u.valToPos(t1, 'x', true);
              ctx.globalAlpha = 0.28;
              ctx.fillStyle = MODE_COLORS[name] || '#ddd';
              ctx.fillRect(x0, u.bbox.top, Math.max(1, x1 - x0), u.bbox.height);
            }
            ctx.globalAlpha = 0.8;
            for (const e of evs) {
              const x = u.valToPos(e.time_us / 1e6, 'x', true);
              ctx.fillStyle = BAD.test(e.kind + ' ' + e.what) ? '#d62728' : '#555';
              ctx.fillRect(x, u.bbox.top, 1.5, u.bbox.height);
            }
            ctx.restore();
          }],
        },
      };
      const u = new uPlot(opts, [v.t].concat(series.map((s) => s[1])), div);
      const mark = document.createElement('div');
      mark.className = 'time-marker';
      u.over.appendChild(mark);
      u.over.addEventListener('click', () => {
        const t = u.posToVal(u.cursor.left, 'x');
        if (isFinite(t)) setTime(t);
      });
      plots.push({ u, mark });
    }
  };

  // --- the timeline -------------------------------------------------------
  const t0 = clock[0] / 1e6, t1 = clock[clock.length - 1] / 1e6;
  const pct = (t) => (t1 > t0 ? ((t - t0) / (t1 - t0)) * 100 : 0);
  const buildTimeline = () => {
    const box = $('timeline');
    box.innerHTML = '';
    const v = selected;
    const seen = new Set();
    for (const [a, b, name] of segments(v)) {
      const d = document.createElement('div');
      d.className = 'band';
      d.style.left = pct(a) + '%';
      d.style.width = Math.max(0.15, pct(b) - pct(a)) + '%';
      d.style.background = MODE_COLORS[name] || '#ddd';
      d.title = name + ' from ' + fmt(a, 3) + ' s to ' + fmt(b, 3) + ' s';
      box.appendChild(d);
      seen.add(name);
    }
    const armed = v.cols.armed || [];
    for (let i = 0; i < v.n; i++) {
      if (!armed[i]) continue;
      let j = i;
      while (j + 1 < v.n && armed[j + 1]) j++;
      const d = document.createElement('div');
      d.className = 'armed';
      d.style.left = pct(v.t[i]) + '%';
      d.style.width = Math.max(0.15, pct(v.t[j]) - pct(v.t[i])) + '%';
      d.title = 'armed from ' + fmt(v.t[i], 3) + ' s to ' + fmt(v.t[j], 3) + ' s';
      box.appendChild(d);
      i = j;
    }
    const ticks = events(v).map((e) => [e.time_us, e.kind + ': ' + e.what]);
    for (const e of data.encounters || []) {
      if (!fleet || e.a === v.name || e.b === v.name) ticks.push([e.time_us, e.kind + ' ' + e.a + ' and ' + e.b + ', ' + fmt(e.separation_m, 2) + ' m apart']);
    }
    for (const [us, what] of ticks) {
      const d = document.createElement('div');
      d.className = 'tick' + (BAD.test(what) || /proximity|closest/.test(what) ? ' bad' : '');
      d.style.left = pct(us / 1e6) + '%';
      d.title = fmt(us / 1e6, 6) + ' s  ' + what;
      box.appendChild(d);
    }
    const now = document.createElement('div');
    now.className = 'now';
    box.appendChild(now);
    box.onclick = (ev) => {
      const r = box.getBoundingClientRect();
      setTime(t0 + ((ev.clientX - r.left) / r.width) * (t1 - t0));
    };
    const legend = $('legend');
    legend.innerHTML = 'modes' + (fleet ? ' of ' + v.label : '') + ':';
    for (const name of seen) {
      const s = document.createElement('span');
      s.className = 'sw';
      s.style.background = MODE_COLORS[name] || '#ddd';
      legend.appendChild(s);
      legend.appendChild(document.createTextNode(name));
    }
    legend.appendChild(document.createTextNode('  · red strip: armed · black ticks: events · red ticks: failures, crashes, proximity'));
    const details = $('details');
    details.textContent = (v.timeline || []).map((e) => fmt(e.time_us / 1e6, 3) + ' s ' + e.kind + ': ' + e.what).join('   ·   ');
  };

  // --- the clock ----------------------------------------------------------
  const slider = $('slider');
  slider.max = String(clock.length - 1);
  let index = 0;
  const show = () => {
    const us = clock[index];
    let w = [0, 0, 0];
    for (const v of vehicles) {
      const i = lastRowAt(v, us);
      v.row = i;
      if (i < 0) continue;
      const c = v.cols;
      v.object.position.copy(toScene(c.x_m[i], c.y_m[i], c.z_m[i]));
      if (c.qw) {
        // A body-FRD-to-NED quaternion in the scene's axes: the vector
        // part mapped as a position is (the map is a proper rotation).
        v.object.quaternion.set(c.qy[i], -c.qz[i], -c.qx[i], c.qw[i]);
      }
      if (v.tag) {
        v.tag.position.copy(v.object.position);
        v.tag.position.y += marker * 5;
      }
      if (v === selected && c.wind_n_mps) w = [c.wind_n_mps[i], c.wind_e_mps[i], c.wind_d_mps[i]];
    }
    const speed = Math.hypot(w[0], w[1], w[2]);
    if (speed > 1e-9) {
      wind.visible = true;
      wind.setDirection(toScene(w[0], w[1], w[2]).normalize());
      wind.setLength(Math.max(marker * 4, (speed * span) / 40), marker * 3, marker * 2);
    } else {
      wind.visible = false;
    }
    if (controls && $('follow').checked) {
      const o = selected.object.position;
      controls.target.copy(o);
      controls.update();
    }
    const v = selected, i = v.row, c = v.cols;
    const lines = [];
    lines.push((fleet ? v.label + '  ' : '') + 't ' + fmt(us / 1e6, 3) + ' s');
    if (i >= 0) {
      lines.push('mode     ' + modeName(v, c.mode ? c.mode[i] : 0) + (c.armed && c.armed[i] ? ', armed' : ', disarmed'));
      lines.push('position N ' + fmt(c.x_m[i], 2) + '  E ' + fmt(c.y_m[i], 2) + '  alt ' + fmt(-c.z_m[i], 2) + ' m');
      if (c.vx_mps) lines.push('speed    ' + fmt(Math.hypot(c.vx_mps[i], c.vy_mps[i], c.vz_mps[i]), 2) + ' m/s');
      if (c.battery0_soc) lines.push('battery  ' + fmt(c.battery0_soc[i] * 100, 1) + ' %' + (c.battery0_v ? ', ' + fmt(c.battery0_v[i], 2) + ' V' : ''));
      lines.push('wind     ' + fmt(speed, 2) + ' m/s toward N ' + fmt(w[0], 1) + ' E ' + fmt(w[1], 1) + ' D ' + fmt(w[2], 1));
      if (c.faults && c.faults[i]) {
        const bits = [];
        for (const [b, what] of Object.entries(v.fault_bits || {})) {
          if (Math.floor(c.faults[i] / Math.pow(2, Number(b))) % 2 === 1) bits.push(what);
        }
        lines.push('faults   ' + (bits.join(', ') || c.faults[i]));
      }
    }
    $('hud').textContent = lines.join('\n');
    $('clock').textContent = fmt(us / 1e6, 3) + ' / ' + fmt(t1, 3) + ' s';
    slider.value = String(index);
    for (const p of plots) {
      const x = p.u.valToPos(us / 1e6, 'x');
      p.mark.style.left = x + 'px';
    }
    const now = document.querySelector('#timeline .now');
    if (now) now.style.left = pct(us / 1e6) + '%';
    draw();
  };
  const setIndex = (i) => {
    index = Math.max(0, Math.min(clock.length - 1, Math.round(i)));
    show();
  };
  // The last sample at or before `t` seconds.
  const setTime = (t) => {
    let i = 0;
    const us = t * 1e6;
    while (i + 1 < clock.length && clock[i + 1] <= us) i++;
    setIndex(i);
  };
  slider.addEventListener('input', () => setIndex(Number(slider.value)));

  let playing = false, last = null, simUs = 0;
  const play = $('play');
  const frame = (now) => {
    if (!playing) return;
    if (last !== null) {
      simUs += (now - last) * 1000 * Number($('speed').value);
      let i = index;
      while (i + 1 < clock.length && clock[i + 1] <= simUs) i++;
      if (i !== index) setIndex(i);
      if (i >= clock.length - 1) { toggle(); return; }
    }
    last = now;
    requestAnimationFrame(frame);
  };
  const toggle = () => {
    playing = !playing;
    play.innerHTML = playing ? '&#10074;&#10074;' : '&#9654;';
    if (playing) {
      if (index >= clock.length - 1) index = 0;
      simUs = clock[index];
      last = null;
      requestAnimationFrame(frame);
    }
  };
  play.addEventListener('click', toggle);
  document.addEventListener('keydown', (e) => {
    if (e.key === ' ' && e.target === document.body) { e.preventDefault(); toggle(); }
  });
  if (controls) controls.addEventListener('change', draw);

  if (fleet) {
    const pick = document.createElement('select');
    pick.id = 'vehicle';
    for (const v of vehicles) {
      const o = document.createElement('option');
      o.value = String(v.k);
      o.textContent = v.label + (v.verdict ? (v.verdict.passed ? ' (passed)' : ' (FAILED)') : '');
      pick.appendChild(o);
    }
    pick.addEventListener('change', () => {
      selected = vehicles[Number(pick.value)];
      buildPlots();
      buildTimeline();
      show();
    });
    const l = document.createElement('label');
    l.textContent = 'plots and timeline of ';
    l.appendChild(pick);
    $('picker').appendChild(l);
  }

  resize();
  buildPlots();
  buildTimeline();
  setIndex(0);
  window.addEventListener('resize', () => { resize(); buildPlots(); show(); });

  window.lockstepViewer = {
    ready: true,
    setTime,
    setIndex,
    // What is shown now: the clock and each vehicle's row, position (NED,
    // read back from the scene) and quaternion.
    state() {
      return {
        index,
        time_us: clock[index],
        vehicles: vehicles.map((v) => {
          const p = v.object.position, q = v.object.quaternion;
          return {
            name: v.name, row: v.row, time_us: v.row >= 0 ? v.cols.time_us[v.row] : null,
            position_ned: [-p.z, p.x, -p.y],
            quaternion: [q.w, -q.z, q.x, -q.y],
          };
        }),
        plots: plots.length,
        scene: renderer !== null,
        sceneError,
      };
    },
  };
})();
