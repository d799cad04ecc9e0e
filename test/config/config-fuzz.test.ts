/**
 * Hostile configuration files: an operator's typo must never crash floe or leak a secret. Every invalid config must end as a `config`
 * FloeError (the CLI exits with 2, src/cli/main.ts) whose message names where the problem is — the
 * config path, or the line and column of a syntax error — and never quotes a credential or prints a
 * stack. The in-process properties (fast-check) mutate a valid config one place at a time so the
 * expected path is known; a handful of real `floe` child processes check the exit code and stderr.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig, parseConfigText } from '../../src/config/load.js';
import { isFloeError } from '../../src/util/errors.js';
import { runFloe } from '../cli/run-floe.js';

/** Stands for every credential in the documents: it must never appear in a message. */
const SECRET = 'Hunter2-s3cr3t';

type Doc = Record<string, unknown>;

/** A valid config touching every section, with credentials where floe has them. */
function baseConfig(): Doc {
  return {
    job: { id: 'fuzz' },
    source: {
      url: `mysql://floe:${SECRET}@db.example:3306`,
      host: 'db.example',
      port: 3306,
      user: 'floe',
      password: SECRET,
      serverId: 5401,
      include: ['shop.*'],
      exclude: [],
      snapshot: { mode: 'initial', chunkSize: 1000, parallelism: 2, backfill: true, chunkKeys: {} },
      startPosition: 'latest',
      tinyint1AsBoolean: true,
      timeAsMicros: [],
      heartbeatMs: 5000,
    },
    warehouse: { location: 's3://bucket/lake', s3: { endpoint: 'http://minio:9000', region: 'us-east-1', pathStyle: true, accessKeyId: 'AKIA', secretAccessKey: SECRET, sessionToken: SECRET } },
    catalog: { type: 'rest', name: 'floe', uri: `http://catalog:8181`, warehouse: 'wh', token: SECRET, credential: `client:${SECRET}`, oauth2ServerUri: 'http://catalog:8181/v1/oauth/tokens', scope: 'catalog' },
    tables: { namespace: '{database}', name: '{table}', overrides: { 'shop.orders': { namespace: 'sales', partitionBy: ['day(created_at)'], properties: { a: 'b' } } } },
    iceberg: { formatVersion: 3, targetFileSizeBytes: 1 << 27, upsertDeletes: 'deletion-vectors', keyIndexMaxRows: 1000, properties: {} },
    commit: { intervalMs: 10_000, maxBufferedChanges: 1000, idleCheckpoints: 10, idleMaxMs: 600_000 },
    maintenance: {
      enabled: true,
      intervalMs: 600_000,
      expireSnapshots: { olderThanMs: 3_600_000, retainLast: 10 },
      compaction: { enabled: true, minDeleteFiles: 100, minDeletedRowsRatio: 0.1 },
      removeOrphans: { olderThanMs: 86_400_000, intervalMs: 86_400_000 },
    },
    schemaChanges: 'evolve',
    transforms: [{ column: 'shop.users.email', type: 'hash', salt: SECRET }],
    notifications: { webhook: { url: `https://hooks.example/${SECRET}`, headers: { Authorization: `Bearer ${SECRET}` } } },
    metrics: { port: 9464 },
  };
}

const get = (doc: Doc, p: readonly (string | number)[]): unknown => p.reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], doc);
function setAt(doc: Doc, p: readonly (string | number)[], value: unknown): Doc {
  const copy = structuredClone(doc);
  const parent = get(copy, p.slice(0, -1)) as Record<string | number, unknown>;
  parent[p[p.length - 1]] = value;
  return copy;
}
/** The path as floe's messages print it (src/config/load.ts pathText for plain keys). */
const shown = (p: readonly (string | number)[]): string => (p.length === 0 ? '(root)' : p.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join(''));

/** Every leaf of the base config with its JSON type, and every strict object (records excluded: any key is valid there). */
const RECORDS = new Set(['source.snapshot.chunkKeys', 'tables.overrides', 'tables.overrides.shop.orders.properties', 'iceberg.properties', 'notifications.webhook.headers']);
const leaves: { path: (string | number)[]; type: string }[] = [];
const objects: (string | number)[][] = [];
(function walk(v: unknown, p: (string | number)[]) {
  if (Array.isArray(v)) {
    leaves.push({ path: p, type: 'array' });
    v.forEach((x, i) => typeof x === 'object' && walk(x, [...p, i]));
  } else if (v && typeof v === 'object') {
    const dotted = p.join('.');
    if (!RECORDS.has(dotted) && !dotted.startsWith('tables.overrides.') && p[0] !== 'transforms') objects.push(p);
    if (p.length > 0 && !RECORDS.has(dotted)) leaves.push({ path: p, type: 'object' });
    for (const [k, x] of Object.entries(v)) walk(x, [...p, k]);
  } else leaves.push({ path: p, type: typeof v });
})(baseConfig(), []);
// paths under a record key (tables.overrides."shop.orders") would print quoted: keep the property simple
const plainLeaves = leaves.filter((l) => !l.path.includes('shop.orders') && !(l.path[0] === 'catalog' && l.path[1] === 'type'));
const numericLeaves = plainLeaves.filter((l) => l.type === 'number');
const URL_FIELDS: (string | number)[][] = [['source', 'url'], ['catalog', 'uri'], ['catalog', 'oauth2ServerUri'], ['warehouse', 's3', 'endpoint'], ['notifications', 'webhook', 'url']];
/** Fields that take a fraction between 0 and 1. */
const RATIO_FIELDS: (string | number)[][] = [['maintenance', 'compaction', 'minDeletedRowsRatio']];
const STRICT_ENUMS: (string | number)[][] = [['schemaChanges'], ['source', 'snapshot', 'mode'], ['iceberg', 'upsertDeletes'], ['catalog', 'type'], ['job', 'id']];

/** A value of another JSON type than `type` (so the leaf is certainly invalid). */
function wrongTypeValue(type: string): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ unit: 'grapheme', maxLength: 20 }),
    number: fc.oneof(fc.integer(), fc.double({ noNaN: true })),
    boolean: fc.boolean(),
    array: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
    object: fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
    null: fc.constant(null),
  };
  return fc.oneof(...Object.entries(all).filter(([t]) => t !== type).map(([, a]) => a));
}

const weirdText = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.constantFrom('\u202eevolve', 'ev\u0000olve', 'EVOLVE', 'evolve ', '\ufeffevolve', 'é'.repeat(5000), '\n', '💥'),
);

interface Case {
  doc: unknown;
  /** Text the message must contain (a config path, or "line N"). */
  where: string;
  why: string;
}

const mutation: fc.Arbitrary<Case> = fc.oneof(
  // an unknown key in any strict section
  fc.tuple(fc.constantFrom(...objects), fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'Password', 'url ', '\u202epassword', 'a\nb', ''))).filter(([p, k]) => {
    const o = get(baseConfig(), p) as Doc;
    return !Object.prototype.hasOwnProperty.call(o, k) && !(p.length === 0 && k === 'source');
  }).map(([p, k]): Case => {
    const doc = structuredClone(baseConfig());
    Object.defineProperty(get(doc, p) as object, k, { value: SECRET, enumerable: true, writable: true, configurable: true });
    return { doc, where: shown(p), why: `unknown key ${JSON.stringify(k)}` };
  }),
  // a value of the wrong type anywhere
  fc.constantFrom(...plainLeaves).chain((l) => wrongTypeValue(l.type).map((v): Case => ({ doc: setAt(baseConfig(), l.path, v), where: shown(l.path), why: `wrong type ${JSON.stringify(v)}` }))),
  // numbers no field takes: negative, fractional, beyond 2^53, ±1e308, ±Infinity (a ratio in [0, 1]
  // takes the tiny positive fraction, so that one is tried on whole-number fields only)
  fc
    .tuple(fc.constantFrom(...numericLeaves), fc.constantFrom(-1, 1.5, 2 ** 53, 1e308, -1e308, Infinity, -Infinity, Number.MIN_VALUE))
    .filter(([l, v]) => !(v === Number.MIN_VALUE && RATIO_FIELDS.some((r) => shown(r) === shown(l.path))))
    .map(([l, v]): Case => ({ doc: setAt(baseConfig(), l.path, v), where: shown(l.path), why: `number ${v}` })),
  // URLs that do not parse, carrying a credential
  fc.tuple(fc.constantFrom(...URL_FIELDS), fc.constantFrom('mysql', 'http', 'https', 'postgresql', ''), fc.constantFrom(`u:${SECRET}@ho st:1`, `u:${SECRET}@[::1:3306`, `u:${SECRET}@host:99999`, `u:pa/${SECRET}@h:1`)).map(([p, scheme, rest]): Case => ({ doc: setAt(baseConfig(), p, scheme ? `${scheme}://${rest}` : rest), where: shown(p), why: 'bad url' })),
  fc.constantFrom('postgresql://u:pa/ss@h/db', `oracle://u:${SECRET}@h/db`, 'sqlite:', `jdbc:db2://u:${SECRET}@h`, `postgresql://u:${SECRET}@ho st/db`).map((url): Case => ({ doc: { catalog: { type: 'sql', url } }, where: 'catalog.url', why: 'bad sql url' })),
  fc.constantFrom(`http://floe:${SECRET}@db:3306`, `postgresql://floe:${SECRET}@db/x`, `floe:${SECRET}@db:3306`).map((url): Case => ({ doc: setAt(baseConfig(), ['source', 'url'], url), where: 'source.url', why: 'not a mysql url' })),
  // enum and pattern fields given text they do not take
  fc.tuple(fc.constantFrom(...STRICT_ENUMS), weirdText).filter(([p, t]) => t !== get(baseConfig(), p) && !/^[A-Za-z0-9._-]+$/.test(t) && !['filesystem', 'sql', 'rest', 'initial', 'never', 'schema-only', 'equality', 'deletion-vectors', 'fail', 'stop'].includes(t)).map(([p, t]): Case => ({ doc: setAt(baseConfig(), p, t), where: shown(p), why: `enum ${JSON.stringify(t)}` })),
  // environment references: unset, malformed, nested
  fc.tuple(
    fc.constantFrom(...plainLeaves.filter((l) => l.type === 'string')),
    fc.constantFrom('${FLOE_FUZZ_UNSET}', '${', '${FLOE', '${1A}', '${A-b}', '${ A }', '${A:-${B}}', '${A:-x', 'x${}y', `${SECRET}\${FLOE_FUZZ_UNSET}`, '${A:-{}'),
  ).map(([l, v]): Case => ({ doc: setAt(baseConfig(), l.path, v), where: shown(l.path), why: `env ${v}` })),
);

function expectRefusal(run: () => unknown, c: { where: string; why: string }): void {
  let error: unknown;
  try {
    run();
  } catch (e) {
    error = e;
  }
  expect(isFloeError(error, 'config'), `${c.why}: ${String(error)}`).toBe(true);
  const message = (error as Error).message;
  expect(message, c.why).toContain(c.where);
  expect(message, c.why).not.toContain(SECRET);
  expect(message, c.why).not.toMatch(/\n\s+at /);
  // one logical line per problem: no raw control or bidirectional characters from the input
  expect(message.replace(/\n {2}/g, ' '), c.why).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202a-\u202e\u2066-\u2069]/);
}

describe('config loader under hostile input', () => {
  it('the base config is valid (each mutation below makes exactly one place invalid)', () => {
    expect(parseConfig(baseConfig(), {}).source?.password).toBe(SECRET);
    expect(parseConfigText(stringify(baseConfig()), {}).catalog.type).toBe('rest');
  });

  it('refuses every single-place mutation, naming its path, without the secret (as a document, YAML and JSON)', () => {
    fc.assert(
      fc.property(mutation, fc.constantFrom('doc', 'yaml', 'json'), (c, form) => {
        if (form === 'doc') expectRefusal(() => parseConfig(c.doc, {}), c);
        else {
          const text = form === 'yaml' ? stringify(c.doc) : JSON.stringify(c.doc);
          expectRefusal(() => parseConfigText(text, {}), c);
        }
      }),
      { numRuns: 600 },
    );
  });

  it('YAML syntax errors name the line and column, never the line itself (it may hold the password)', () => {
    const lines = stringify(baseConfig()).split('\n');
    const secretLines = lines.map((l, i) => [l, i] as const).filter(([l]) => l.includes(SECRET));
    fc.assert(
      fc.property(
        fc.constantFrom(...secretLines),
        fc.constantFrom<(l: string) => string>(
          (l) => `\t${l}`, // tab indentation
          (l) => `${l}\n${l}`, // duplicate key
          ...[(v: string) => `${v}: x`, (v: string) => `"${v}`, (v: string) => `[${v}`, (v: string) => `!secret ${v}`, () => `*${SECRET.replace('-', '')}`].map(
            (bad) => (l: string) => l.replace(/^(\s*[^:]+): (.*)$/, (_m, key: string, value: string) => `${key}: ${bad(value)}`),
          ),
        ),
        ([line, i], breakIt) => {
          const text = [...lines.slice(0, i), breakIt(line), ...lines.slice(i + 1)].join('\n');
          let error: unknown;
          try {
            parseConfigText(text, {});
          } catch (e) {
            error = e;
          }
          expect(isFloeError(error, 'config'), String(error)).toBe(true);
          const message = (error as Error).message;
          expect(message).toMatch(/line \d+, column \d+|invalid configuration/);
          expect(message).not.toContain(SECRET);
          expect(message).not.toContain(SECRET.replace('-', ''));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('arbitrary documents and texts end as a config error or a config, never another exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.object({ maxDepth: 3 })), (doc) => {
        try {
          parseConfig(doc, {});
        } catch (e) {
          expect(isFloeError(e, 'config'), String(e)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        try {
          parseConfigText(text, {});
        } catch (e) {
          expect(isFloeError(e, 'config'), String(e)).toBe(true);
          expect((e as Error).message).not.toMatch(/\n\s+at /);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('environment references: substitution, $${ for a literal ${, and secrets from the environment never echoed', () => {
    const c = parseConfigText('source:\n  password: "${PW}"\n  user: "$${NOT_A_REF}"\n  host: "${H:-db}"\n', { PW: SECRET });
    expect(c.source).toMatchObject({ password: SECRET, user: '${NOT_A_REF}', host: 'db' });
    // a substituted secret that makes the URL invalid is still not quoted
    expectRefusal(() => parseConfigText('source:\n  url: "mysql://floe:${PW}@db:3306"\n', { PW: `${SECRET}/x?y` }), { where: 'source.url', why: 'env url' });
  });

  it('an unreadable file names it and says what to do', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'floe-cfg-'));
    await expect(loadConfigFile(path.join(dir, 'missing.yaml'), {})).rejects.toThrow(/missing\.yaml: no such file \(ENOENT\).*-c\/--config/);
    mkdirSync(path.join(dir, 'd.yaml'));
    await expect(loadConfigFile(path.join(dir, 'd.yaml'), {})).rejects.toThrow(/d\.yaml: it is a directory/);
  });
});

describe('the floe command with a hostile config (child processes)', () => {
  it('exits with 2 and a one-line reason naming the place, no stack, no credential', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'floe-cfg-cli-'));
    const file = (name: string, text: string) => {
      const p = path.join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const cases: { args: string[]; where: RegExp; env?: NodeJS.ProcessEnv }[] = [
      { args: ['run', '-c', file('syntax.yaml', `source:\n  url: "mysql://floe:${SECRET}@db:3306"\n  password: ${SECRET}: x\n`)], where: /syntax\.yaml.*line 3, column \d+/ },
      { args: ['check', '-c', file('url.yaml', `source:\n  url: "mysql://floe:pa/${SECRET}@db:3306"\n`)], where: /url\.yaml.*source\.url: expected mysql:\/\//s },
      { args: ['status', '-c', file('key.json', JSON.stringify({ catalog: { type: 'rest', uri: 'http://c:8181', token: SECRET, tokne: SECRET } }))], where: /key\.json.*catalog: unknown key "tokne"/s },
      { args: ['catalog', 'serve', '-c', file('env.yaml', 'catalog:\n  type: sql\n  url: "postgresql://floe:${FLOE_FUZZ_PW}@db/cat"\n')], where: /env\.yaml.*catalog\.url: environment variable FLOE_FUZZ_PW is not set/ },
      { args: ['maintain', '-c', file('huge.yaml', `commit:\n  intervalMs: 1e400\nsource:\n  password: ${SECRET}\n`)], where: /huge\.yaml.*commit\.intervalMs/s },
      { args: ['run', '-c', path.join(dir, 'absent.yaml')], where: /absent\.yaml: no such file/ },
    ];
    const runs = await Promise.all(cases.map((c) => runFloe(c.args, { cwd: dir, env: { FLOE_FUZZ_PW: '', ...c.env }, timeoutMs: 50_000 })));
    runs.forEach((r, i) => {
      const c = cases[i];
      expect(r.code, `${c.args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, c.args.join(' ')).toMatch(c.where);
      expect(r.stderr).toMatch(/^floe: config: /);
      expect(r.stderr + r.stdout).not.toContain(SECRET);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  });
});
