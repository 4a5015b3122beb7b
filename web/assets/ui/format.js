// Formatting of durations, sizes and times for people.

export function duration(ms) {
  if (ms === undefined || ms === null || ms < 0) return '—';
  if (ms < 1000) return Math.round(ms) + ' ms';
  const sec = ms / 1000;
  if (sec < 60) return (sec < 10 ? sec.toFixed(1) : Math.round(sec)) + ' s';
  const m = Math.floor(sec / 60), s = Math.floor(sec % 60);
  if (m < 60) return m + 'm ' + String(s).padStart(2, '0') + 's';
  const hr = Math.floor(m / 60);
  if (hr < 48) return hr + 'h ' + String(m % 60).padStart(2, '0') + 'm';
  return Math.floor(hr / 24) + 'd ' + (hr % 24) + 'h';
}

export function bytes(n) {
  if (n === undefined || n === null || n < 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
}

const pad = n => String(n).padStart(2, '0');

export function time(ms) {
  if (!ms || ms < 0) return '—';
  const d = new Date(ms);
  return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
}

export function dateTime(ms) {
  if (!ms || ms < 0) return '—';
  const d = new Date(ms);
  return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + time(ms);
}

export function ago(ms) {
  if (ms === undefined || ms === null || ms < 0) return '—';
  return duration(ms) + ' ago';
}

export function rate(perSecond) {
  if (perSecond === undefined || perSecond === null || !isFinite(perSecond)) return '—';
  if (perSecond >= 1e6) return (perSecond / 1e6).toFixed(1) + 'M/s';
  if (perSecond >= 1e4) return (perSecond / 1e3).toFixed(1) + 'k/s';
  if (perSecond === 0) return '0/s';
  return (perSecond < 10 ? perSecond.toFixed(1) : Math.round(perSecond)) + '/s';
}

// Readable names of the rescale triggers.
const triggers = {
  INITIAL_SCHEDULE: 'initial schedule',
  NEW_RESOURCE_AVAILABLE: 'new resources',
  RESOURCE_LOST: 'resources lost',
  UPDATE_REQUIREMENT: 'requirements updated',
  RECOVERABLE_FAILOVER: 'failover',
  BLOCKLIST_EVACUATION: 'blocklist evacuation',
};

export function trigger(t) {
  return triggers[t] || String(t).toLowerCase().replaceAll('_', ' ');
}

// change is "cars 1→2, sink 1→2" for a rescale's vertices.
export function change(vertices) {
  return (vertices || []).map(v => v.vertex + ' ' + v.before + '→' + v.after).join(', ') || '—';
}
