/**
 * The binlog worker thread (worker-session.ts starts it): one replication session with its
 * transaction assembly (assembled-session.ts), its batches posted to the reader in plain form
 * (worker-wire.ts) — one message per turn of the event loop, i.e. per socket read — and the reader's
 * pause / resume / stop carried out here.
 */
import { parentPort } from 'node:worker_threads';
import { parseOffset } from '../offset/offset.js';
import { startLocalSession, type AssembledBatch, type AssemblingSession, type AssemblingSessionOptions } from './assembled-session.js';
import { WireEncoder, errorFields, type WireBatch, type WorkerMessage } from './worker-wire.js';

const port = parentPort!;
const wire = new WireEncoder();
let pending: WireBatch[] = [];
let scheduled = false;
let failed = false;

const post = (m: WorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

function flush(): void {
  scheduled = false;
  if (pending.length === 0 || failed) return;
  const { maps, transfer } = wire.take();
  const batches = pending;
  pending = [];
  post({ type: 'batches', batches, maps }, transfer);
}

function onBatch(b: AssembledBatch): void {
  // a batch without items inside a transaction changes nothing the reader keeps
  if (b.items.length === 0 && b.inTransaction) return;
  pending.push(wire.batch(b));
  if (pending.length >= 256) flush();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

type Control = { type: 'start'; options: Omit<AssemblingSessionOptions, 'assemblerStart'> & { assemblerStart: string } } | { type: 'pause' | 'resume' | 'stop' };

let session: AssemblingSession | undefined;
let announce: NodeJS.Timeout | undefined;

function onError(e: unknown): void {
  if (failed) return;
  flush();
  failed = true;
  post({ type: 'error', error: errorFields(e) });
}

function start(options: Control & { type: 'start' }): void {
  const s = startLocalSession(
    { ...options.options, assemblerStart: parseOffset(options.options.assemblerStart) },
    {
      onBatch: (b) => {
        try {
          onBatch(b);
        } catch (e) {
          onError(e);
        }
      },
      onError,
    },
  );
  session = s;
  // the dump connection's thread id, once the handshake gave it (tests KILL it; zongji has no event for it)
  announce = setInterval(() => {
    const id = s.threadId;
    if (id === undefined || failed) return;
    clearInterval(announce);
    post({ type: 'thread', threadId: id });
  }, 20);
}

port.on('message', (m: Control) => {
  if (m.type === 'start') {
    try {
      start(m);
    } catch (e) {
      onError(e);
    }
  } else if (m.type === 'pause') session?.pause();
  else if (m.type === 'resume') session?.resume();
  else {
    clearInterval(announce);
    // what was read before the stop was asked for is of no use any more: the reader stopped
    pending = [];
    void (session?.stop() ?? Promise.resolve()).then(() => {
      post({ type: 'stopped' });
      port.close();
    });
  }
});
