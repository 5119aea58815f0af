import { readFileSync } from 'node:fs';

/** This client's version, from package.json so it is written in one place. */
export const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
