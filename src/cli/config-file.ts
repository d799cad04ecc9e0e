/**
 * Which configuration a command uses: `-c/--config <file>`, else `$FLOE_CONFIG`, else `floe.yaml`
 * in the working directory when present, else every default (a local `./warehouse`, the filesystem
 * catalog, job id `floe`, no source) — enough for `floe status` and `floe demo`.
 */
import { existsSync } from 'node:fs';
import { loadConfigFile, parseConfig } from '../config/load.js';
import type { FloeConfig } from '../config/schema.js';

export interface LoadedConfig {
  config: FloeConfig;
  /** The file it came from, if any. */
  path?: string;
}

export async function resolveConfig(explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<LoadedConfig> {
  const path = explicit ?? env.FLOE_CONFIG ?? (existsSync('floe.yaml') ? 'floe.yaml' : existsSync('floe.yml') ? 'floe.yml' : undefined);
  if (path === undefined) return { config: parseConfig({}, env) };
  return { config: await loadConfigFile(path, env), path };
}
