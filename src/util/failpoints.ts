/**
 * Failure injection at the steps of a commit that matter for crash safety (flink-cdc's snapshot
 * hooks; iceberg-rust's failing-catalog tests). Production code calls `await failpoint(name)` at each
 * step; it is a no-op unless a test armed that point.
 *
 * Arming:
 * - in-process: `armFailpoint(name, { after: n, action: 'throw' })` — the (n+1)-th hit throws a FloeError
 *   (kind 'internal', message starting "failpoint <name>");
 * - in a child process: env `FLOE_FAILPOINTS="after-manifests:2:exit,after-catalog-swap:0:throw"` —
 *   `exit` kills the process at once with SIGKILL-like abruptness (`process.kill(process.pid, 'SIGKILL')`),
 *   so nothing after it runs, as in a real crash.
 */
import { FloeError } from './errors.js';

export type FailPointName =
  | 'after-data-files'
  | 'after-manifests'
  | 'after-manifest-list'
  | 'after-metadata-file'
  | 'after-catalog-swap'
  // maintenance (docs/design.md §4b): compaction's own step, then the commit path's steps scoped to it
  // (snapshot-producer `failpointScope`), so that they do not fire in checkpoint commits
  | 'compaction-after-rewrite-files'
  | 'compaction-after-manifests'
  | 'compaction-after-manifest-list'
  | 'compaction-before-catalog-swap'
  | 'compaction-after-catalog-swap'
  // floe run's writer following its own compaction: committed, the key index not yet moved
  | 'key-index-before-follow-compaction'
  // expiry: committed, nothing deleted yet; after each file it deletes
  | 'expire-after-commit'
  | 'expire-mid-delete'
  // orphan removal: after each file it deletes
  | 'orphans-mid-delete'
  // a schema change committed to the Iceberg table (schema-change-apply.ts), the next checkpoint not yet
  | 'after-schema-change-commit'
  // a snapshot chunk read from MySQL, not yet handed to the pipeline (source-stream.ts)
  | 'snapshot-chunk-read'
  | (string & {});

export type FailAction = 'throw' | 'exit' | 'hang';

interface Armed {
  remaining: number;
  action: FailAction;
}

const armed = new Map<string, Armed>();
const triggered = new Set<string>();
let envParsed = false;

function parseEnv(): void {
  if (envParsed) return;
  envParsed = true;
  const spec = process.env.FLOE_FAILPOINTS;
  if (!spec) return;
  for (const part of spec.split(',')) {
    const [name, after, action] = part.trim().split(':');
    if (!name) continue;
    armed.set(name, { remaining: Number(after ?? 0), action: (action as FailAction) ?? 'throw' });
  }
}

export function armFailpoint(name: FailPointName, options: { after?: number; action?: FailAction } = {}): void {
  parseEnv();
  armed.set(name, { remaining: options.after ?? 0, action: options.action ?? 'throw' });
}

export function disarmFailpoints(): void {
  armed.clear();
  triggered.clear();
}

/** Whether an armed failpoint has fired since the last `disarmFailpoints()` (tests wait on a 'hang'). */
export function failpointTriggered(name: FailPointName): boolean {
  return triggered.has(name);
}

export async function failpoint(name: FailPointName): Promise<void> {
  parseEnv();
  if (armed.size === 0) return;
  const a = armed.get(name);
  if (!a) return;
  if (a.remaining > 0) {
    a.remaining--;
    return;
  }
  armed.delete(name);
  triggered.add(name);
  if (a.action === 'exit') {
    process.kill(process.pid, 'SIGKILL');
    await new Promise(() => {}); // never continue
  }
  if (a.action === 'hang') await new Promise(() => {});
  throw new FloeError('util.failpoint', 'internal', `failpoint ${name} triggered (test injection)`);
}
