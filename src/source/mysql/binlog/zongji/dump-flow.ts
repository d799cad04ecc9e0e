/**
 * Flow control of the dump connection, which two parties pause: zongji, while it looks up a
 * TABLE_MAP's columns in information_schema (binlog_row_metadata below FULL), because the table's
 * rows events cannot be parsed before that answer; and the session, for backpressure. mysql2's
 * `pause()` is one flag, so a `resume()` by either would let packets through while the other still
 * holds them back — a backpressure resume during zongji's look-up had the rows events parsed with no
 * table to parse them with, and zongji skips such events: their rows were lost without an error.
 * Here the connection stays paused while anyone holds it paused (each pause is released by one
 * resume; zongji's and the session's come in pairs).
 *
 * `beforeResume` runs when the last hold is released, before mysql2 lets its held packets through:
 * whoever feeds events that are not packets of the socket (the inner events of a compressed
 * transaction, zongji-payload-events.ts) feeds them there, ahead of the packets that came after.
 */

/** The two methods of a mysql2 connection this wraps. */
interface PausableConnection {
  pause(): void;
  resume(): void;
}

export class DumpFlow {
  private holds = 0;
  /** Runs when the last hold is released; false keeps the connection paused (a hold was taken again). */
  beforeResume: () => boolean = () => true;

  /** Wraps `connection`'s pause and resume: every caller's pause and resume then goes through here. */
  constructor(connection: PausableConnection) {
    const pause = connection.pause.bind(connection);
    const resume = connection.resume.bind(connection);
    connection.pause = () => {
      if (this.holds++ === 0) pause();
    };
    connection.resume = () => {
      if (this.holds > 0) this.holds--;
      if (this.holds === 0 && this.beforeResume()) resume();
    };
  }

  /** Whether someone holds the connection paused. */
  get paused(): boolean {
    return this.holds > 0;
  }
}
