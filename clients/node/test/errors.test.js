import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AgentDiedError, AuthAgentError } from '../index.js';

test('an application error takes reason and retryable from data', () => {
  const error = AuthAgentError.fromResponse({
    code: 1005,
    message: 'Corp is unavailable.',
    data: { reason: 'authServerUnavailable', retryable: true, provider: 'corp' },
  });
  assert.ok(error instanceof Error);
  assert.deepEqual(
    [error.code, error.reason, error.retryable, error.provider, error.message],
    [1005, 'authServerUnavailable', true, 'corp', 'Corp is unavailable.'],
  );
});

test('a standard error without data gets the table reason', () => {
  const error = AuthAgentError.fromResponse({ code: -32800, message: 'Request cancelled' });
  assert.deepEqual([error.code, error.reason, error.retryable, error.data], [-32800, 'requestCancelled', false, {}]);
});

test('a malformed error still gives an AuthAgentError', () => {
  const error = AuthAgentError.fromResponse({ code: 'x', data: [] });
  assert.deepEqual([error.code, error.reason, error.retryable], [null, 'unknownError', false]);
});

test('a died error names the signal and the last stderr line', () => {
  const error = new AgentDiedError(null, 'SIGKILL', 'starting\nfatal: out of memory\n');
  assert.ok(error instanceof AuthAgentError);
  assert.equal(error.reason, 'agentDied');
  assert.match(error.message, /SIGKILL.*fatal: out of memory/);
});

test('every application reason has its own exported subclass, which fromResponse gives', async () => {
  const exported = await import('../index.js');
  for (const [code, { reason, retryable }] of Object.entries(exported.ERRORS).filter(([c]) => Number(c) > 0)) {
    const ErrorClass = exported.ERROR_CLASSES[reason];
    assert.ok(ErrorClass, `no class for ${reason}`);
    const name = `${reason[0].toUpperCase()}${reason.slice(1)}Error`;
    assert.equal(ErrorClass.name, name);
    assert.equal(exported[name], ErrorClass, `${name} is not exported`);
    const error = AuthAgentError.fromResponse({ code: Number(code), message: 'm', data: { reason, retryable } });
    assert.ok(error instanceof ErrorClass && error instanceof AuthAgentError, reason);
    assert.equal(error.name, name);
  }
});

test('a standard error stays a plain AuthAgentError', () => {
  assert.equal(Object.getPrototypeOf(AuthAgentError.fromResponse({ code: -32602, message: 'x' })), AuthAgentError.prototype);
});
