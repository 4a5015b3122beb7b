// Exceptions: the job's failure history, newest first.
import {get, jobPath} from './api.js';
import {h, replace, card, empty} from './dom.js';
import * as fmt from './format.js';

let box;

export default {
  id: 'exceptions',
  title: 'Exceptions',
  mount(root) {
    box = h('div');
    root.append(card('Exception history', box));
  },
  async refresh(ctx) {
    const {exceptionHistory: x} = await get(jobPath(ctx.jid, '/exceptions?maxExceptions=50'));
    if (!x.entries.length) {
      replace(box, empty('No exception: the job has not failed.'));
      return;
    }
    const open = new Set([...box.querySelectorAll('details[open]')].map(d => d.dataset.key));
    replace(box, x.entries.map(e => {
      const key = e.timestamp + '/' + e.attempt + '/' + (e.taskName || '');
      const first = (e.stacktrace || '').split('\n')[0];
      return h('details', {class: 'exception', dataset: {key}, open: open.has(key)},
        h('summary', {},
          h('span', {class: 'exc-time', text: fmt.dateTime(e.timestamp)}),
          h('span', {class: 'exc-name', text: e.exceptionName}),
          e.unrecoverable ? h('span', {class: 'badge state-failed', text: 'UNRECOVERABLE'}) : null,
          h('span', {class: 'exc-msg', text: first})),
        h('dl', {class: 'facts-list'},
          [['task', e.taskName || '— (global)'], ['TaskManager', e.taskManagerId || '—'], ['attempt', e.attempt]]
            .map(([k, v]) => [h('dt', {text: k}), h('dd', {text: v})])),
        h('pre', {text: e.stacktrace}));
    }), x.truncated ? h('p', {class: 'muted', text: 'Older exceptions are left out.'}) : null);
  },
};
