// Task metrics of each vertex from GET jobs/:jid/vertices/:vid ("aggregated": records in
// and out per second summed over the subtasks, the busiest subtask's busy and
// back-pressured time per second). A vertex none of whose subtasks reported yet has none.
import {get, jobPath} from './api.js';
import * as fmt from './format.js';

// vertexDetails reads every vertex of the job with its subtasks (where each runs, its
// metrics); a vertex the AM cannot answer for is left out.
export async function vertexDetails(ctx) {
  const all = await Promise.all(ctx.job.vertices.map(v =>
    get(jobPath(ctx.jid, '/vertices/' + encodeURIComponent(v.id))).catch(() => null)));
  return all.filter(d => d);
}

// aggregated maps vertex id -> aggregated metrics, for the vertices that have them.
export function aggregated(details) {
  const out = new Map();
  for (const d of details) {
    if (d.aggregated && d.aggregated['subtasks-reporting'] > 0) out.set(d.id, d.aggregated);
  }
  return out;
}

// vertexMetrics is aggregated(vertexDetails(ctx)).
export async function vertexMetrics(ctx) {
  return aggregated(await vertexDetails(ctx));
}

// subtaskName is "cars#0", Flink's way of naming a subtask.
export const subtaskName = (d, st) => d.name + '#' + st.subtask;

// Flink's back-pressure levels: back-pressured at most 10% of the time is ok, at most 50% low.
export function backPressureLevel(msPerSecond) {
  const ratio = msPerSecond / 1000;
  return ratio <= 0.10 ? 'ok' : ratio <= 0.50 ? 'low' : 'high';
}

export const inRate = m => m ? fmt.rate(m['read-records-per-second']) : '—';
export const outRate = m => m ? fmt.rate(m['write-records-per-second']) : '—';
export const busy = m => m ? Math.round(m['max-busy-time-ms-per-second'] / 10) + '%' : '—';
export const backPressure = m => m ? Math.round(m['max-backpressured-time-ms-per-second'] / 10) + '% ' +
  backPressureLevel(m['max-backpressured-time-ms-per-second']) : '—';
