/**
 * Loading a config file: YAML or JSON, `${ENV_VAR}` substitution (for secrets; `${VAR:-default}` too),
 * then zod validation with messages that name the offending path.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { FloeError } from '../util/errors.js';
import { configSchema, type FloeConfig } from './schema.js';

/** Replaces `${NAME}` / `${NAME:-fallback}` in every string of a parsed document. */
export function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback: string | undefined) => {
      const v = env[name];
      if (v !== undefined && v !== '') return v;
      if (fallback !== undefined) return fallback;
      throw new FloeError('config', 'config', `${path || '(root)'}: environment variable ${name} is not set; export it or use \${${name}:-default}`);
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, path ? `${path}.${k}` : k)]));
  }
  return value;
}

export function parseConfig(document: unknown, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  const substituted = substituteEnv(document ?? {}, env);
  const result = configSchema.safeParse(substituted);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const where = issue.path.length ? issue.path.map(String).join('.') : '(root)';
      return `  ${where}: ${issue.message}`;
    });
    throw new FloeError('config', 'config', `invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export function parseConfigText(text: string, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text); // YAML is a superset of JSON
  } catch (e) {
    throw new FloeError('config', 'config', `cannot parse the configuration as YAML/JSON: ${(e as Error).message}`);
  }
  return parseConfig(doc, env);
}

export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Promise<FloeConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new FloeError('config', 'config', `cannot read config file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return parseConfigText(text, env);
  } catch (e) {
    if (e instanceof FloeError) throw new FloeError('config', 'config', `${path}: ${e.message.replace(/^config: /, '')}`);
    throw e;
  }
}

/** The config with secrets replaced, for logs and `floe check` output. */
export function redactConfig(config: FloeConfig): unknown {
  const secretKeys = /password|secret|token|credential|salt|sessionToken/i;
  const walk = (v: unknown, key = ''): unknown => {
    if (typeof v === 'string') {
      if (secretKeys.test(key)) return v ? '***' : v;
      return v.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(config);
}
