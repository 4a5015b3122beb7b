// Overview: the job's state, TaskManagers and slots, the last checkpoint and rescale, and
// each vertex with its parallelism, bounds and rate.
import {get, jobPath} from './api.js';
import {h, replace, card, table, badge} from './dom.js';
import * as fmt from './format.js';
import {vertexMetrics, inRate, outRate, busy, backPressure, backPressureLevel} from './metrics.js';

let el = {};

function stat(label, id) {
  return h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: label}), h('div', {class: 'stat-value', id}),
    h('div', {class: 'stat-sub', id: id + '-sub'}));
}

function set(id, value, sub) {
  document.getElementById(id).replaceChildren(value instanceof Node ? value : document.createTextNode(value));
  document.getElementById(id + '-sub').textContent = sub || '';
}

export default {
  id: 'overview',
  title: 'Overview',
  mount(root) {
    el.vertices = h('div');
    root.append(
      h('div', {class: 'stats'},
        stat('Job state', 'ov-state'), stat('Uptime', 'ov-uptime'), stat('TaskManagers', 'ov-tms'),
        stat('Slots in use', 'ov-slots'), stat('Last checkpoint', 'ov-ckpt'), stat('Rescales', 'ov-rescales')),
      card('Vertices', el.vertices));
  },
  async refresh(ctx) {
    const job = ctx.job;
    const [ov, ck, req, rs, metrics] = await Promise.all([get('overview'), get(jobPath(ctx.jid, '/checkpoints')),
      get(jobPath(ctx.jid, '/resource-requirements')), get(jobPath(ctx.jid, '/rescales')), vertexMetrics(ctx)]);
    const running = job.timestamps && job.timestamps.RUNNING;
    set('ov-state', badge(job.state), 'attempt ' + job.attempt + ' · started ' + fmt.dateTime(job['start-time']));
    set('ov-uptime', job.state === 'RUNNING' && running ? fmt.duration(job.now - running) : '—',
      'running since ' + fmt.time(running) + ' · job age ' + fmt.duration(job.duration));
    set('ov-tms', String(ov.taskmanagers), ov['taskmanagers-blocked'] ? ov['taskmanagers-blocked'] + ' on blocked nodes' : 'none blocked');
    const used = ov['slots-total'] - ov['slots-available'] - ov['slots-free-and-blocked'];
    set('ov-slots', used + ' / ' + ov['slots-total'], ov['slots-available'] + ' free' +
      (ov['slots-free-and-blocked'] ? ', ' + ov['slots-free-and-blocked'] + ' free but blocked' : ''));
    const last = ck.latest && ck.latest.completed;
    if (last) {
      set('ov-ckpt', '#' + last.id, fmt.ago(ctx.now() - last.latest_ack_timestamp) + ' · ' + fmt.duration(last.end_to_end_duration) +
        ' · ' + fmt.bytes(last.state_size) + (ck.counts.failed ? ' · ' + ck.counts.failed + ' failed' : ''));
    } else {
      set('ov-ckpt', 'none yet', ck.counts && ck.counts.failed ? ck.counts.failed + ' failed' : '');
    }
    const hist = rs.rescales || [];
    const lastRescale = rs.current || hist[hist.length - 1];
    set('ov-rescales', String(hist.filter(r => r.outcome === 'COMPLETED' && r.trigger !== 'INITIAL_SCHEDULE').length),
      lastRescale ? (rs.current ? 'in progress: ' : 'last: ') + fmt.trigger(lastRescale.trigger) + ' ' + fmt.ago(ctx.now() - lastRescale.start) : '');

    const rows = job.vertices.map(v => {
      const m = metrics.get(v.id);
      const b = req[v.id] && req[v.id].parallelism;
      const tasks = Object.entries(v.tasks || {}).filter(([, n]) => n > 0).map(([st, n]) => n + ' ' + st.toLowerCase()).join(', ');
      return h('tr', {dataset: {vertex: v.id}},
        h('td', {}, h('div', {class: 'strong', text: v.name}), v.name !== v.id ? h('div', {class: 'muted mono', text: v.id}) : null),
        h('td', {}, badge(v.status)),
        h('td', {class: 'num big', text: v.parallelism}),
        h('td', {class: 'num', text: b ? b.lowerBound + ' – ' + b.upperBound : '—'}),
        h('td', {class: 'num', text: v.maxParallelism}),
        h('td', {class: 'num in-rate', text: inRate(m), title: 'records read per second, all subtasks'}),
        h('td', {class: 'num out-rate', text: outRate(m), title: 'records written per second, all subtasks'}),
        h('td', {class: 'num', text: busy(m), title: 'busy time of the busiest subtask'}),
        h('td', {class: 'num'}, m ? h('span', {class: 'bp bp-' + backPressureLevel(m['max-backpressured-time-ms-per-second']), text: backPressure(m)}) : '—'),
        h('td', {class: 'muted', text: tasks || '—'}));
    });
    replace(el.vertices, table(['Vertex', 'Status', '#Parallelism', '#Bounds', '#Max', '#In/s', '#Out/s', '#Busy', '#Back-pressure', 'Subtasks'], rows, {class: 'vertices'}),
      metrics.size ? null : h('p', {class: 'hint', text: 'Rates appear once the TaskManagers have sent their first task metrics (every second).'}));
  },
};
