// Configuration: every key in force (live reloads included, secrets redacted by the AM),
// with a filter.
import {get} from './api.js';
import {h, replace, card, table, empty} from './dom.js';

let box, filter, entries = [];

function render() {
  const q = filter.value.trim().toLowerCase();
  const rows = entries.filter(e => !q || e.key.toLowerCase().includes(q) || String(e.value).toLowerCase().includes(q))
    .map(e => h('tr', {dataset: {key: e.key}}, h('td', {class: 'mono', text: e.key}), h('td', {class: 'mono', text: e.value})));
  replace(box, rows.length ? table(['Key', 'Value'], rows, {class: 'config'}) : empty('No key matches.'));
}

export default {
  id: 'config',
  title: 'Configuration',
  mount(root) {
    box = h('div');
    filter = h('input', {type: 'search', placeholder: 'filter keys and values', class: 'filter', oninput: render});
    root.append(card('Effective configuration', h('p', {class: 'hint', text: 'The configuration in force, live reloads of flink-conf.yaml included.'}), filter, box));
  },
  async refresh() {
    entries = await get('jobmanager/config');
    render();
  },
};
