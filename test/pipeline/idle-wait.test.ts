/**
 * The runner's measure of a source's silence (src/pipeline/idle-wait.ts): the time the thread sat
 * idle while it waited, not the wait's wall time — callbacks that ran meanwhile (a key index loading
 * beside the stream) are not a quiet source.
 */
import { describe, expect, it } from 'vitest';
import { idleWait } from '../../src/pipeline/idle-wait.js';

function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('idleWait', () => {
  it('a wait spent running other callbacks is not idle; a wait for a timer is', async () => {
    // the event is there after one I/O turn, and the thread was busy 80 ms before it could take it
    const started = performance.now();
    const busy = await idleWait(() => new Promise<string>((resolve) => setImmediate(() => (busyFor(80), resolve('event')))));
    expect(busy.value).toBe('event');
    expect(performance.now() - started, 'the wall time of the wait').toBeGreaterThanOrEqual(80);
    expect(busy.idleMs, 'idle while another callback ran').toBeLessThan(25);

    const quiet = await idleWait(() => new Promise<string>((resolve) => setTimeout(() => resolve('late'), 80)));
    expect(quiet.value).toBe('late');
    expect(quiet.idleMs, 'idle while nothing came').toBeGreaterThanOrEqual(60);
  });
});
