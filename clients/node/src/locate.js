import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

/** The platform package that carries the agent for this machine, as npm picks it from `os` and `cpu`. */
export const PLATFORM_PACKAGE = `@auth-agent/${process.platform}-${process.arch}`;

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The agent the platform package carries (an optional dependency of the
 * `auth-agent` package, the way esbuild ships its binary), or `null` when
 * npm installed none for this platform.
 */
export function bundledAgent() {
  let path;
  try {
    path = createRequire(import.meta.url).resolve(`${PLATFORM_PACKAGE}/bin/auth-agent`);
  } catch {
    return null;
  }
  return executable(path) ? path : null;
}

/**
 * The agent executable: `bin` if given, else `$AUTH_AGENT_BIN`, else the one
 * the platform package carries (the build this client was released with),
 * else `auth-agent` on PATH; `null` when none of them names one.
 */
export function findAgent(bin) {
  if (bin) return bin;
  if (process.env.AUTH_AGENT_BIN) return process.env.AUTH_AGENT_BIN;
  const bundled = bundledAgent();
  if (bundled) return bundled;
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, 'auth-agent');
    if (executable(candidate)) return candidate;
  }
  return null;
}
