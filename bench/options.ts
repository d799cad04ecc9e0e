/**
 * Command-line flags and environment variables of `npm run bench` (flags win over the environment).
 *
 *   --rows N          rows loaded into the benchmark table        FLOE_BENCH_ROWS     default 2,000,000
 *                     (up to 50,000,000 and beyond: the run checks first that its disk holds the MariaDB
 *                     table, the lake and its copies — about 18 GB for 50M rows with --no-partitioned)
 *   --changes M       random updates/deletes applied after the snapshot  FLOE_BENCH_CHANGES  default 500,000
 *   --seed S          seed of the data and workload generator     FLOE_BENCH_SEED     default 1
 *   --mysql-url URL   use this server instead of a private MariaDB (it must have binlog_format=ROW,
 *                     binlog_row_image=FULL; the user needs SUPER or BINLOG ADMIN to skip logging the load)
 *                                                                  FLOE_BENCH_MYSQL_URL
 *   --database NAME   the database the benchmark creates (dropped first!; default floe_bench)
 *   --commit-interval-ms T   floe's commit.intervalMs while streaming (default 1000; the snapshot uses floe's default)
 *   --parallelism P   snapshot chunks read at once (default: floe's default)
 *   --partition SPEC  also snapshot the table into a table partitioned by SPEC (floe's partitionBy text),
 *                     reported beside the unpartitioned snapshot; repeatable. Default: day(created_at)
 *                     (1,826 days over the data's 5 years) and bucket(16, id)
 *                                                                  FLOE_BENCH_PARTITIONS (';'-separated)
 *   --no-partitioned  only the unpartitioned snapshot
 *   --key-index-keys K   keys in the key-index micro-benchmarks (bench/key-index.ts, memory; and floe's
 *                     disk index, bench/key-index-stores.ts; 0 skips both)
 *                                                                  FLOE_BENCH_KEY_INDEX_KEYS  default 1,000,000
 *   --cdc-runs N      floe's CDC phase (after the snapshot run's clean stop) N times over the same range,
 *                     and its crash and restart N times, each from the lake and state directory as the
 *                     snapshot left them; each row shows the median run, the note every rate
 *                     (default 1)                                      FLOE_BENCH_CDC_RUNS
 *   --no-peers        skip the peers (bench/peers/: Debezium's embedded engine, Flink CDC's MySqlSource),
 *                     otherwise measured after floe's phases when java and mvn are on PATH
 *   --json FILE       also write the results as JSON to FILE
 *   --keep            keep the warehouse and the server's data directory (printed at the end)
 *   --verify          scan the lake after each phase and compare it with MySQL (on by default up to 100,000 rows)
 *   --no-verify       never scan the lake
 */
export interface BenchOptions {
  rows: number;
  changes: number;
  seed: number;
  mysqlUrl?: string;
  database: string;
  commitIntervalMs: number;
  parallelism?: number;
  /** Partition specs of the partitioned snapshot cases (empty: none). */
  partitions: string[];
  /** Keys of the key-index micro-benchmark (0: not run). */
  keyIndexKeys: number;
  /** Measure the peers (bench/peers/) in the same run. */
  peers: boolean;
  /** Runs of floe's CDC phase after the snapshot's clean stop (the median shown). */
  cdcRuns: number;
  jsonFile?: string;
  keep: boolean;
  verify: boolean;
}

const USAGE = 'usage: npm run bench -- [--rows N] [--changes M] [--seed S] [--mysql-url URL] [--database NAME] [--commit-interval-ms T] [--parallelism P] [--partition SPEC]... [--no-partitioned] [--key-index-keys K] [--cdc-runs N] [--no-peers] [--json FILE] [--keep] [--verify|--no-verify]';

function count(text: string, what: string): number {
  const n = Number(text.replace(/[_,]/g, ''));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`bench: ${what} must be a non-negative integer, found ${JSON.stringify(text)}\n${USAGE}`);
  return n;
}

/** A fine time transform (one partition per day of 5 years) and a hash into a few partitions. */
export const DEFAULT_PARTITIONS = ['day(created_at)', 'bucket(16, id)'];

export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const o: BenchOptions = {
    rows: count(env.FLOE_BENCH_ROWS ?? '2000000', 'FLOE_BENCH_ROWS'),
    changes: count(env.FLOE_BENCH_CHANGES ?? '500000', 'FLOE_BENCH_CHANGES'),
    seed: count(env.FLOE_BENCH_SEED ?? '1', 'FLOE_BENCH_SEED'),
    mysqlUrl: env.FLOE_BENCH_MYSQL_URL || undefined,
    database: 'floe_bench',
    commitIntervalMs: 1000,
    partitions: env.FLOE_BENCH_PARTITIONS !== undefined ? env.FLOE_BENCH_PARTITIONS.split(';').map((x) => x.trim()).filter(Boolean) : [...DEFAULT_PARTITIONS],
    keyIndexKeys: count(env.FLOE_BENCH_KEY_INDEX_KEYS ?? '1000000', 'FLOE_BENCH_KEY_INDEX_KEYS'),
    peers: true,
    cdcRuns: Math.max(1, count(env.FLOE_BENCH_CDC_RUNS ?? '1', 'FLOE_BENCH_CDC_RUNS')),
    keep: false,
    verify: false,
  };
  let verify: boolean | undefined;
  let partitionFlags: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`bench: ${flag} needs a value\n${USAGE}`);
      return v;
    };
    switch (flag) {
      case '--rows':
        o.rows = count(value(), '--rows');
        break;
      case '--changes':
        o.changes = count(value(), '--changes');
        break;
      case '--seed':
        o.seed = count(value(), '--seed');
        break;
      case '--mysql-url':
        o.mysqlUrl = value();
        break;
      case '--database': {
        const name = value();
        if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) throw new Error(`bench: --database must be a plain identifier (letters, digits, _), found ${JSON.stringify(name)}`);
        o.database = name;
        break;
      }
      case '--commit-interval-ms':
        o.commitIntervalMs = Math.max(100, count(value(), '--commit-interval-ms'));
        break;
      case '--parallelism':
        o.parallelism = Math.max(1, count(value(), '--parallelism'));
        break;
      case '--partition':
        (partitionFlags ??= []).push(value());
        break;
      case '--no-partitioned':
        partitionFlags = [];
        break;
      case '--key-index-keys':
        o.keyIndexKeys = count(value(), '--key-index-keys');
        break;
      case '--no-peers':
        o.peers = false;
        break;
      case '--cdc-runs':
        o.cdcRuns = Math.max(1, count(value(), '--cdc-runs'));
        break;
      case '--json':
        o.jsonFile = value();
        break;
      case '--keep':
        o.keep = true;
        break;
      case '--verify':
        verify = true;
        break;
      case '--no-verify':
        verify = false;
        break;
      case '--help':
      case '-h':
        throw new Error(USAGE);
      default:
        throw new Error(`bench: unknown option ${arg}\n${USAGE}`);
    }
  }
  if (o.rows < 1) throw new Error('bench: --rows must be at least 1');
  if (o.changes > 0 && Math.ceil(o.changes * 0.2) >= o.rows) {
    throw new Error(`bench: --changes ${o.changes} would delete ${Math.ceil(o.changes * 0.2)} rows (one change in five is a delete) but the table has ${o.rows}; use more --rows`);
  }
  if (partitionFlags) o.partitions = partitionFlags;
  o.verify = verify ?? o.rows <= 100_000;
  return o;
}
