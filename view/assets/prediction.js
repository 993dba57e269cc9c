// lockstep's prediction page (lockstep predict --out): the log replayed
// open loop through the plant; per horizon the RMS error of the plant and
// of the baseline (constant rates; the last sample's acceleration held),
// and a figure of the log against both, from the JSON in #lockstep-data.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('lockstep-data').textContent);
  const $ = (id) => document.getElementById(id);
  const r = data.report || {};
  const horizons = r.horizons || [];
  $('subtitle').textContent = [
    'spec ' + r.spec,
    r.commands,
    (r.log_duration_s || 0).toFixed(1) + ' s of log',
    (r.log_s_per_wall_s || 0).toFixed(0) + ' log s per wall s',
    'lockstep ' + data.version,
  ].join(' · ');

  const quantities = [
    ['rates_radps', 'body rates (rad/s)'],
    ['attitude_deg', 'attitude (deg)'],
    ['accel_mps2', 'specific force (m/s²)'],
    ['velocity_mps', 'velocity (m/s)'],
  ];
  // Where the plant beats the baseline, per horizon and quantity.
  let better = 0, compared = 0;
  for (const h of horizons) {
    for (const [k] of quantities) {
      compared += 1;
      if (h.plant[k] < h.baseline[k]) better += 1;
    }
  }
  const box = $('verdict');
  box.className = 'verdict ' + (better === compared ? 'pass' : 'fail');
  const b = document.createElement('b');
  b.textContent = 'the plant beats the baseline in ' + better + ' of ' + compared + ' errors';
  box.appendChild(b);

  const main = lockstepDocumentMain();
  const h2 = document.createElement('h2');
  h2.textContent = 'RMS error at each horizon\u2019s end (plant / baseline)';
  main.appendChild(h2);
  const table = document.createElement('table');
  table.className = 'runs errors';
  const head = document.createElement('tr');
  for (const name of ['horizon (s)', 'windows'].concat(quantities.map((q) => q[1]))) {
    const th = document.createElement('th');
    th.textContent = name;
    head.appendChild(th);
  }
  table.appendChild(head);
  for (const h of horizons) {
    const tr = document.createElement('tr');
    const cells = [String(h.horizon_s), String(h.windows)];
    for (const [k] of quantities) {
      cells.push(h.plant[k].toPrecision(3) + ' / ' + h.baseline[k].toPrecision(3));
    }
    cells.forEach((text, i) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (i >= 2) td.className = h.plant[quantities[i - 2][0]] < h.baseline[quantities[i - 2][0]] ? 'pass' : 'fail';
      tr.appendChild(td);
    });
    table.appendChild(tr);
  }
  main.appendChild(table);
  lockstepFigures(main, data.figures);
  window.lockstepViewer = {
    ready: true,
    state() {
      return { horizons: horizons.length, rows: table.rows.length - 1, figures: data.figures.length, better, compared };
    },
  };
})();
