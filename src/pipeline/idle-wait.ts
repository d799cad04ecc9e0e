/**
 * How long this thread sat idle while it awaited something: the event loop's time blocked in the
 * poll phase with nothing to run (libuv's idle time, `performance.eventLoopUtilization`), not the
 * wall time of the await. A wait for the source's next event measured by the clock also counts the
 * callbacks that ran meanwhile — a key index loading in the background (a restart's 2M-row image
 * applied, the commits after it read from the lake), a commit's steps — so a stream still
 * delivering a backlog would look quiet for their length: the early checkpoint of
 * `commit.whenCaughtUp` would be cut in the middle of the backlog, and the backlog's end would wait
 * for the interval (10 s by default). Idle time is what the source left this thread with nothing to do.
 */
import { performance } from 'node:perf_hooks';

/** Milliseconds idle so far (monotonic; only differences mean anything). */
function idleMs(): number {
  return performance.eventLoopUtilization().idle;
}

/** `wait`'s result, with the milliseconds the thread sat idle until it came. */
export async function idleWait<T>(wait: () => Promise<T>): Promise<{ value: T; idleMs: number }> {
  const idle = idleMs();
  const value = await wait();
  return { value, idleMs: idleMs() - idle };
}
