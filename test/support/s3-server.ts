/**
 * Real S3 endpoints for tests:
 * - `startS3rver()`: `s3rver` in a child process (always available). It speaks enough S3 for floe's
 *   FileIO (GET with Range, PUT, multipart, ListObjectsV2, DeleteObjects) but silently IGNORES
 *   `If-None-Match` on PUT, so it has no atomic create.
 * - `startMinio()`: MinIO through testcontainers when a Docker engine is reachable; `dockerStatus()`
 *   says whether one is (tests skip cleanly, with the reason, otherwise).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Config } from '../../src/io/s3-file-io.js';
import { madeBeforeAll } from './before-all.js';

export interface TestS3Server {
  /** Connection settings for S3FileIO (endpoint, path style, static test credentials). */
  config: S3Config;
  /** A bucket that exists and is empty at start. */
  bucket: string;
  /** Creates another bucket. */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An S3 server for the tests of the calling file (or describe block): `start`ed before the first,
 * stopped after the last; its fields are readable inside tests and hooks.
 */
export function useS3Server(start: () => Promise<TestS3Server>): TestS3Server {
  const server = madeBeforeAll('the S3 server', start, (s) => s.stop());
  return {
    get config() {
      return server().config;
    },
    get bucket() {
      return server().bucket;
    },
    createBucket: (name) => server().createBucket(name),
    stop: () => server().stop(),
  };
}

/**
 * Starts s3rver in a child process on a free port with a fresh temporary directory (see
 * s3rver-process.cjs for why it is not in this process).
 */
export async function startS3rver(bucket = 'warehouse'): Promise<TestS3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'floe-s3rver-'));
  const script = fileURLToPath(new URL('./s3rver-process.cjs', import.meta.url));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', script, directory, bucket], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n')) resolve((JSON.parse(line!) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited with code ${code} before listening: ${stderr}`)));
    child.once('error', reject);
  });
  // s3rver's fixed test credentials (it checks the access key id; SigV4 signatures are not verified).
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
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
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
    if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock') && !existsSync(path.join(os.homedir(), '.docker', 'run', 'docker.sock'))) {
      return { available: false, reason: 'no Docker engine reachable (DOCKER_HOST is unset and there is no docker.sock)' };
    }
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
const MINIO_IMAGE = 'minio/minio:RELEASE.2025-04-22T22-12-26Z';

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

/** Creates bucket `name` on the S3 server of `config` (path-style). */
export async function createBucket(config: S3Config, name: string): Promise<void> {
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
