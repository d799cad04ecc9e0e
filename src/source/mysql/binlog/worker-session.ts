/**
 * A replication session in a worker thread (binlog-worker.ts): the dump connection's socket, mysql2's
 * packet parsing, zongji's event framing and the transaction assembly run there, beside the pipeline;
 * this thread receives the assembled batches (worker-wire.ts) and decodes the rows when the consumer
 * takes each transaction, as with a session on this thread. pause / resume (the reader's
 * backpressure) reach the worker as messages, so up to one message of batches more may arrive after
 * a pause.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker, threadModuleBeside } from '../../../io/module-worker.js';
import type { TableMapEntry } from '@vlasky/zongji';
import type { AssemblingSession, AssemblingSessionOptions, SessionHandlers } from './assembled-session.js';
import { serializeOffset } from '../offset/offset.js';
import { WireDecoder, errorFromFields, type WorkerMessage } from './worker-wire.js';

/**
 * The worker beside this module: the build as is; from the TypeScript sources (tests, a source
 * checkout — bin/floe.mjs) through tsx, registered inside the worker (loader hooks are per thread).
 * It waits for its session's options (`start`).
 */
function spawnWorker(): Worker {
  return startModuleWorker(threadModuleBeside(import.meta.url, 'binlog-worker'));
}

/** A worker started ahead of its session, so that its start-up (loading its modules) overlaps the caller's. */
let spare: Worker | undefined;

/**
 * Starts a worker for the next session now (idempotent). It does not keep the process alive, and
 * one that fails before it is used is dropped.
 */
export function prewarmBinlogWorker(): void {
  if (spare) return;
  const w = spawnWorker();
  const drop = (): void => {
    if (spare === w) spare = undefined;
  };
  // a spare's start-up failure is reported by the session that would have used it (it spawns its own)
  w.on('error', drop);
  w.on('exit', drop);
  w.unref();
  spare = w;
}

function takeWorker(): Worker {
  const w = spare ?? spawnWorker();
  spare = undefined;
  w.removeAllListeners('error').removeAllListeners('exit');
  w.ref();
  return w;
}

export function startWorkerSession(options: AssemblingSessionOptions, handlers: SessionHandlers): AssemblingSession {
  const worker = takeWorker();
  // the start offset in floe's offset text: a GTID state is a class, which a clone would flatten
  worker.postMessage({ type: 'start', options: { ...options, assemblerStart: serializeOffset(options.assemblerStart) } });
  const wire = new WireDecoder();
  let threadId: number | undefined;
  let done = false;
  let stopped: (() => void) | undefined;
  const fail = (e: unknown): void => {
    if (done) return;
    done = true;
    handlers.onError(e);
  };
  worker.on('message', (m: WorkerMessage) => {
    if (m.type === 'stopped') {
      stopped?.();
      return;
    }
    if (done) return;
    if (m.type === 'thread') {
      threadId = m.threadId;
      return;
    }
    if (m.type === 'error') {
      fail(errorFromFields(m.error));
      return;
    }
    wire.addMaps(m.maps);
    try {
      for (const b of m.batches) {
        if (done) return;
        handlers.onBatch(wire.batch(b));
      }
    } catch (e) {
      fail(e);
    }
  });
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => {
    stopped?.();
    if (!done && stopped === undefined) fail(new Error(`binlog worker thread exited (code ${code}) before it was stopped`));
  });
  return {
    pause: () => worker.postMessage({ type: 'pause' }),
    resume: () => worker.postMessage({ type: 'resume' }),
    async stop() {
      done = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        timer.unref();
        stopped = () => {
          clearTimeout(timer);
          resolve();
        };
        worker.postMessage({ type: 'stop' });
      });
      // the session stopped (or did not answer in time): the thread goes either way
      await worker.terminate();
    },
    get threadId() {
      return threadId;
    },
    // rows cross the boundary as bytes only: zongji's row images are never decoded here
    tableMaps: new Map<string, TableMapEntry>(),
  };
}
