/**
 * The state objects (state.ts) a table's checkpoint stamps reference: for orphan removal
 * (iceberg/maintenance/remove-orphan-files.ts `referencedObjects`), which must keep them while a
 * retained snapshot's or a job's stamp names them — the table's metadata cannot show them, and their
 * format is this layer's. Each stamp's progress names its progress object, and that object its plan.
 */
import { everyStampedProgress } from '../iceberg/checkpoint/index.js';
import type { FileIO } from '../io/file-io.js';
import type { TableMetadata } from '../iceberg/spec/table-metadata.js';

const decoder = new TextDecoder();

/** Every state object a stamp of `table` names (a progress object and its plan). */
export async function referencedStateObjects(table: { io: FileIO; metadata: TableMetadata }): Promise<string[]> {
  const out = new Set<string>();
  for (const progress of everyStampedProgress(table.metadata)) for (const p of await stateObjectsOf(table.io, progress)) out.add(p);
  return [...out];
}

/** The state objects a `floe.source-offset` names: its progress object and that object's plan. */
async function stateObjectsOf(io: FileIO, sourceOffset: string): Promise<string[]> {
  let state: unknown;
  try {
    state = (JSON.parse(sourceOffset) as { snapshot?: { state?: unknown } }).snapshot?.state;
  } catch {
    return [];
  }
  if (typeof state !== 'string') return [];
  try {
    const plan = (JSON.parse(decoder.decode(await io.read(state))) as { plan?: unknown }).plan;
    return typeof plan === 'string' ? [state, plan] : [state];
  } catch {
    return [state]; // unreadable or gone: what it named cannot be told, the object itself stays
  }
}
