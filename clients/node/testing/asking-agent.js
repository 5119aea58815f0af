/**
 * A stand-in agent that asks the host, as the real one does with
 * `presentLogin`: for each `login` it sends the request its `provider` names
 * (`presentLogin`, or any other name), waits for the host's answer and answers
 * the login with it, `{answer: <the host's message>}`; `initialize` is answered
 * with the params it got, so tests see the capability the client declared.
 */
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const PRESENT = {
  provider: 'corp', displayName: 'Corp', kind: 'browser', url: 'https://sso.example.com/authorize?state=s', expiresAt: '2030-01-01T00:00:00Z',
};

let asked = 0;
const waiting = new Map();
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  const { id, method, params } = message;
  if (method === undefined && waiting.has(id)) {
    const loginId = waiting.get(id);
    waiting.delete(id);
    send({ id: loginId, result: { answer: message } });
    continue;
  }
  if (id === undefined) {
    if (method === 'exit') process.exit(0);
    continue;
  }
  if (method === 'login') {
    const agentId = `agent-${++asked}`;
    waiting.set(agentId, id);
    send({ id: agentId, method: params.provider, params: { ...PRESENT, requestId: id } });
    continue;
  }
  send({ id, result: method === 'initialize' ? { protocolVersion: '1', echo: params } : method === 'shutdown' ? null : {} });
}
