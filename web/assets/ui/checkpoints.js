// Checkpoints: counts, the latest ones, a chart of duration and size per checkpoint, and
// the history with every failure's message.
import {get, jobPath} from './api.js';
import {h, s, replace, card, table, empty, badge, hover} from './dom.js';
import * as fmt from './format.js';

let statsBox, chartBox, tableBox, configBox;
// seen keeps the checkpoints of earlier refreshes: the AM's history holds only the latest
// few, the chart shows up to keep of them.
const seen = new Map();
const keep = 120;

function remember(history) {
  for (const e of history) seen.set(e.id, e);
  const ids = [...seen.keys()].sort((a, b) => a - b);
  for (const id of ids.slice(0, Math.max(0, ids.length - keep))) seen.delete(id);
  return [...seen.values()];
}

function stat(label, value, sub) {
  return h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: label}), h('div', {class: 'stat-value', text: value}),
    h('div', {class: 'stat-sub', text: sub || ''}));
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so that quarters of it are round.
function niceCeil(v) {
  const pow = Math.pow(10, Math.floor(Math.log10(v)));
  return [1, 2, 2.5, 5, 10].map(m => m * pow).find(n => n >= v);
}

// niceBytes rounds v up the same way in the unit fmt.bytes shows it in.
function niceBytes(v) {
  let unit = 1;
  while (v / unit >= 1024 && unit < Math.pow(1024, 4)) unit *= 1024;
  return niceCeil(v / unit) * unit;
}

// kind is an entry's type, CHECKPOINT or SAVEPOINT; kindLabel adds a savepoint's format.
function kind(e) {
  return e.checkpoint_type || (e.is_savepoint ? 'SAVEPOINT' : 'CHECKPOINT');
}

function kindLabel(e) {
  return kind(e) === 'SAVEPOINT' && e.savepointFormat ? 'SAVEPOINT · ' + e.savepointFormat : kind(e);
}

function chart(width, history) {
  const list = [...history].sort((a, b) => a.id - b.id);
  const W = Math.max(width, 480), H = 260, ML = 56, MR = 64, MT = 20, MB = 34;
  const pw = W - ML - MR, ph = H - MT - MB;
  const svg = s('svg', {viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'ckpt-chart', role: 'img', 'aria-label': 'checkpoint durations and sizes'});
  if (!list.length) return svg;
  const maxD = niceCeil(Math.max(1, ...list.map(c => c.end_to_end_duration)));
  const maxS = niceBytes(Math.max(1, ...list.map(c => c.state_size)));
  const bw = pw / list.length;
  const yD = d => MT + ph - d / maxD * ph, yS = v => MT + ph - v / maxS * ph;
  for (let i = 0; i <= 4; i++) {
    const v = maxD * i / 4;
    svg.append(s('line', {x1: ML, x2: ML + pw, y1: yD(v), y2: yD(v), class: i ? 'grid' : 'axis'}));
    svg.append(s('text', {x: ML - 8, y: yD(v) + 4, 'text-anchor': 'end', class: 'tick', text: fmt.duration(v)}));
    svg.append(s('text', {x: ML + pw + 8, y: yS(maxS * i / 4) + 4, class: 'tick size-tick', text: fmt.bytes(maxS * i / 4)}));
  }
  let line = '';
  list.forEach((c, i) => {
    const x = ML + i * bw;
    const failed = c.status === 'FAILED';
    const d = failed ? maxD * 0.04 : c.end_to_end_duration;
    const bar = s('rect', {x: x + bw * 0.15, y: yD(d), width: Math.max(1, bw * 0.7), height: MT + ph - yD(d),
      class: 'bar ' + c.status.toLowerCase(), dataset: {checkpoint: c.id}});
    hover(bar, () => [h('b', {text: kindLabel(c).toLowerCase() + ' ' + c.id + ' · ' + c.status}), h('div', {text: 'triggered ' + fmt.dateTime(c.trigger_timestamp)}),
      h('div', {text: 'took ' + fmt.duration(c.end_to_end_duration) + ', state ' + fmt.bytes(c.state_size)}),
      h('div', {text: c.num_acknowledged_subtasks + ' of ' + c.num_subtasks + ' subtasks acknowledged · attempt ' + c.attempt}),
      c.failure_message ? h('div', {class: 'error-text', text: c.failure_message}) : null]);
    svg.append(bar);
    if (!failed) line += (line ? ' L' : 'M') + (x + bw / 2) + ',' + yS(c.state_size);
  });
  if (line) svg.append(s('path', {d: line, class: 'size-line'}));
  const step = Math.max(1, Math.ceil(list.length / Math.floor(pw / 48)));
  list.forEach((c, i) => {
    if (i % step === 0) svg.append(s('text', {x: ML + i * bw + bw / 2, y: MT + ph + 18, 'text-anchor': 'middle', class: 'tick', text: c.id}));
  });
  return svg;
}

export default {
  id: 'checkpoints',
  title: 'Checkpoints',
  mount(root) {
    statsBox = h('div', {class: 'stats'});
    chartBox = h('div', {class: 'chart-box'});
    tableBox = h('div');
    configBox = h('div');
    root.append(statsBox,
      card('Duration and size', h('p', {class: 'hint', text: 'Bars: time from trigger to completion (red: failed). Line: size of the state (right axis). The page keeps the checkpoints it has seen since it was opened.'}), chartBox),
      card('Recent checkpoints', tableBox), card('Configuration', configBox));
  },
  async refresh(ctx) {
    const [ck, cfg] = await Promise.all([get(jobPath(ctx.jid, '/checkpoints')), get(jobPath(ctx.jid, '/checkpoints/config'))]);
    const c = ck.counts || {}, last = ck.latest && ck.latest.completed, failed = ck.latest && ck.latest.failed, restored = ck.latest && ck.latest.restored;
    replace(statsBox,
      stat('Completed', c.completed, c.in_progress ? c.in_progress + ' in progress' : ''),
      stat('Failed', c.failed, failed ? 'last: #' + failed.id + ' ' + fmt.ago(ctx.now() - (failed.failure_timestamp || failed.trigger_timestamp)) : ''),
      stat('Latest completed', last ? '#' + last.id : '—', last ? fmt.ago(ctx.now() - last.latest_ack_timestamp) + ' · ' + fmt.duration(last.end_to_end_duration) + ' · ' + fmt.bytes(last.state_size) : ''),
      stat('Restored from', restored ? '#' + restored.id : '—', restored ? (restored.is_savepoint ? 'savepoint ' : '') + fmt.dateTime(restored.restore_timestamp) : 'not restored'));
    const history = ck.history || [];
    const known = remember(history);
    replace(chartBox, known.length ? chart(chartBox.clientWidth || 960, known) : empty(cfg.checkpoints_enabled ? 'No checkpoint yet.' : 'Checkpointing is off: set state.checkpoints.dir.'));
    // The newest first, savepoints included, kept across refreshes like the chart's.
    const recent = [...known].sort((a, b) => b.id - a.id).slice(0, Math.max(history.length, 20));
    replace(tableBox, recent.length ? table(['##', 'Type', 'Status', '#Attempt', 'Triggered', '#Duration', '#State size', '#Acknowledged', 'Failure'],
      recent.map(e => h('tr', {class: e.status === 'FAILED' ? 'failed' : null, dataset: {checkpoint: e.id, type: kind(e)}},
        h('td', {class: 'num', text: e.id}), h('td', {class: 'nowrap ckpt-type', text: kindLabel(e)}), h('td', {}, badge(e.status)), h('td', {class: 'num', text: e.attempt}),
        h('td', {class: 'nowrap', text: fmt.time(e.trigger_timestamp), title: fmt.dateTime(e.trigger_timestamp)}), h('td', {class: 'num', text: fmt.duration(e.end_to_end_duration)}),
        h('td', {class: 'num', text: fmt.bytes(e.state_size)}), h('td', {class: 'num', text: e.num_acknowledged_subtasks + ' / ' + e.num_subtasks}),
        h('td', {class: 'error-text', text: e.failure_message || ''})))) : empty('No checkpoint yet.'));
    replace(configBox, h('dl', {class: 'facts-list'},
      [['enabled', cfg.checkpoints_enabled ? 'yes' : 'no'], ['interval', cfg.interval > 0 ? fmt.duration(cfg.interval) : 'off'],
        ['timeout', fmt.duration(cfg.timeout)], ['min pause', fmt.duration(cfg.min_pause)], ['retained', cfg.num_retained],
        ['storage', cfg.checkpoint_storage || '—'], ['mode', cfg.mode]].map(([k, v]) => [h('dt', {text: k}), h('dd', {text: v})])));
  },
};
