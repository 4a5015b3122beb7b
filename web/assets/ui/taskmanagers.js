// TaskManagers grouped by node: slots used and free, the last heartbeat, blocked nodes.
import {get} from './api.js';
import {h, replace, card, table, empty} from './dom.js';
import * as fmt from './format.js';
import {vertexDetails, subtaskName} from './metrics.js';

let box;

function slotBar(used, total) {
  const cells = [];
  for (let i = 0; i < total; i++) cells.push(h('span', {class: 'slot ' + (i < used ? 'used' : 'free')}));
  return h('span', {class: 'slots', title: used + ' of ' + total + ' slots in use'}, cells, h('span', {class: 'slot-text', text: used + ' / ' + total}));
}

export default {
  id: 'taskmanagers',
  title: 'TaskManagers',
  mount(root) {
    box = h('div');
    root.append(box);
  },
  async refresh(ctx) {
    const [{taskmanagers: tms}, blocked, details] = await Promise.all([get('taskmanagers'), get('blocklist'), vertexDetails(ctx)]);
    const running = new Map(); // TaskManager id -> the subtasks it runs
    for (const d of details) {
      for (const st of d.subtasks || []) {
        const tm = st['taskmanager-id'];
        if (!tm) continue;
        if (!running.has(tm)) running.set(tm, []);
        running.get(tm).push(subtaskName(d, st));
      }
    }
    const nodes = new Map();
    for (const tm of tms) {
      if (!nodes.has(tm.node)) nodes.set(tm.node, []);
      nodes.get(tm.node).push(tm);
    }
    for (const id of Object.keys(blocked)) if (!nodes.has(id)) nodes.set(id, []);
    const total = tms.reduce((a, t) => a + t.slotsNumber, 0), free = tms.reduce((a, t) => a + t.freeSlots, 0);
    const cards = [...nodes.keys()].sort().map(node => {
      const list = nodes.get(node).sort((a, b) => a.id.localeCompare(b.id, undefined, {numeric: true}));
      const b = blocked[node];
      const head = h('div', {class: 'node-head'}, h('h2', {text: node}),
        b ? h('span', {class: 'badge state-blocked', text: b.action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' ? 'BLOCKED · EVACUATED' : 'BLOCKED'}) : null,
        h('span', {class: 'muted', text: list.length + (list.length === 1 ? ' TaskManager' : ' TaskManagers')}),
        b ? h('span', {class: 'muted', text: 'cause: ' + b.cause}) : null);
      const rows = list.map(tm => {
        const hb = tm.timeSinceLastHeartbeat;
        return h('tr', {dataset: {tm: tm.id}},
          h('td', {class: 'strong mono', text: tm.id}),
          h('td', {}, slotBar(tm.slotsNumber - tm.freeSlots, tm.slotsNumber)),
          h('td', {class: 'subtask-list', text: (running.get(tm.id) || []).join(', ') || '—'}),
          h('td', {class: 'num ' + (hb > 10000 ? 'warn' : ''), text: hb < 0 ? 'none yet' : fmt.ago(hb)}),
          h('td', {class: tm.blocked ? 'is-blocked' : null, text: tm.blocked ? 'yes' : 'no'}),
          h('td', {text: fmt.dateTime(tm.registered)}),
          h('td', {class: 'mono muted', text: tm.dataAddress || '—'}));
      });
      return h('section', {class: 'card node' + (b ? ' is-blocked' : ''), dataset: {node}}, head,
        rows.length ? table(['TaskManager', 'Slots used', 'Runs', '#Last heartbeat', 'Blocked', 'Registered', 'Data address'], rows) : empty('No TaskManager on this node.'));
    });
    replace(box,
      h('div', {class: 'stats'},
        h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: 'Nodes'}), h('div', {class: 'stat-value', text: nodes.size})),
        h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: 'TaskManagers'}), h('div', {class: 'stat-value', text: tms.length})),
        h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: 'Slots used'}), h('div', {class: 'stat-value', text: (total - free) + ' / ' + total})),
        h('div', {class: 'stat'}, h('div', {class: 'stat-label', text: 'Blocked nodes'}), h('div', {class: 'stat-value', text: Object.keys(blocked).length}))),
      cards.length ? cards : card('', empty('No TaskManager has registered.')));
  },
};
