/**
 * The client's protocol tables against schema/openrpc.json: a method,
 * notification or error the schema has and the client lacks fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import {
  AGENT_REQUESTS, AuthAgent, ERRORS, HOST_NOTIFICATIONS, METHODS, NOTIFICATIONS,
} from '../index.js';
import { SCHEMA_PATH } from '../testing/support.js';

const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'));
const sorted = (names) => [...names].sort();

/** Protocol methods the client exposes under another name. */
const CLIENT_NAMES = { shutdown: 'close' };

test('requests match the schema', () => {
  const requests = schema.methods.filter((m) => !m['x-notification']).map((m) => m.name);
  assert.deepEqual(sorted(METHODS), sorted(requests));
});

test('host notifications match the schema', () => {
  const sent = schema.methods.filter((m) => m['x-notification']).map((m) => m.name);
  assert.deepEqual(sorted(HOST_NOTIFICATIONS), sorted(sent));
});

test('agent notifications match the schema', () => {
  assert.deepEqual(sorted(NOTIFICATIONS), sorted(schema['x-notifications'].map((n) => n.name)));
});

test('agent requests match the schema', () => {
  assert.deepEqual(sorted(AGENT_REQUESTS), sorted(schema['x-host-requests'].map((r) => r.name)));
});

test('subscribable events are known notifications', () => {
  for (const event of schema.components.schemas.EventName.enum) assert.ok(NOTIFICATIONS.includes(event), event);
});

test('application errors match the schema', () => {
  const fromSchema = Object.fromEntries(Object.values(schema.components.errors)
    .map((e) => [e.code, { reason: e.data.reason, retryable: e.data.retryable }]));
  const fromClient = Object.fromEntries(Object.entries(ERRORS)
    .filter(([code]) => Number(code) > 0));
  assert.deepEqual(fromClient, fromSchema);
});

test('standard errors match the schema', () => {
  const described = schema.info.description.match(/-32\d{3}/g).map(Number);
  const fromClient = Object.keys(ERRORS).map(Number).filter((code) => code < 0);
  assert.deepEqual(sorted(fromClient), sorted(described));
});

test('the client has a method for each request', () => {
  for (const name of METHODS) {
    const method = CLIENT_NAMES[name] ?? name;
    assert.equal(typeof AuthAgent.prototype[method], 'function', method);
  }
});
