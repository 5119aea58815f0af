/**
 * A stand-in agent that answers each request with the params it got (`echo`),
 * and `login`, `fetch` and `forget` with results shaped like the real agent's
 * for an API it learns, to check what the client sends for `login({resource})`,
 * `fetch(url, {login: 'ifNeeded'})` and `forget` without a server to learn from.
 */
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const HINT = { resource: 'https://api.example.com/mcp', authorizationServer: 'https://auth.example.com', scopes: ['mcp'] };

for await (const line of createInterface({ input: process.stdin })) {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) {
    if (method === 'exit') process.exit(0);
    continue;
  }
  const echo = { method, params: params ?? null };
  let result = { echo };
  if (method === 'login') result = { provider: 'api.example.com', account: '1', user: { sub: 'alice' }, expiresAt: null, echo };
  if (method === 'fetch') {
    // The echo goes in the body, as a fetch result has no place for it; the hint only without `login`.
    result = { status: 401, headers: { 'content-type': 'application/json' }, body: JSON.stringify(echo), signed: false, retried: false };
    if (!params?.login) result.login = HINT;
  }
  if (method === 'forget') result = { forgotten: true, revoked: true, echo };
  if (method === 'shutdown') result = null;
  send({ id, result });
}
