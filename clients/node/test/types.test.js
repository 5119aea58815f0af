/**
 * index.d.ts against index.js, without TypeScript (no registry here): every
 * export is declared, and Node's types are referenced explicitly.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import * as exported from '../index.js';
import { CLIENT_ROOT } from '../testing/support.js';

const declarations = readFileSync(join(CLIENT_ROOT, 'index.d.ts'), 'utf8');

test('every export of index.js is declared in index.d.ts', () => {
  for (const name of Object.keys(exported)) {
    assert.match(declarations, new RegExp(`export declare (class|const|function) ${name}\\b`), name);
  }
});

test('index.d.ts references Node\'s types', () => {
  assert.match(declarations, /^\/\/\/ <reference types="node" \/>/);
});

test('every AuthAgent method is declared', () => {
  const methods = Object.getOwnPropertyNames(exported.AuthAgent.prototype).filter((n) => n !== 'constructor');
  for (const name of methods) assert.match(declarations, new RegExp(`\\n  (readonly )?${name}[<(:]`), name);
  assert.match(declarations, /\[Symbol\.asyncDispose\]\(\): Promise<void>;/);
});
