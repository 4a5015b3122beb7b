// Blocklist (FLIP-224): the blocked nodes, a form to block one (timeout, cause, evacuate)
// and a button to unblock each. Changes carry the bearer token when the AM needs one.
import {get, send, getToken, setToken, ApiError} from './api.js';
import {h, replace, card, table, empty} from './dom.js';
import * as fmt from './format.js';

let listBox, msgBox, form, tokenRow, nodesList, ctxRef;

// The rows of the blocked nodes by node id, kept from one refresh to the next: a refresh
// only rewrites the text that changed, so the Remove button a person is pressing (or has
// focused) is not swapped for a new one under the pointer between mousedown and mouseup.
const rows = new Map();
let tbody = null; // of the table in listBox, null while no node is blocked

const units = {ms: 1, s: 1000, sec: 1000, m: 60000, min: 60000, h: 3600000, d: 86400000};

// parseTimeout reads "10m", "1h 30m", "45 s"; "" is permanent (0).
export function parseTimeout(text) {
  const t = text.trim().toLowerCase();
  if (!t) return 0;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*(ms|sec|s|min|m|h|d)\s*/gy;
  let m, end = 0;
  while ((m = re.exec(t)) !== null) {
    total += parseFloat(m[1]) * units[m[2]];
    end = re.lastIndex;
  }
  if (end !== t.length || total <= 0) throw new Error('timeout "' + text + '": expected a duration such as 10m, 2h or 1d, or nothing for a permanent blocking');
  return Math.round(total);
}

function message(kind, ...lines) {
  replace(msgBox, lines.length ? h('div', {class: 'msg ' + kind, role: 'status'}, lines) : null);
}

function showToken(reason) {
  tokenRow.hidden = false;
  if (reason) message('error', reason);
  form.elements.token.focus();
}

async function change(method, path, body, done) {
  const token = form.elements.token.value.trim();
  if (token) setToken(token);
  try {
    const res = await send(method, path, body);
    done(res);
    ctxRef.refresh();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      setToken('');
      showToken(token ? 'The AM refused this token: check rest.auth.token (or rest.auth.token-file) of the AM.'
        : 'The AM needs a bearer token for changes: enter its rest.auth.token and try again.');
      return;
    }
    message('error', err instanceof ApiError && err.messages.length ? err.messages.map(m => h('div', {text: m})) : err.message);
  }
}

async function submit(ev) {
  ev.preventDefault();
  const f = form.elements;
  const node = f.node.value.trim(), cause = f.cause.value.trim();
  let timeout;
  try {
    if (!node) throw new Error('enter the node to block');
    if (!cause) throw new Error('enter a cause: it is shown to everyone who wonders why the node is blocked');
    timeout = parseTimeout(f.timeout.value);
  } catch (err) {
    message('error', err.message);
    return;
  }
  const body = {action: f.evacuate.checked ? 'MARK_BLOCKED_AND_EVACUATE_TASKS' : 'MARK_BLOCKED', cause};
  if (timeout > 0) body.endTimestamp = String(ctxRef.now() + timeout);
  if (f.merge.checked) body.allowMerge = true;
  await change('PUT', 'blocklist/nodes/' + encodeURIComponent(node), body, () => {
    message('ok', 'Blocked ' + node + (timeout ? ' for ' + fmt.duration(timeout) : ' permanently') + (f.evacuate.checked ? '; its tasks are moving away.' : '.'));
    f.node.value = '';
    f.cause.value = '';
  });
}

const permanent = '9223372036854775807';

function newRow(id) {
  const cells = Array.from({length: 6}, (_, i) => h('td', {class: i === 0 ? 'strong mono' : i === 5 ? 'mono' : null}));
  const remove = h('button', {type: 'button', class: 'danger small', dataset: {unblock: id}, text: 'Remove',
    onclick: () => change('DELETE', 'blocklist/nodes/' + encodeURIComponent(id), undefined, () => message('ok', 'Unblocked ' + id + '.'))});
  return {tr: h('tr', {dataset: {node: id}}, cells, h('td', {class: 'right'}, remove)), cells};
}

function fillRow(row, b, ctx) {
  const end = b.endTimestamp === permanent ? 0 : Number(b.endTimestamp);
  const texts = [
    row.tr.dataset.node,
    b.action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' ? 'blocked, tasks evacuated' : 'blocked',
    fmt.dateTime(Number(b.startTimestamp)),
    end ? fmt.dateTime(end) + ' (in ' + fmt.duration(end - ctx.now()) + ')' : 'until removed',
    b.cause,
    (b.taskManagers || []).join(', ') || '—',
  ];
  texts.forEach((text, i) => {
    if (row.cells[i].textContent !== text) row.cells[i].textContent = text;
  });
}

function field(label, input, hint) {
  return h('label', {class: 'field'}, h('span', {class: 'field-label', text: label}), input, hint ? h('span', {class: 'field-hint', text: hint}) : null);
}

export default {
  id: 'blocklist',
  title: 'Blocklist',
  mount(root, ctx) {
    ctxRef = ctx;
    rows.clear();
    tbody = null;
    listBox = h('div');
    msgBox = h('div');
    nodesList = h('datalist', {id: 'known-nodes'});
    tokenRow = field('Bearer token', h('input', {name: 'token', type: 'password', autocomplete: 'off', value: getToken(), placeholder: 'rest.auth.token of the AM'}),
      'kept in this browser tab only');
    tokenRow.hidden = !getToken();
    form = h('form', {id: 'blocklist-form', class: 'form', onsubmit: submit, novalidate: true},
      h('div', {class: 'form-row'},
        field('Node', h('input', {name: 'node', list: 'known-nodes', placeholder: 'node id, e.g. node-3', autocomplete: 'off'})),
        field('Cause', h('input', {name: 'cause', placeholder: 'why, e.g. bad disk', autocomplete: 'off'})),
        field('Timeout', h('input', {name: 'timeout', placeholder: '10m, 2h, 1d — empty: until removed', autocomplete: 'off'}))),
      h('div', {class: 'form-row checks'},
        h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'evacuate'}), 'Evacuate: move its tasks away now'),
        h('label', {class: 'check'}, h('input', {type: 'checkbox', name: 'merge'}), 'Merge into an existing blocking of the node')),
      h('div', {class: 'form-row'}, tokenRow),
      h('div', {class: 'actions'}, h('button', {type: 'submit', class: 'primary', id: 'block-node', text: 'Block node'})),
      nodesList);
    root.append(card('Blocked nodes', listBox), card('Block a node', h('p', {class: 'hint', text: 'A blocked node gets no new slots; with evacuate, its running tasks move to other nodes at once (the job rescales).'}), form, msgBox));
  },
  async refresh(ctx) {
    const [blocked, {taskmanagers: tms}] = await Promise.all([get('blocklist'), get('taskmanagers')]);
    const known = [...new Set(tms.map(t => t.node))].sort();
    if (known.join('\n') !== [...nodesList.options].map(o => o.value).join('\n')) {
      replace(nodesList, known.map(n => h('option', {value: n}))); // only when changed: it closes an open suggestion list
    }
    const ids = Object.keys(blocked).sort();
    if (!ids.length) {
      rows.clear();
      tbody = null;
      replace(listBox, empty('No node is blocked.'));
      return;
    }
    if (!tbody) {
      const t = table(['Node', 'Action', 'Since', 'Until', 'Cause', 'TaskManagers', ''], [], {class: 'blocklist'});
      tbody = t.tBodies[0];
      replace(listBox, t);
    }
    for (const [id, row] of rows) {
      if (!Object.hasOwn(blocked, id)) {
        row.tr.remove();
        rows.delete(id);
      }
    }
    ids.forEach((id, i) => {
      let row = rows.get(id);
      if (!row) {
        row = newRow(id);
        rows.set(id, row);
      }
      fillRow(row, blocked[id], ctx);
      if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
    });
  },
};
