/**
 * Between the standard `fetch` types (Request, Response) and the agent's
 * `fetch` method, whose bodies travel as UTF-8 text or base64 in JSON.
 */

/** The agent's timeoutSeconds is at most this (schema/openrpc.json). */
const MAX_AGENT_SECONDS = 600;
/**
 * How much longer than the agent's own limit the client waits, so that the
 * agent's requestFailed (which names the cause) arrives before the client's
 * bare timeout.
 */
export const CLIENT_GRACE_MS = 2_000;
/** Statuses whose Response must have a null body (Fetch standard). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A call's `timeout` (ms, Infinity for none) as the agent's timeoutSeconds. */
export function agentSeconds(timeoutMs) {
  return Number.isFinite(timeoutMs) ? Math.min(timeoutMs / 1000, MAX_AGENT_SECONDS) : MAX_AGENT_SECONDS;
}

/**
 * The body as the agent takes it: `{body}` when the bytes are UTF-8 (kept
 * byte for byte, a BOM included), else `{bodyBase64}`; `{}` for none.
 */
export function encodeBody(bytes) {
  if (!bytes) return {};
  try {
    return { body: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
  } catch {
    return { bodyBase64: Buffer.from(bytes).toString('base64') };
  }
}

/** The agent's `request` param for a standard Request (its body already read as `bytes`). */
export function fetchRequest(request, bytes) {
  const headers = Object.fromEntries(request.headers);
  return {
    method: request.method,
    url: request.url,
    headers: Object.keys(headers).length ? headers : undefined,
    ...encodeBody(bytes),
  };
}

/**
 * A standard Response for the agent's FetchResult. The body is given as bytes
 * so that Response adds no content-type of its own. `url` is the request's
 * (the agent does not say where a same-origin redirect led); `authAgent`
 * says whether the agent signed the request, whether it retried after a 401,
 * and (`login`) what `login({resource})` would learn when no provider covered it.
 */
export function toResponse(result, url) {
  const bytes = result.bodyBase64 !== undefined
    ? Buffer.from(result.bodyBase64, 'base64')
    : Buffer.from(result.body ?? '', 'utf8');
  const body = NULL_BODY_STATUSES.has(result.status) ? null : bytes;
  const response = new Response(body, { status: result.status, headers: result.headers });
  const authAgent = Object.freeze({
    provider: result.provider ?? null, signed: result.signed, retried: result.retried, login: result.login ?? null,
  });
  return Object.defineProperties(response, {
    url: { value: url, enumerable: true },
    authAgent: { value: authAgent, enumerable: true },
  });
}
