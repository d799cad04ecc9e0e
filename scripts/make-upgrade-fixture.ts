/**
 * Makes test/fixtures/upgrade-6236d67/ (its README says what it is for): a lake written by floe at
 * commit 6236d67, which records no MySQL definition in its tables, and the binlog position it stands
 * at. Run from the repository root, with a checkout of that commit whose node_modules resolve:
 *
 *   git worktree add /tmp/floe-6236d67 6236d67 && ln -s "$PWD/node_modules" /tmp/floe-6236d67/node_modules
 *   node --import tsx scripts/make-upgrade-fixture.ts /tmp/floe-6236d67
 *
 * It starts a private MariaDB (server id 6236, binlog reset) and moto (bucket `lake`), replays the
 * fixture's `BEFORE_FLOE` statements, runs the old `floe run` into s3://lake/warehouse until it
 * streams, replays `WHILE_FLOE`, waits until every table committed past them, stops the old floe
 * cleanly (SIGTERM), and copies every object of the bucket to the fixture's `lake/` folder.
 */
import { spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSystemCatalog } from '../src/catalog/filesystem/filesystem-catalog.js';
import { startMariaDb } from '../src/demo/local-mariadb.js';
import { fileIOFor } from '../src/io/file-io-factory.js';
import { BEFORE_FLOE, BUCKET, DATABASE, JOB, SERVER_ID, TABLES, WAREHOUSE, WHILE_FLOE, binlogEnd, connectShop, run, type FixtureFacts } from '../test/fixtures/upgrade-6236d67/shop.js';
import { parseMysqlUrl } from '../test/support/mariadb.js';
import { MOTO_ACCESS_KEY_ID, MOTO_SECRET_ACCESS_KEY, startMoto } from '../test/support/moto-server.js';
import { committedOffset } from '../test/e2e/support/catch-up.js';
import { compareOffsets } from '../src/source/mysql/offset/offset.js';
import { serverPosition } from '../test/e2e/support/catch-up.js';

const OLD_COMMIT = '6236d67';
const fixture = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', `upgrade-${OLD_COMMIT}`);

const oldFloe = process.argv[2];
if (!oldFloe) {
  console.error(`usage: node --import tsx scripts/make-upgrade-fixture.ts <checkout of floe ${OLD_COMMIT}>`);
  process.exit(2);
}

const server = await startMariaDb({ serverId: SERVER_ID });
const moto = await startMoto(BUCKET);
try {
  const mysqlServer = parseMysqlUrl(server.url);
  const conn = await connectShop(mysqlServer);
  await conn.query('RESET MASTER');
  await run(conn, BEFORE_FLOE);

  const work = join(fixture, '..', `.upgrade-${OLD_COMMIT}-scratch`);
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const config = join(work, 'floe.json');
  await writeFile(
    config,
    JSON.stringify({
      job: { id: JOB },
      source: { ...mysqlServer, serverId: 9100, include: [`${DATABASE}.*`] },
      warehouse: { location: WAREHOUSE, s3: { endpoint: moto.config.endpoint, region: 'us-east-1', pathStyle: true, accessKeyId: MOTO_ACCESS_KEY_ID, secretAccessKey: MOTO_SECRET_ACCESS_KEY } },
      commit: { intervalMs: 500, idleCheckpoints: 1 },
    }),
  );
  const child = spawn(process.execPath, [join(oldFloe, 'bin', 'floe.mjs'), 'run', '-c', config, '--no-preflight', '--no-progress', '--log-format', 'json'], { cwd: oldFloe, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const streaming = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('"notification":"streaming-started"')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', () => reject(new Error(`the old floe exited before streaming:\n${output.slice(-4000)}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await streaming;
  await run(conn, WHILE_FLOE);
  const target = await serverPosition(mysqlServer);
  const catalog = new FileSystemCatalog({ warehouse: WAREHOUSE, storage: { s3: moto.config } });
  for (const deadline = Date.now() + 120_000; ; ) {
    const offsets = await Promise.all(TABLES.map((t) => committedOffset(catalog, { namespace: [DATABASE], name: t }, JOB)));
    if (offsets.every((o) => o !== undefined && compareOffsets(o, target) >= 0)) break;
    if (Date.now() > deadline) throw new Error(`the old floe did not commit past the streamed statements within 120 s:\n${output.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`the old floe stopped with code ${code}:\n${output.slice(-4000)}`);

  const end = await binlogEnd(conn);
  const [version] = await conn.query('SELECT VERSION() AS v');
  await conn.end();
  const io = fileIOFor(WAREHOUSE, { s3: moto.config });
  await rm(join(fixture, 'lake'), { recursive: true, force: true });
  const objects = await io.list(`s3://${BUCKET}/`);
  for (const location of objects) {
    const key = location.slice(`s3://${BUCKET}/`.length);
    const path = join(fixture, 'lake', key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, await io.read(location));
  }
  const facts: FixtureFacts = { ...end, mariadb: String((version as { v: string }[])[0]!.v), floe: OLD_COMMIT };
  await writeFile(join(fixture, 'fixture.json'), JSON.stringify(facts, null, 2) + '\n');
  await rm(work, { recursive: true, force: true });
  console.log(`fixture written: ${objects.length} objects; binlog at ${end.file}:${end.position} (gtid ${end.gtid})`);
} finally {
  await moto.stop();
  await server.stop();
}
