/**
 * Loading a config file: YAML or JSON, `${ENV_VAR}` substitution (for secrets; `${VAR:-default}` too,
 * `$${` for a literal `${`), then zod validation with messages that name the offending path.
 *
 * Every way a config can be wrong ends in a FloeError of kind `config` (the CLI exits with 2, see
 * src/cli/main.ts) whose message names the file and the path (or line and column) of the problem.
 * Messages never quote the config's text: a YAML syntax error points at a line and column instead of
 * printing it (the line may hold a password), keys are quoted with control and bidirectional
 * characters escaped, and URL credentials are masked (src/util/redact.ts).
 */
import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument, visit, type Document } from 'yaml';
import { FloeError } from '../util/errors.js';
import { redactPrivateKeys } from '../util/pem.js';
import { redactUrlCredentials } from '../util/redact.js';
import { configSchema, type FloeConfig } from './schema.js';

const ENV_REFERENCE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^${}]*))?\}/;

function configError(message: string): FloeError {
  return new FloeError('config', 'config', redactPrivateKeys(redactUrlCredentials(message)));
}

/**
 * A key or value fragment fit for a one-line message: control characters, bidirectional overrides
 * and other invisible format characters escaped (a key with a newline or U+202E must not reshape the
 * terminal output), long text cut.
 */
function printable(text: string, max = 80): string {
  const cut = [...text].length > max ? [...text].slice(0, max).join('') + '…' : text;
  return cut.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((p, i) => {
      if (typeof p === 'number') return `[${p}]`;
      const s = String(p);
      const plain = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(s) ? s : JSON.stringify(printable(s)).replace(/\\\\u/g, '\\u');
      return i === 0 ? plain : `.${plain}`;
    })
    .join('')
    .replace(/\.\[/g, '[');
}

/** Replaces `${NAME}` / `${NAME:-fallback}` in every string of a parsed document; `$${` is a literal `${`. */
function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, path: readonly PropertyKey[] = []): unknown {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value;
    let out = '';
    for (let i = 0; i < value.length; ) {
      if (value.startsWith('$${', i)) {
        out += '${';
        i += 3;
        continue;
      }
      if (!value.startsWith('${', i)) {
        out += value[i++];
        continue;
      }
      const m = ENV_REFERENCE.exec(value.slice(i));
      if (!m) {
        // an unterminated or nested reference, or a name that is not an environment variable name:
        // taking it literally would hand a half-substituted secret to the source or the catalog
        throw configError(
          `${pathText(path)}: expected an environment reference \${NAME} or \${NAME:-default} (NAME: letters, digits, _; the default without $, { or }), found a malformed one at character ${i + 1}; write $\${ for a literal \${`,
        );
      }
      const [whole, name, fallback] = m;
      const v = env[name!];
      if (v !== undefined && v !== '') out += v;
      else if (fallback !== undefined) out += fallback;
      else throw configError(`${pathText(path)}: environment variable ${name} is not set; export it or use \${${name}:-default}`);
      i += whole.length;
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, [...path, i]));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteEnv(v, env, [...path, k])]));
  }
  return value;
}

export function parseConfig(document: unknown, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  const substituted = substituteEnv(document ?? {}, env);
  const result = configSchema.safeParse(substituted);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const keys = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
      // zod quotes unknown keys raw; print them escaped like every other path component
      const message = keys ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => JSON.stringify(printable(k)).replace(/\\\\u/g, '\\u')).join(', ')} (a typo, or a setting floe does not have)` : printable(issue.message, 300);
      return `  ${pathText(issue.path)}: ${message}`;
    });
    throw configError(`invalid configuration:\n${lines.join('\n')}`);
  }
  return result.data;
}

export function parseConfigText(text: string, env: NodeJS.ProcessEnv = process.env): FloeConfig {
  const lineCounter = new LineCounter();
  // prettyErrors off: the pretty form quotes the offending line, which may hold a password.
  // logLevel 'error': warnings are collected on the document (and refused below), never printed.
  const doc = parseDocument(text, { prettyErrors: false, logLevel: 'error', lineCounter, uniqueKeys: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    throw configError(
      `cannot parse the configuration as YAML/JSON at line ${line}, column ${col}: ${printable(problem.message, 200)} (${problem.code}); fix the syntax there — floe reads one plain YAML 1.2 or JSON document, without custom tags`,
    );
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // yaml's messages here quote alias names, which are the config's own text: say what, not which
    const m = (e as Error).message;
    const at = /Unresolved alias/.test(m) ? unresolvedAliasAt(doc) : undefined;
    const where = at === undefined ? '' : (({ line, col }) => ` at line ${line}, column ${col}`)(lineCounter.linePos(at));
    const what = /Unresolved alias/.test(m)
      ? `an alias (*name)${where} refers to no anchor (&name) defined before it`
      : /Excessive alias count/.test(m)
        ? 'more than 100 alias expansions (refused as a resource exhaustion attack)'
        : 'the document cannot be converted to plain values';
    throw configError(`cannot read the configuration as YAML/JSON: ${what}; floe reads one plain YAML 1.2 or JSON document`);
  }
  return parseConfig(value, env);
}

/** Where the first alias without an anchor starts. */
function unresolvedAliasAt(doc: Document): number | undefined {
  let at: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      if (node.resolve(doc) === undefined) {
        at = node.range?.[0];
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return at;
}

export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Promise<FloeConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : 'the read failed';
    throw configError(`cannot read config file ${printable(path, 300)}: ${what} (${code ?? printable((e as Error).message, 200)}); expected a readable YAML or JSON file — check -c/--config or $FLOE_CONFIG`);
  }
  try {
    return parseConfigText(text, env);
  } catch (e) {
    if (e instanceof FloeError) throw configError(`${printable(path, 300)}: ${e.message.replace(/^config: /, '')}`);
    throw e;
  }
}

/**
 * The config with secrets replaced, for logs and `floe check` output: values of secret-named keys
 * (and `source.tls.key`, a private key or its path), URL passwords, and private keys' PEM blocks
 * wherever they appear.
 */
export function redactConfig(config: FloeConfig): unknown {
  const secretKeys = /password|secret|token|credential|salt|sessionToken|^key$/i;
  const walk = (v: unknown, key = ''): unknown => {
    if (typeof v === 'string') {
      if (secretKeys.test(key)) return v ? '***' : v;
      return redactPrivateKeys(redactUrlCredentials(v));
    }
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(config);
}
