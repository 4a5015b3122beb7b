// Rescale timeline: each vertex's parallelism over time as a step line, every rescale
// marked where it started (its trigger, before → after, the time the job was down), with
// the details on hover, and the history as a table below.
import {get, jobPath} from './api.js';
import {h, s, replace, card, table, empty, badge, hover} from './dom.js';
import * as fmt from './format.js';

let chartBox, tableBox, legendBox;
let lastKey = '';
// firstAck: attempt -> when its first checkpoint completed (data flowed end to end again),
// gathered over the refreshes since the AM's checkpoint history keeps only the latest few.
const firstAck = new Map();

function learnCheckpoints(ck) {
  for (const e of ck.history || []) {
    if (e.status !== 'COMPLETED') continue;
    const t = firstAck.get(e.attempt);
    if (t === undefined || e.latest_ack_timestamp < t) firstAck.set(e.attempt, e.latest_ack_timestamp);
  }
}

// recovered is how long after its start the rescale's new attempt completed a checkpoint.
function recovered(r) {
  const t = r.outcome === 'COMPLETED' && r.attempt ? firstAck.get(r.attempt) : undefined;
  return t === undefined ? undefined : t - r.start;
}

export const seriesColors = ['#0b7285', '#5f3dc4', '#e67700', '#c2255c', '#2f9e44', '#1864ab', '#862e9c', '#5c940d'];
const clip = (text, n) => text.length > n ? text.slice(0, n - 1) + '…' : text;
const triggerClass = t => 'trigger-' + String(t).toLowerCase().replaceAll('_', '-');

const niceSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map(x => x * 1000);

function timeTicks(t0, t1, maxTicks) {
  const step = niceSteps.find(st => (t1 - t0) / st <= maxTicks) || niceSteps[niceSteps.length - 1];
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return {ticks: out, step};
}

function tickLabel(t, step) {
  const d = new Date(t), p = n => String(n).padStart(2, '0');
  return step < 60000 ? p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) : p(d.getHours()) + ':' + p(d.getMinutes());
}

// summary is "2→3" when every vertex changed alike, else the change of the first ones.
function summary(r) {
  const vs = r.vertices || [];
  if (!vs.length) return '';
  if (vs.every(v => v.before === vs[0].before && v.after === vs[0].after)) return vs[0].before + '→' + vs[0].after;
  return vs.slice(0, 2).map(v => v.before + '→' + v.after).join(' ') + (vs.length > 2 ? ' …' : '');
}

function details(r, names) {
  return [
    h('div', {class: 'tip-title'}, h('b', {text: '#' + r.id + ' ' + fmt.trigger(r.trigger)}), ' ', badge(r.outcome || 'IN PROGRESS')),
    h('div', {class: 'muted', text: r.cause}),
    h('div', {text: 'started ' + fmt.dateTime(r.start)}),
    h('div', {text: r.end > 0 ? 'job down for ' + fmt.duration(r.duration) + ' (scheduler, until the new attempt deployed)' : 'in progress'}),
    r.attempt ? h('div', {text: 'attempt afterwards: ' + r.attempt}) : null,
    typeof r.keyGroupsMoved === 'number' ? h('div', {text: r.keyGroupsMoved + ' key groups moved to another TaskManager'}) : null,
    recovered(r) !== undefined ? h('div', {text: 'first checkpoint of the new attempt ' + fmt.duration(recovered(r)) + ' after the start'}) : null,
    h('table', {class: 'tip-table'}, (r.vertices || []).map(v => h('tr', {},
      h('td', {text: names.get(v.vertex) || v.vertex}), h('td', {class: 'num', text: v.before + ' → ' + v.after})))),
    (r.schedulerStates || []).length ? h('div', {class: 'muted', text: r.schedulerStates.map(st => st.state + ' ' + fmt.duration(st.duration)).join(' → ')}) : null,
  ];
}

function draw(width, rs, job, now) {
  const all = [...(rs.rescales || [])];
  if (rs.current) all.push({...rs.current, end: -1});
  const names = new Map(job.vertices.map(v => [v.id, v.name]));
  const ids = job.vertices.map(v => v.id);
  const W = Math.max(width, 480), H = 360, ML = 48, MR = 150, MT = 64, MB = 36;
  const pw = W - ML - MR, ph = H - MT - MB;
  const first = all.length ? all[0].start : job['start-time'];
  let t1 = job['end-time'] > 0 ? job['end-time'] : now;
  let t0 = first;
  if (t1 - t0 < 10000) t1 = t0 + 10000;
  const padT = (t1 - t0) * 0.02;
  t0 -= padT;
  const x = t => ML + (t - t0) / (t1 - t0) * pw;

  // each vertex's parallelism steps: [time, value], from what it ran at before the oldest
  // rescale the AM still remembers (0 when that is the initial schedule)
  const series = new Map(ids.map(id => [id, [[first, 0]]]));
  const seen = new Set();
  for (const r of all) {
    for (const v of r.vertices || []) {
      if (seen.has(v.vertex)) continue;
      seen.add(v.vertex);
      series.set(v.vertex, [[first, v.before]]);
    }
  }
  let maxP = 1;
  for (const r of all) {
    if (r.outcome !== 'COMPLETED') continue;
    for (const v of r.vertices || []) {
      series.get(v.vertex).push([r.end, v.after]);
      maxP = Math.max(maxP, v.after, v.before);
    }
  }
  for (const v of job.vertices) maxP = Math.max(maxP, v.parallelism);
  const yMax = maxP + 1;
  const y = p => MT + ph - p / yMax * ph;

  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'timeline', role: 'img',
    'aria-label': 'parallelism over time with ' + all.length + ' rescales'});
  // grid and axes
  const yStep = Math.max(1, Math.ceil(yMax / 6));
  for (let p = 0; p <= yMax; p += yStep) {
    svg.append(s('line', {x1: ML, x2: ML + pw, y1: y(p), y2: y(p), class: p === 0 ? 'axis' : 'grid'}));
    svg.append(s('text', {x: ML - 8, y: y(p) + 4, 'text-anchor': 'end', class: 'tick', text: p}));
  }
  svg.append(s('text', {x: 14, y: MT + ph / 2, class: 'axis-title', 'text-anchor': 'middle',
    transform: `rotate(-90 14 ${MT + ph / 2})`, text: 'parallelism'}));
  const {ticks, step} = timeTicks(t0, t1, Math.max(2, Math.floor(pw / 90)));
  for (const t of ticks) {
    svg.append(s('line', {x1: x(t), x2: x(t), y1: MT, y2: MT + ph, class: 'grid'}));
    svg.append(s('text', {x: x(t), y: MT + ph + 20, 'text-anchor': 'middle', class: 'tick', text: tickLabel(t, step)}));
  }
  // downtime bands
  for (const r of all) {
    const end = r.end > 0 ? r.end : now;
    const x1 = x(r.start), bw = Math.max(3, x(end) - x1);
    svg.append(s('rect', {x: x1, y: MT, width: bw, height: ph, class: 'downtime ' + (r.end > 0 ? '' : 'in-progress')}));
  }
  // parallelism lines, slightly apart where they overlap
  const n = series.size;
  [...series.entries()].forEach(([id, pts], i) => {
    const off = (i - (n - 1) / 2) * 3;
    let d = '';
    let prev = null;
    for (const [t, p] of pts) {
      d += prev === null ? `M${x(t)},${y(p) + off}` : ` H${x(t)} V${y(p) + off}`;
      prev = p;
    }
    d += ` H${x(t1)}`;
    const color = seriesColors[i % seriesColors.length];
    svg.append(s('path', {d, class: 'series', stroke: color, dataset: {vertex: id}}));
    svg.append(s('text', {x: ML + pw + 8, y: y(prev) + off + 4 + (i - (n - 1) / 2) * 10, class: 'series-label', fill: color,
      text: clip(names.get(id) || id, 16) + '  ' + prev}));
  });
  // rescale markers with labels in two rows, a label left out where it would overlap
  const lastLabelEnd = [-Infinity, -Infinity];
  for (const r of all) {
    const mx = x(r.start);
    const cls = triggerClass(r.trigger);
    const g = s('g', {class: 'rescale-marker ' + cls + ' outcome-' + String(r.outcome || 'in-progress').toLowerCase(),
      dataset: {rescaleId: r.id, trigger: r.trigger, outcome: r.outcome || 'IN_PROGRESS', change: fmt.change(r.vertices)}});
    g.append(s('line', {x1: mx, x2: mx, y1: MT - 14, y2: MT + ph, class: 'marker-line'}));
    const row = r.id % 2;
    const label = fmt.trigger(r.trigger) + ' ' + summary(r);
    const ly = row ? 34 : 16;
    g.append(s('circle', {cx: mx, cy: MT - 16, r: 5, class: 'marker-dot'}));
    if (mx - 4 > lastLabelEnd[row]) {
      const estimate = label.length * 6.4;
      const anchorEnd = mx + estimate > W - 4;
      g.append(s('text', {x: anchorEnd ? mx + 4 : mx - 4, y: ly, class: 'marker-label', 'text-anchor': anchorEnd ? 'end' : 'start', text: label}));
      lastLabelEnd[row] = anchorEnd ? mx : mx + estimate;
    }
    g.append(s('rect', {x: mx - 8, y: 0, width: 16, height: MT + ph, class: 'hit'}));
    hover(g, () => details(r, names));
    svg.append(g);
  }
  return svg;
}

function legend(job, all) {
  const triggers = [...new Set(all.map(r => r.trigger))];
  return h('div', {class: 'legend'},
    job.vertices.map((v, i) => h('span', {class: 'legend-item'},
      h('span', {class: 'swatch line', dataset: {color: i % seriesColors.length}}), v.name)),
    h('span', {class: 'legend-sep'}),
    triggers.map(t => h('span', {class: 'legend-item ' + triggerClass(t)}, h('span', {class: 'swatch dot'}), fmt.trigger(t))),
    h('span', {class: 'legend-item'}, h('span', {class: 'swatch band'}), 'job down'));
}

function rows(all, names) {
  return [...all].reverse().map(r => h('tr', {dataset: {rescaleId: r.id}},
    h('td', {class: 'num', text: '#' + r.id}),
    h('td', {class: 'nowrap', text: fmt.time(r.start), title: fmt.dateTime(r.start)}),
    h('td', {class: 'nowrap'}, h('span', {class: 'trigger ' + triggerClass(r.trigger), text: fmt.trigger(r.trigger)})),
    h('td', {class: 'nowrap'}, (r.vertices || []).map(v => h('div', {}, h('span', {text: names.get(v.vertex) || v.vertex}), ' ', h('b', {text: v.before + ' → ' + v.after})))),
    h('td', {}, badge(r.outcome || 'IN PROGRESS')),
    h('td', {class: 'num', text: r.end > 0 ? fmt.duration(r.duration) : '…'}),
    h('td', {class: 'num', text: recovered(r) !== undefined ? fmt.duration(recovered(r)) : '—',
      title: 'from the start of the rescale to the first completed checkpoint of the new attempt'}),
    h('td', {class: 'num', text: typeof r.keyGroupsMoved === 'number' ? r.keyGroupsMoved : '—',
      title: 'key groups whose TaskManager changed'}),
    h('td', {class: 'muted', text: r.cause}),
    h('td', {class: 'muted small', text: (r.schedulerStates || []).map(st => st.state + ' ' + fmt.duration(st.duration)).join(' → ')})));
}

export default {
  id: 'rescales',
  title: 'Rescales',
  mount(root) {
    chartBox = h('div', {class: 'chart-box', id: 'rescale-chart'});
    legendBox = h('div');
    tableBox = h('div');
    lastKey = '';
    const timeline = card('Rescale timeline', h('p', {class: 'hint', text: 'Parallelism of each vertex over time. Every rescale is marked where it began, with what triggered it and the parallelism before → after; the shaded band is the time the job was down (scheduler). Hover a marker for the details.'}),
        chartBox, legendBox);
    timeline.id = 'rescale-timeline';
    root.append(timeline, card('Rescale history', tableBox));
    window.addEventListener('resize', () => { lastKey = ''; });
  },
  async refresh(ctx) {
    const [rs, ck] = await Promise.all([get(jobPath(ctx.jid, '/rescales')), get(jobPath(ctx.jid, '/checkpoints'))]);
    learnCheckpoints(ck);
    const all = [...(rs.rescales || [])];
    if (rs.current) all.push({...rs.current, end: -1});
    const names = new Map(ctx.job.vertices.map(v => [v.id, v.name]));
    const key = JSON.stringify([rs, ctx.job.vertices.map(v => v.parallelism), [...firstAck]]);
    // the chart's right edge is now: redraw on every refresh, the table only when it changed
    replace(chartBox, draw(chartBox.clientWidth || 960, rs, ctx.job, ctx.now()));
    if (key === lastKey) return;
    lastKey = key;
    replace(legendBox, legend(ctx.job, all));
    replace(tableBox, all.length ? table(['##', 'Started', 'Trigger', 'Before → after', 'Outcome', '#Down for', '#Checkpoint after', '#Key groups moved', 'Cause', 'Scheduler states'], rows(all, names), {class: 'rescales'})
      : empty('No rescale yet.'));
  },
};
