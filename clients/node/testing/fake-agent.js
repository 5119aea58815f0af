/**
 * A stand-in agent for what the real one cannot be made to do on demand: it
 * answers every request with {} after sending notifications this client does
 * not know, including one named "error", which an EventEmitter would throw for.
 */
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.id === undefined) {
    if (request.method === 'exit') process.exit(0);
    continue;
  }
  send({ method: 'loginPrompt', params: { provider: 'corp', url: 'https://sso.example.com/device' } });
  send({ method: 'error', params: { what: 'not an EventEmitter error' } });
  send({ id: request.id, result: request.method === 'shutdown' ? null : {} });
}
