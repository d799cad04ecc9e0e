/**
 * Real S3 endpoints for tests:
 * - `startS3rver()`: the in-process `s3rver` (always available). It speaks enough S3 for floe's
 *   FileIO (GET with Range, PUT, multipart, ListObjectsV2, DeleteObjects) but silently IGNORES
 *   `If-None-Match` on PUT, so it has no atomic create.
 * - `startMinio()`: MinIO through testcontainers when a Docker engine is reachable; `dockerStatus()`
 *   says whether one is (tests skip cleanly, with the reason, otherwise).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../../src/io/s3-file-io.js';

export interface TestS3Server {
  /** Connection settings for S3FileIO (endpoint, path style, static test credentials). */
  config: S3Config;
  /** A bucket that exists and is empty at start. */
  bucket: string;
  /** Creates another bucket. */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ port: number; address: string }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;

const require = createRequire(import.meta.url);

export async function startS3rver(bucket = 'warehouse'): Promise<TestS3Server> {
  const S3rver = require('s3rver') as S3rverConstructor;
  const directory = await mkdtemp(path.join(os.tmpdir(), 'floe-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = await server.run();
  // s3rver's fixed test credentials (it verifies signatures against them).
  const config: S3Config = {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
  };
  return {
    config,
    bucket,
    createBucket: (name) => createBucket(config, name),
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export interface DockerStatus {
  available: boolean;
  reason: string;
}

let dockerStatusPromise: Promise<DockerStatus> | undefined;

/** Whether testcontainers can reach a container runtime (checked once per test process). */
export function dockerStatus(): Promise<DockerStatus> {
  dockerStatusPromise ??= (async () => {
    try {
      const { getContainerRuntimeClient } = await import('testcontainers');
      const client = await getContainerRuntimeClient();
      return { available: true, reason: `container runtime ${client.info.containerRuntime.host}` };
    } catch (e) {
      return { available: false, reason: `no Docker engine reachable (${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
    }
  })();
  return dockerStatusPromise;
}

/** A MinIO release that honours `If-None-Match: *` on PutObject (conditional writes). */
export const MINIO_IMAGE = 'minio/minio:RELEASE.2025-04-22T22-12-26Z';

export async function startMinio(bucket = 'warehouse'): Promise<TestS3Server> {
  const { MinioContainer } = await import('@testcontainers/minio');
  const container = await new MinioContainer(MINIO_IMAGE).withUsername('floeminio').withPassword('floeminio-secret').start();
  const config: S3Config = {
    endpoint: container.getConnectionUrl(),
    region: 'us-east-1',
    forcePathStyle: true,
    accessKeyId: container.getUsername(),
    secretAccessKey: container.getPassword(),
  };
  await createBucket(config, bucket);
  return {
    config,
    bucket,
    createBucket: (name) => createBucket(config, name),
    async stop() {
      await container.stop();
    },
  };
}

async function createBucket(config: S3Config, name: string): Promise<void> {
  const client = new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    forcePathStyle: true,
    credentials: { accessKeyId: config.accessKeyId!, secretAccessKey: config.secretAccessKey! },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  } finally {
    client.destroy();
  }
}
