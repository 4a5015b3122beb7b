// The page: a header with the job's state, one tab per view, and a polling loop that
// refreshes the header and the visible tab.
import {get, ApiError} from './api.js';
import {h, replace, hideTooltip} from './dom.js';
import * as fmt from './format.js';
import overview from './overview.js';
import graph from './graph.js';
import rescales from './rescales.js';
import taskmanagers from './taskmanagers.js';
import checkpoints from './checkpoints.js';
import blocklist from './blocklist.js';
import exceptions from './exceptions.js';
import config from './config.js';

const pages = [overview, graph, rescales, taskmanagers, checkpoints, blocklist, exceptions, config];

// ctx is what every page reads: the job, its details, and the AM's clock.
const ctx = {
  jid: null,
  job: null,        // GET jobs/:jid
  clockOffset: 0,   // AM time - browser time, in ms
  now() { return Date.now() + this.clockOffset; },
  refresh: () => poll(),
};

let current = null;   // the page shown
let timer = null;
let interval = 3000;
let polling = false;
let again = false;    // a poll was asked for while one ran
let refreshes = 0;    // successful refreshes, in body[data-refreshes] for whoever watches the page

function pageFromHash() {
  const id = location.hash.replace(/^#\/?/, '') || 'overview';
  return pages.find(p => p.id === id) || overview;
}

function renderTabs() {
  const nav = document.getElementById('tabs');
  replace(nav, pages.map(p => h('a', {href: '#/' + p.id, id: 'tab-' + p.id,
    class: p === current ? 'active' : null, text: p.title})));
}

function show() {
  const next = pageFromHash();
  if (next === current) return;
  current = next;
  hideTooltip();
  renderTabs();
  const root = document.getElementById('page');
  root.replaceChildren();
  root.dataset.page = current.id;
  current.mount(root, ctx);
  document.title = current.title + ' · ' + (ctx.job ? ctx.job.name : 'tide');
  poll();
}

function renderHeader(job) {
  document.getElementById('job-name').textContent = job.name;
  const state = document.getElementById('job-state');
  state.textContent = job.state;
  state.className = 'badge state-' + job.state.toLowerCase();
  let up = '—';
  const since = job.timestamps && job.timestamps.RUNNING;
  if (job.state === 'RUNNING' && since) up = fmt.duration(job.now - since);
  document.getElementById('job-uptime').textContent = up;
  document.getElementById('job-uptime').title = 'RUNNING since ' + fmt.dateTime(since) + ', started ' + fmt.dateTime(job['start-time']);
  document.getElementById('job-attempt').textContent = job.attempt;
}

let downSince = 0;     // when the refreshes started failing, 0 while they work

// problem names what went wrong in a refresh: the AM (or YARN's proxy in front of it) did
// not answer, answered with an error, or the page itself failed.
function problem(err) {
  if (err instanceof ApiError) return [502, 503, 504].includes(err.status) ? 'AM unreachable' : 'AM answered ' + err.status;
  if (err instanceof TypeError && /fetch|network/i.test(err.message)) return 'AM unreachable';
  return 'page error';
}

function status(ok, text, detail) {
  const el = document.getElementById('refresh');
  el.className = 'refresh ' + (ok ? 'ok' : 'down');
  el.textContent = text;
  el.title = detail || 'The page reads the REST API every ' + interval / 1000 + ' s';
}

async function poll() {
  if (polling) { again = true; return; }
  polling = true;
  again = false;
  clearTimeout(timer);
  try {
    if (!ctx.jid) {
      const list = await get('jobs/overview');
      if (!list.jobs || !list.jobs.length) throw new Error('the AM serves no job');
      ctx.jid = list.jobs[0].jid;
    }
    const job = await get('jobs/' + encodeURIComponent(ctx.jid));
    ctx.clockOffset = job.now - Date.now();
    ctx.job = job;
    renderHeader(job);
    document.title = current.title + ' · ' + job.name;
    await current.refresh(ctx);
    downSince = 0;
    status(true, 'updated ' + fmt.time(Date.now()));
    document.body.classList.remove('stale');
    document.body.dataset.refreshes = String(++refreshes);
  } catch (err) {
    downSince = downSince || Date.now();
    status(false, problem(err) + ' since ' + fmt.time(downSince), err.message);
    if (problem(err) === 'page error') console.error(err);
    document.body.classList.add('stale'); // what the page shows is the last it knew
  } finally {
    polling = false;
    if (again) timer = setTimeout(poll, 0);
    else if (!document.hidden) timer = setTimeout(poll, interval);
  }
}

async function start() {
  const q = new URLSearchParams(location.search).get('refresh');
  try {
    const c = await get('config');
    if (c['refresh-interval'] > 0) interval = c['refresh-interval'];
  } catch (_) {
    // keep the default interval
  }
  if (q && Number(q) >= 250) interval = Number(q);
  window.addEventListener('hashchange', show);
  document.addEventListener('visibilitychange', () => { if (!document.hidden) poll(); });
  show();
}

start();
