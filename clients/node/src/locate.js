import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * The agent executable: `bin` if given, else `$AUTH_AGENT_BIN`, else
 * `auth-agent` on PATH; `null` when none of them names one.
 */
export function findAgent(bin) {
  if (bin) return bin;
  if (process.env.AUTH_AGENT_BIN) return process.env.AUTH_AGENT_BIN;
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, 'auth-agent');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; keep looking.
    }
  }
  return null;
}
