/**
 * A recorded MySQL server: a fake mysql2 connection (the `DriverConnection` client.ts lets a caller
 * inject) that answers every statement floe sends with the rows, or the error, a server of one
 * version gives — for servers that cannot run here (MySQL 8.4, 9.x). Each answer is written down from
 * that version's manual (cited where the recording is made); a statement the recording has no answer
 * for fails the caller with ER_NOT_RECORDED, so a new statement floe starts sending is noticed, not
 * answered by a guess. `sent` keeps every statement in order.
 *
 * What the fake does itself: `SET …` succeeds (an OK packet), `SELECT @@version AS v` gives the
 * version, and `SHOW GLOBAL VARIABLES WHERE Variable_name IN (…)` returns the recorded variables among
 * those asked for — a variable the version does not have is simply absent, as on the server.
 */
import type { DriverConnection } from '../../src/source/mysql/client.js';

/** A server error as mysql2 reports it (code, errno, SQLSTATE, the server's message). */
export interface RecordedError {
  code: string;
  errno: number;
  sqlState: string;
  message: string;
}

type RecordedAnswer = { rows: Record<string, unknown>[] } | { error: RecordedError };

export interface RecordedServer {
  /** `@@version`. */
  version: string;
  /** Global variables (SHOW GLOBAL VARIABLES): name → value as the server prints it. */
  variables: Readonly<Record<string, string>>;
  /** Statements by their exact text or a pattern, first match wins. */
  answers: readonly (readonly [string | RegExp, RecordedAnswer])[];
}

/**
 * The error MySQL gives for a statement its grammar does not have (a statement removed in that
 * version): ER_PARSE_ERROR, quoting the text from where parsing failed.
 */
export function parseError(near: string): RecordedError {
  return {
    code: 'ER_PARSE_ERROR',
    errno: 1064,
    sqlState: '42000',
    message: `You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '${near}' at line 1`,
  };
}

function answerFor(server: RecordedServer, sql: string): RecordedAnswer {
  if (/^SET\s/i.test(sql)) return { rows: [] };
  if (sql === 'SELECT @@version AS v') return { rows: [{ v: server.version }] };
  const variables = /^SHOW GLOBAL VARIABLES WHERE Variable_name IN \((.*)\)$/s.exec(sql);
  if (variables) {
    const asked = [...variables[1]!.matchAll(/'([^']*)'/g)].map((m) => m[1]!);
    return { rows: asked.filter((name) => name in server.variables).map((name) => ({ Variable_name: name, Value: server.variables[name] })) };
  }
  for (const [match, answer] of server.answers) if (typeof match === 'string' ? match === sql : match.test(sql)) return answer;
  return { error: { code: 'ER_NOT_RECORDED', errno: 0, sqlState: 'HY000', message: `the recorded MySQL ${server.version} has no answer for ${JSON.stringify(sql)}: record what that version answers (from its manual)` } };
}

/** A driver factory for `connectMysql(config, { driver })` that talks to `server`, logging into `sent`. */
export function recordedDriver(server: RecordedServer, sent: string[]): (options: Record<string, unknown>) => DriverConnection {
  return () => {
    const connection = {
      threadId: 42,
      connect(callback: (err: Error | null) => void): void {
        setImmediate(() => callback(null));
      },
      query(options: { sql: string }, callback?: (err: Error | null, rows: unknown, fields: undefined) => void): unknown {
        if (!callback) throw new Error(`the recorded MySQL ${server.version} does not stream results (${options.sql})`);
        sent.push(options.sql);
        const answer = answerFor(server, options.sql);
        setImmediate(() => {
          if ('error' in answer) callback(Object.assign(new Error(answer.error.message), { ...answer.error, sqlMessage: answer.error.message, fatal: false }), undefined, undefined);
          // a statement without a result set: mysql2 hands over a ResultSetHeader, not rows
          else callback(null, /^SET\s/i.test(options.sql) ? { affectedRows: 0 } : answer.rows.map((r) => ({ ...r })), undefined);
        });
        return undefined;
      },
      end(callback: (err?: Error | null) => void): void {
        setImmediate(() => callback(null));
      },
      destroy(): void {},
      on(): unknown {
        return connection;
      },
    };
    return connection as unknown as DriverConnection;
  };
}
