// The REST API, read and changed with relative URLs only: the page works wherever the
// AM's REST port is reachable, directly or behind YARN's web proxy.

const tokenKey = 'tide.rest-token';

// ApiError carries the HTTP status and Flink's {"errors": [...]} messages.
export class ApiError extends Error {
  constructor(method, path, status, messages) {
    super(method + ' ' + path + ': ' + status + (messages.length ? ': ' + messages.join('; ') : ''));
    this.status = status;
    this.messages = messages;
  }
}

async function errorOf(method, path, resp) {
  let messages = [];
  try {
    const body = await resp.json();
    if (Array.isArray(body.errors)) messages = body.errors.map(String);
  } catch (_) {
    // not Flink's error shape: the status says enough
  }
  return new ApiError(method, path, resp.status, messages);
}

// get reads JSON from path ("jobs/overview", no leading slash).
export async function get(path) {
  const resp = await fetch(path, {cache: 'no-store', headers: {Accept: 'application/json'}});
  if (!resp.ok) throw await errorOf('GET', path, resp);
  return resp.json();
}

// send changes something; it carries the bearer token when one was entered.
export async function send(method, path, body) {
  const headers = {Accept: 'application/json'};
  const token = getToken();
  if (token) headers.Authorization = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const resp = await fetch(path, {method, headers, cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body)});
  if (!resp.ok) throw await errorOf(method, path, resp);
  const text = await resp.text();
  return text ? JSON.parse(text) : {};
}

// The token (rest.auth.token of the AM) lives in this tab's session storage only.
export function getToken() {
  try { return sessionStorage.getItem(tokenKey) || ''; } catch (_) { return ''; }
}

export function setToken(t) {
  try {
    if (t) sessionStorage.setItem(tokenKey, t); else sessionStorage.removeItem(tokenKey);
  } catch (_) {
    // storage disabled: the token lasts for this request only
  }
}

export const jobPath = (jid, rest) => 'jobs/' + encodeURIComponent(jid) + (rest || '');
