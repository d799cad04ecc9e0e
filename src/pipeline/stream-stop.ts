/**
 * Waiting on the source stream without outliving a stop: the next event or the stop signal,
 * whichever comes first, and a bounded wait for the stream's own cleanup (a snapshot chunk being
 * read holds reader connections that only its generator's cleanup closes).
 */

export const STOP = Symbol('stop');

/**
 * What `read` gives (the next source event), or STOP when `signal` aborts first. Not `Promise.race`
 * with one long-lived stop promise: every race leaves a reaction on that promise which holds the
 * race's result, so every event (snapshot chunks with all their rows) would stay reachable until the
 * run ends (nodejs/node#17469) — memory growing with the table, and the GC copying it over and over.
 */
export function nextOrStop<T>(read: () => Promise<T>, signal: AbortSignal): Promise<T | typeof STOP> {
  if (signal.aborted) return Promise.resolve(STOP);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(STOP);
    signal.addEventListener('abort', onAbort, { once: true });
    read().then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Waits for `p` (its failure ignored) at most `ms`; `onTimeout` when it did not settle by then. */
export async function settleWithin(p: Promise<unknown> | undefined, ms: number, onTimeout: () => void): Promise<void> {
  if (!p) return;
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  clearTimeout(timer);
  if (!settled) onTimeout();
}
