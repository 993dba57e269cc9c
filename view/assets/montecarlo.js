// lockstep's Monte Carlo page: the batch's outcome, its figures and every
// run (sortable; failed runs red with their reason and the command that
// flies them again alone), from the JSON in #lockstep-data.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('lockstep-data').textContent);
  const $ = (id) => document.getElementById(id);
  const s = data.summary || {};
  const col = (name) => data.header.indexOf(name);
  const iPassed = col('passed'), iStatus = col('status'), iReason = col('reason'), iRun = col('run');
  // The CLI's words: a run completed or did not (a crash or hang of the
  // library, a refused start); a completed run passed its verdict or
  // failed it. A run counts once, whatever it failed by.
  const failed = data.rows.filter((r) => r[iPassed] !== 'true');
  const incomplete = failed.filter((r) => r[iStatus] !== 'completed');
  const failedVerdict = failed.length - incomplete.length;
  const parts = [data.rows.length + ' runs'];
  if (s.master_seed !== undefined) parts.push('master seed ' + s.master_seed);
  if (s.scenario) parts.push('scenario ' + s.scenario);
  parts.push('lockstep ' + data.version);
  $('subtitle').textContent = parts.join(' · ');

  const box = $('verdict');
  box.className = 'verdict ' + (failed.length ? 'fail' : 'pass');
  const b = document.createElement('b');
  const said = [];
  if (failedVerdict) said.push(failedVerdict + ' of ' + data.rows.length + ' runs failed their verdict');
  if (incomplete.length) said.push(incomplete.length + ' of ' + data.rows.length + ' did not complete');
  b.textContent = failed.length ? said.join(', ') : 'all ' + data.rows.length + ' runs passed their verdict';
  box.appendChild(b);
  const why = new Map();
  if (failed.length) {
    // Why, counted in runs: each [expect] key (or the run's status) that
    // failed, once for a run however many times it failed by it (two crashes).
    for (const r of failed) {
      const reasons = (r[iReason] || r[iStatus] || 'unknown').split(';').map((x) => x.trim()).filter(Boolean);
      for (const key of new Set(reasons.map((x) => x.split(':')[0]))) {
        why.set(key, (why.get(key) || 0) + 1);
      }
    }
    const ul = document.createElement('ul');
    for (const [k, n] of [...why.entries()].sort((a, c) => c[1] - a[1])) {
      const li = document.createElement('li');
      li.className = 'failed';
      li.textContent = k + ': ' + n + (n === 1 ? ' run' : ' runs');
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }

  const main = lockstepDocumentMain();
  lockstepFigures(main, data.figures);
  const h = document.createElement('h2');
  h.textContent = 'Runs (click a heading to sort)';
  main.appendChild(h);
  const wrap = document.createElement('div');
  wrap.style.overflow = 'auto';
  wrap.style.maxHeight = '70vh';
  const table = document.createElement('table');
  table.className = 'runs';
  const head = document.createElement('tr');
  const shown = data.header.map((name, i) => [name, i]).filter(([name]) => name !== 'digest' && name !== 'seed');
  if (data.rerun) shown.push(['fly it again', -1]);
  for (const [name, i] of shown) {
    const th = document.createElement('th');
    th.textContent = name;
    if (i >= 0) th.addEventListener('click', () => sort(i));
    head.appendChild(th);
  }
  const thead = document.createElement('thead');
  thead.appendChild(head);
  table.appendChild(thead);
  const tbody = document.createElement('tbody');
  table.appendChild(tbody);
  wrap.appendChild(table);
  main.appendChild(wrap);
  let rows = data.rows.slice();
  let by = -1, up = true;
  const render = () => {
    tbody.innerHTML = '';
    for (const r of rows) {
      const tr = document.createElement('tr');
      tr.className = r[iPassed] === 'true' ? 'pass' : 'fail';
      for (const [name, i] of shown) {
        const td = document.createElement('td');
        if (i < 0) {
          td.className = 'reason';
          const code = document.createElement('code');
          code.textContent = data.rerun.replace(/\{run\}/g, r[iRun]);
          td.appendChild(code);
        } else {
          const v = r[i];
          const x = Number(v);
          td.textContent = v !== '' && isFinite(x) && /\./.test(v) ? x.toPrecision(5) : v;
          if (name === 'reason') td.className = 'reason';
          td.title = v;
        }
        tr.appendChild(td);
      }
      tbody.appendChild(tr);
    }
  };
  const sort = (i) => {
    up = by === i ? !up : true;
    by = i;
    rows.sort((a, c) => {
      const x = Number(a[i]), y = Number(c[i]);
      const d = a[i] !== '' && c[i] !== '' && isFinite(x) && isFinite(y) ? x - y : String(a[i]).localeCompare(String(c[i]));
      return up ? d : -d;
    });
    render();
  };
  render();
  window.lockstepViewer = {
    ready: true,
    state() {
      return {
        runs: data.rows.length,
        failed: failed.length,
        failedVerdict,
        incomplete: incomplete.length,
        why: Object.fromEntries(why),
        figures: data.figures.length,
        shown: tbody.children.length,
      };
    },
  };
})();
