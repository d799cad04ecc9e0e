/**
 * S3FileIO against a real S3 endpoint running in this process (s3rver), and against MinIO when a
 * Docker engine is reachable.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { fileIOFor } from '../../src/io/file-io-factory.js';
import { S3FileIO, type S3Config } from '../../src/io/s3-file-io.js';
import { FloeError } from '../../src/util/errors.js';
import { dockerStatus, startMinio, startS3rver, useS3Server } from '../support/s3-server.js';
import { runFileIOBehaviourSuite } from './file-io-behaviour.js';

/** Counts the SDK commands an S3FileIO sends (an observer on the real client, not a mock). */
function countCommands(io: S3FileIO): Map<string, number> {
  const counts = new Map<string, number>();
  io.client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName);
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'floeTestCommandCounter' },
  );
  return counts;
}

const s3rver = useS3Server(startS3rver);

runFileIOBehaviourSuite('S3 (s3rver, ignores If-None-Match)', async () => {
  const io = new S3FileIO(s3rver.config);
  const root = `s3://${s3rver.bucket}/behaviour-${randomUUID()}`;
  return { io, root, listedRoot: root, atomicCreate: false, shallowCommonPrefixes: true, cleanup: () => io.close() };
});

describe('S3FileIO on s3rver', () => {
  const enc = new TextEncoder();

  it('detects that s3rver ignores If-None-Match: the probe says false, cleans up, and is cached per bucket', async () => {
    const io = new S3FileIO(s3rver.config);
    const counts = countCommands(io);
    const root = `s3://${s3rver.bucket}/probe-${randomUUID()}`;
    // The very reason for the probe: on s3rver a second conditional create silently overwrites.
    expect(await io.writeIfAbsent(`${root}/v1.metadata.json`, enc.encode('first'))).toBe(true);
    expect(await io.writeIfAbsent(`${root}/v1.metadata.json`, enc.encode('second'))).toBe(true);
    expect(new TextDecoder().decode(await io.read(`${root}/v1.metadata.json`))).toBe('second');

    const putsBefore = counts.get('PutObjectCommand') ?? 0;
    expect(await io.supportsAtomicCreate(root)).toBe(false);
    expect(counts.get('PutObjectCommand')! - putsBefore).toBe(2);
    expect(await io.supportsAtomicCreate(`s3://${s3rver.bucket}/elsewhere`)).toBe(false);
    expect(counts.get('PutObjectCommand')! - putsBefore).toBe(2); // cached for the bucket
    // No probe object is left behind.
    expect(await io.list(root)).toEqual([`${root}/v1.metadata.json`]);
    await io.close();
  });

  it('probes the location it was created for when fileIOFor made it, and probes each bucket separately', async () => {
    await s3rver.createBucket('second-bucket');
    const io = fileIOFor(`s3://${s3rver.bucket}/wh`, { s3: s3rver.config }) as S3FileIO;
    const counts = countCommands(io);
    expect(await io.supportsAtomicCreate()).toBe(false);
    expect(await io.supportsAtomicCreate('s3://second-bucket/x')).toBe(false);
    expect(counts.get('PutObjectCommand')).toBe(4);
    const bare = new S3FileIO(s3rver.config);
    const err = await bare.supportsAtomicCreate().catch((e: unknown) => e);
    expect((err as FloeError).kind).toBe('invalid-argument');
    await io.close();
    await bare.close();
  });

  it('uploads large objects in parts and reads them back exactly', async () => {
    const io = new S3FileIO({ ...s3rver.config, multipartThresholdBytes: 5 * 1024 * 1024, multipartPartSizeBytes: 5 * 1024 * 1024, multipartConcurrency: 2 });
    const counts = countCommands(io);
    const data = randomBytes(11 * 1024 * 1024 + 123);
    const uri = `s3://${s3rver.bucket}/multipart/${randomUUID()}.parquet`;
    await io.write(uri, data);
    expect(counts.get('CreateMultipartUploadCommand')).toBe(1);
    expect(counts.get('UploadPartCommand')).toBe(3);
    expect(counts.get('CompleteMultipartUploadCommand')).toBe(1);
    expect(await io.size(uri)).toBe(data.length);
    expect(Buffer.from(await io.read(uri)).equals(data)).toBe(true);
    expect(Buffer.from(await io.readRange(uri, 5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 10)).equals(data.subarray(5 * 1024 * 1024 - 10, 5 * 1024 * 1024 + 10))).toBe(true);
    // Small objects are single PUTs.
    await io.write(`${uri}.small`, enc.encode('small'));
    expect(counts.get('PutObjectCommand')).toBe(1);
    await io.close();
  });

  it('follows list pagination to the end', async () => {
    const io = new S3FileIO({ ...s3rver.config, listPageSize: 2 });
    const counts = countCommands(io);
    const root = `s3://${s3rver.bucket}/pages-${randomUUID()}`;
    const names = ['a', 'b', 'c/d', 'c/e', 'f'];
    for (const n of names) await io.write(`${root}/${n}`, enc.encode(n));
    expect(await io.list(root)).toEqual(names.map((n) => `${root}/${n}`));
    expect(counts.get('ListObjectsV2Command')).toBe(3);
    const kids = await io.listChildren(root);
    expect(kids).toEqual({ files: [`${root}/a`, `${root}/b`, `${root}/f`], directories: [`${root}/c`] });
    await io.deleteTree(root);
    expect(await io.list(root)).toEqual([]);
    await io.close();
  });

  it('accepts s3a:// locations and reports a missing bucket as not-found', async () => {
    const io = new S3FileIO(s3rver.config);
    await io.write(`s3a://${s3rver.bucket}/alias/x`, enc.encode('x'));
    expect(await io.exists(`s3://${s3rver.bucket}/alias/x`)).toBe(true);
    const err = await io.read('s3://no-such-bucket-here/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).kind).toBe('not-found');
    const noKey = await io.write(`s3://${s3rver.bucket}/`, enc.encode('x')).catch((e: unknown) => e);
    expect((noKey as FloeError).kind).toBe('invalid-argument');
    await io.close();
  });

  it('never puts credentials into errors', async () => {
    // s3rver checks the access key id (it does not verify SigV4 signatures), so both are wrong here.
    const secret = `wrong-secret-${randomUUID()}`;
    const keyId = `AKIAWRONG${randomUUID().slice(0, 8).toUpperCase()}`;
    const io = new S3FileIO({ ...s3rver.config, accessKeyId: keyId, secretAccessKey: secret, maxAttempts: 1 });
    const err = await io.read(`s3://${s3rver.bucket}/anything`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    const fe = err as FloeError;
    expect(fe.kind).toBe('config');
    expect(fe.message).toMatch(/check the S3 credentials/);
    const everything = JSON.stringify({ message: fe.message, context: fe.context, cause: String(fe.cause), stack: fe.stack });
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(keyId);
    await io.close();
  });

  it('refuses half-configured static credentials', () => {
    expect(() => new S3FileIO({ accessKeyId: 'only-the-id' } as S3Config)).toThrow(/both s3 accessKeyId and secretAccessKey/);
  });

  it('reports an unreachable endpoint as a retryable io error after the SDK retries', async () => {
    const io = new S3FileIO({ ...s3rver.config, endpoint: 'http://127.0.0.1:1', maxAttempts: 2 });
    const err = await io.read('s3://warehouse/x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FloeError);
    expect((err as FloeError).kind).toBe('io');
    expect((err as FloeError).message).toMatch(/cannot read s3:\/\/warehouse\/x/);
    expect((err as FloeError).message).not.toContain('S3RVER');
    await io.close();
  });

  it('leaves no probe objects in the bucket', async () => {
    const io = new S3FileIO(s3rver.config);
    const out = await io.client.send(new ListObjectsV2Command({ Bucket: s3rver.bucket }));
    expect((out.Contents ?? []).filter((o) => o.Key?.includes('.floe-atomic-create-probe'))).toEqual([]);
    await io.close();
  });
});

const docker = await dockerStatus();
if (!docker.available) console.warn(`[floe] skipping S3FileIO MinIO tests: ${docker.reason}`);

describe.skipIf(!docker.available)(`S3FileIO on MinIO (testcontainers)${docker.available ? '' : ` — skipped: ${docker.reason}`}`, () => {
  const minio = useS3Server(startMinio);

  runFileIOBehaviourSuite('S3 (MinIO, honours If-None-Match)', async () => {
    const io = new S3FileIO(minio.config);
    const root = `s3://${minio.bucket}/behaviour-${randomUUID()}`;
    return { io, root, listedRoot: root, atomicCreate: true, cleanup: () => io.close() };
  });

  it('the probe says MinIO has atomic creates, and writeIfAbsent really refuses', async () => {
    const io = new S3FileIO(minio.config);
    const root = `s3://${minio.bucket}/probe-${randomUUID()}`;
    expect(await io.supportsAtomicCreate(root)).toBe(true);
    const enc = new TextEncoder();
    expect(await io.writeIfAbsent(`${root}/v1.metadata.json`, enc.encode('first'))).toBe(true);
    expect(await io.writeIfAbsent(`${root}/v1.metadata.json`, enc.encode('second'))).toBe(false);
    expect(new TextDecoder().decode(await io.read(`${root}/v1.metadata.json`))).toBe('first');
    expect(await io.list(root)).toEqual([`${root}/v1.metadata.json`]);
    await io.close();
  });
});
