// Element builders. Data from the REST API only ever becomes text (textContent), never
// markup, so a node id or an exception message cannot inject anything into the page.

const SVG = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// h('div', {class: 'x'}, child, 'text', [more]) builds an HTML element.
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s('rect', {x: 1}) builds an SVG element.
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

// replace puts children in place of el's content.
export function replace(el, ...children) {
  el.replaceChildren();
  build(el, {}, children);
  return el;
}

export function card(title, ...children) {
  return h('section', {class: 'card'}, title ? h('h2', {text: title}) : null, children);
}

// table builds a table; a header written '#Name' heads a numeric (right-aligned) column.
export function table(headers, rows, attrs) {
  return h('table', attrs || {},
    h('thead', {}, h('tr', {}, headers.map(t => t.startsWith('#') && t.length > 1 ? h('th', {class: 'num', text: t.slice(1)}) : h('th', {text: t})))),
    h('tbody', {}, rows));
}

export function empty(text) {
  return h('p', {class: 'empty', text});
}

// badge shows a state (RUNNING, FAILED, ...) in its color.
export function badge(state, extra) {
  const cls = 'state-' + String(state).toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('span', {class: 'badge ' + cls + (extra ? ' ' + extra : ''), text: state});
}

// tooltip shows lines near the pointer; hide removes it.
const tip = () => document.getElementById('tooltip');

export function showTooltip(ev, ...lines) {
  const t = tip();
  replace(t, lines);
  t.hidden = false;
  const pad = 14, r = t.getBoundingClientRect();
  let x = ev.clientX + pad, y = ev.clientY + pad;
  if (x + r.width > window.innerWidth - 8) x = ev.clientX - r.width - pad;
  if (y + r.height > window.innerHeight - 8) y = ev.clientY - r.height - pad;
  t.style.left = Math.max(8, x) + 'px';
  t.style.top = Math.max(8, y) + 'px';
}

export function hideTooltip() {
  tip().hidden = true;
}

// hover wires an element to the tooltip; lines() is evaluated on each move.
export function hover(el, lines) {
  el.addEventListener('mousemove', ev => showTooltip(ev, lines()));
  el.addEventListener('mouseleave', hideTooltip);
  return el;
}
