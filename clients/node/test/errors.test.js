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
