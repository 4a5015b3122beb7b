// Job graph: vertices left to right by depth, edges with their ship strategy, each vertex
// with its parallelism, bounds and state.
import {get, jobPath} from './api.js';
import {h, s, replace, card, hover, table, empty, badge} from './dom.js';
import {vertexDetails, aggregated, subtaskName, inRate, outRate, busy, backPressure, backPressureLevel} from './metrics.js';
import * as fmt from './format.js';

let box, subtasksBox;
let lastKey = '';

const W = 250, H = 114, GX = 90, GY = 28, M = 24;

// layers assigns each node the length of the longest path from a source.
function layers(nodes) {
  const depth = new Map();
  const byId = new Map(nodes.map(n => [n.id, n]));
  const visit = (n, seen) => {
    if (depth.has(n.id)) return depth.get(n.id);
    if (seen.has(n.id)) return 0; // a cycle cannot happen in a job graph; stay finite anyway
    seen.add(n.id);
    let d = 0;
    for (const i of n.inputs || []) if (byId.has(i.id)) d = Math.max(d, visit(byId.get(i.id), seen) + 1);
    depth.set(n.id, d);
    return d;
  };
  nodes.forEach(n => visit(n, new Set()));
  return depth;
}

function clip(text, max) {
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

function draw(plan, job, req, metrics) {
  const nodes = plan.nodes;
  const depth = layers(nodes);
  const cols = [];
  for (const n of nodes) (cols[depth.get(n.id)] ||= []).push(n);
  const rows = Math.max(...cols.map(c => c.length));
  const width = M * 2 + cols.length * W + (cols.length - 1) * GX;
  const height = M * 2 + rows * H + (rows - 1) * GY;
  const pos = new Map();
  cols.forEach((col, ci) => col.forEach((n, ri) => {
    const offset = (rows - col.length) * (H + GY) / 2;
    pos.set(n.id, {x: M + ci * (W + GX), y: M + offset + ri * (H + GY)});
  }));
  const status = new Map((job.vertices || []).map(v => [v.id, v.status]));
  const svg = s('svg', {viewBox: `0 0 ${width} ${height}`, width, height, class: 'graph', role: 'img',
    'aria-label': 'job graph of ' + plan.name},
  s('defs', {}, s('marker', {id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse'},
    s('path', {d: 'M0,0 L10,5 L0,10 z', class: 'edge-head'}))));
  for (const n of nodes) {
    for (const i of n.inputs || []) {
      const a = pos.get(i.id), b = pos.get(n.id);
      if (!a) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x - 2, y2 = b.y + H / 2, mx = (x1 + x2) / 2;
      svg.append(s('path', {d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, class: 'edge', 'marker-end': 'url(#arrow)'}));
      const from = metrics.get(i.id);
      svg.append(s('text', {x: mx, y: (y1 + y2) / 2 - 7, class: 'edge-label', 'text-anchor': 'middle', text: i.ship_strategy}));
      if (from) svg.append(s('text', {x: mx, y: (y1 + y2) / 2 + 16, class: 'edge-rate', 'text-anchor': 'middle', text: outRate(from)}));
    }
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    const b = req[n.id] && req[n.id].parallelism;
    const st = status.get(n.id) || 'CREATED';
    const m = metrics.get(n.id);
    const g = s('g', {transform: `translate(${p.x},${p.y})`, class: 'vertex', dataset: {vertex: n.id}},
      s('rect', {width: W, height: H, rx: 10, class: 'vertex-box'}),
      s('rect', {width: 6, height: H, rx: 3, class: 'vertex-side state-fill-' + st.toLowerCase()}),
      s('text', {x: 18, y: 26, class: 'vertex-name', text: clip(n.operator || n.id, 22)}),
      s('text', {x: W - 14, y: 26, class: 'vertex-par', 'text-anchor': 'end', text: '×' + n.parallelism}),
      s('text', {x: 18, y: 50, class: 'vertex-line', text: 'parallelism ' + n.parallelism + ' of max ' + n.maxParallelism}),
      s('text', {x: 18, y: 68, class: 'vertex-line', text: 'bounds ' + (b ? b.lowerBound + ' – ' + b.upperBound : '—')}),
      s('text', {x: 18, y: 86, class: 'vertex-line', text: m ? 'in ' + inRate(m) + ' · out ' + outRate(m) : 'no task metrics yet'}),
      s('text', {x: 18, y: 104, class: 'vertex-line muted', text: m ? 'busy ' + busy(m) + ' · back-pressure ' + backPressure(m) : st.toLowerCase()}),
      m ? s('rect', {x: W - 16, y: H - 18, width: 8, height: 8, rx: 4, class: 'bp-dot bp-' + backPressureLevel(m['max-backpressured-time-ms-per-second'])}) : null);
    hover(g, () => [h('b', {text: n.operator}), h('div', {text: 'id ' + n.id}), h('div', {text: 'state ' + st}),
      h('div', {text: 'parallelism ' + n.parallelism + ', max ' + n.maxParallelism}),
      h('div', {text: 'bounds ' + (b ? b.lowerBound + ' – ' + b.upperBound : '—')}),
      m ? h('div', {text: 'records in ' + inRate(m) + ', out ' + outRate(m) + ' (' + m['subtasks-reporting'] + ' subtasks reporting)'}) : null,
      m ? h('div', {text: 'busiest subtask busy ' + busy(m) + ', back-pressured ' + backPressure(m)}) : null,
      (n.inputs || []).map(i => h('div', {text: 'input ' + i.id + ' (' + i.ship_strategy + ')'}))]);
    svg.append(g);
  }
  return svg;
}

// watermark shows an event time as the time of day when it is one (after 2000), else as
// the milliseconds it is.
function watermark(wm) {
  if (wm === null || wm === undefined) return '—';
  return wm > Date.UTC(2000, 0, 1) ? fmt.time(wm) : wm.toLocaleString('en-US') + ' ms';
}

// subtasks lists every subtask with where it runs and its own metrics.
function subtasks(details) {
  const rows = [];
  for (const d of details) {
    for (const st of d.subtasks || []) {
      const m = st['metrics-timestamp'] > 0 ? st.metrics : null;
      const wm = m && m['current-input-watermark'];
      rows.push(h('tr', {dataset: {subtask: subtaskName(d, st), tm: st['taskmanager-id'] || ''}},
        h('td', {class: 'strong nowrap', text: subtaskName(d, st)}),
        h('td', {}, badge(st.status)),
        h('td', {class: 'mono', text: st['taskmanager-id'] || '—'}),
        h('td', {class: 'mono muted', text: st.endpoint || '—'}),
        h('td', {class: 'num', text: m ? fmt.rate(m['read-records-per-second']) : '—'}),
        h('td', {class: 'num', text: m ? fmt.rate(m['write-records-per-second']) : '—'}),
        h('td', {class: 'num', text: m ? Math.round(m['busy-time-ms-per-second'] / 10) + '%' : '—'}),
        h('td', {class: 'num'}, m ? h('span', {class: 'bp bp-' + backPressureLevel(m['backpressured-time-ms-per-second']),
          text: Math.round(m['backpressured-time-ms-per-second'] / 10) + '%'}) : '—'),
        h('td', {class: 'nowrap', text: watermark(wm), title: wm ? String(wm) : 'no watermark yet'}),
        h('td', {class: 'num', text: m ? fmt.bytes(m['state-size']) : '—'})));
    }
  }
  return rows.length ? table(['Subtask', 'Status', 'TaskManager', 'Node', '#In/s', '#Out/s', '#Busy', '#Back-pressure', 'Watermark', '#State'], rows, {class: 'subtasks'})
    : empty('No subtask is deployed.');
}

export default {
  id: 'graph',
  title: 'Job graph',
  mount(root) {
    box = h('div', {class: 'graph-box'});
    subtasksBox = h('div');
    lastKey = '';
    root.append(card('Job graph', h('p', {class: 'hint', text: 'Vertices left to right in data-flow order; edges show how records are shipped (HASH: by key, FORWARD: to the same subtask, REBALANCE: round robin).'}), box),
      card('Subtasks: what runs where', subtasksBox));
  },
  async refresh(ctx) {
    const [plan, req, details] = await Promise.all([get(jobPath(ctx.jid, '/plan')), get(jobPath(ctx.jid, '/resource-requirements')), vertexDetails(ctx)]);
    const metrics = aggregated(details);
    replace(subtasksBox, subtasks(details));
    const key = JSON.stringify([plan, req, ctx.job.vertices.map(v => v.status), [...metrics]]);
    if (key === lastKey) return;
    lastKey = key;
    replace(box, draw(plan.plan, ctx.job, req, metrics));
  },
};
