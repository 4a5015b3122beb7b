// Records per second of each vertex, from the record counts in GET jobs/:jid (Flink's
// vertex "metrics": write-records, or read-records for a sink that writes none) between
// the last two refreshes. An AM that reports no counts yields an empty map.

let prev = null, last = null; // {at, counts: Map}

function countsOf(job) {
  const counts = new Map();
  for (const v of job.vertices || []) {
    const m = v.metrics;
    if (!m) continue;
    const n = typeof m['write-records'] === 'number' && m['write-records'] > 0 ? m['write-records'] : m['read-records'];
    if (typeof n === 'number') counts.set(v.id, n);
  }
  return counts;
}

export function rates(job) {
  if (!last || job.now > last.at) {
    prev = last;
    last = {at: job.now, counts: countsOf(job)};
  }
  const out = new Map();
  if (!prev) return out;
  for (const [id, n] of last.counts) {
    const before = prev.counts.get(id);
    if (before !== undefined && n >= before) out.set(id, (n - before) * 1000 / (last.at - prev.at));
  }
  return out;
}
