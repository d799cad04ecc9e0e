// Runs s3rver as a separate process: `node --openssl-legacy-provider s3rver-process.cjs <dir> <bucket>`.
// Why a process and that flag: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES, which
// Node 17+ (OpenSSL 3) only offers through the legacy provider; in-process, every paginated listing
// would fail with HTTP 500. Prints {"port":N} on stdout once listening; exits on SIGTERM.
'use strict';
const S3rver = require('s3rver');

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  configureBuckets: [{ name: bucket }],
});
server.run().then(
  ({ port }) => process.stdout.write(`${JSON.stringify({ port })}\n`),
  (err) => {
    process.stderr.write(`s3rver failed to start: ${err && err.stack}\n`);
    process.exit(1);
  },
);
process.on('SIGTERM', () => {
  server.close().finally(() => process.exit(0));
});
// Do not outlive the test process that started us, even if it died without stopping us.
const parent = process.ppid;
setInterval(() => {
  try {
    process.kill(parent, 0);
  } catch {
    process.exit(0);
  }
}, 1000).unref();
