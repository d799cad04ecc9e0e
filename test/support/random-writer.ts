/**
 * Random transactions against MySQL while floe runs, for the crash, restart and DDL tests: 1–3
 * statements per transaction (the subclass's `statement`, drawn from `random`), a pause between
 * transactions, until stopped. A transaction the server refuses (e.g. an internal temporary file
 * gone) did not happen and MySQL stays the truth: it is rolled back and counted in `failures`, so
 * that a systematic failure shows, not thrown.
 */
import type mysql from 'mysql2/promise';

export abstract class RandomTransactionWriter {
  private stopped = true;
  private running: Promise<void> | undefined;
  transactions = 0;
  readonly failures: string[] = [];

  constructor(
    protected readonly conn: mysql.Connection,
    protected readonly random: () => number,
    private readonly pauseMs: number,
  ) {}

  /** Starts writing (again, after a stop). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.running = this.loop();
  }

  /** Stops after the current transaction; rejects with the writer's error if it failed. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  protected int(n: number): number {
    return Math.floor(this.random() * n);
  }

  /** Once per start, before the first transaction (session settings). */
  protected async prepare(): Promise<void> {}

  /** The next statement of a transaction. */
  protected abstract statement(): string;

  private async loop(): Promise<void> {
    await this.prepare();
    while (!this.stopped) {
      await this.conn.beginTransaction();
      try {
        const ops = 1 + this.int(3);
        for (let i = 0; i < ops; i++) await this.conn.query(this.statement());
        await this.conn.commit();
        this.transactions++;
      } catch (e) {
        await this.conn.rollback();
        this.failures.push(String((e as Error).message));
      }
      await new Promise((r) => setTimeout(r, this.pauseMs));
    }
  }
}
