/**
 * floe's one error type. Every error names the subsystem it comes from, carries a kind that callers
 * branch on, and says whether retrying the same operation can succeed (iceberg-rust `ErrorKind`,
 * pyiceberg `CommitFailedException` vs `CommitStateUnknownException`).
 *
 * Messages follow the house rule: subsystem, what was expected, what was found, what to do.
 * Never put credentials into a message or into `context`.
 */
export type ErrorKind =
  | 'invalid-argument' // the caller passed something malformed (bad config, bad path)
  | 'invalid-data' // a file or metadata document violates the spec
  | 'not-found'
  | 'already-exists'
  | 'unsupported'
  | 'commit-conflict' // optimistic commit lost a race: reload and retry
  | 'commit-state-unknown' // request sent, outcome unknown: never delete files, reload and check
  | 'io' // storage failed
  | 'source' // the MySQL source failed or is misconfigured
  | 'config'
  | 'internal';

/**
 * Where an error comes from: the src/ folder (the layer), then the area inside it, dotted and in
 * lower case — `source.mysql.binlog`, `iceberg.writer`, `catalog.rest`, `io.s3`, `pipeline.state`,
 * `cli.scan`, `util.json`. Messages start with it, so one name says where to look.
 */
type Layer = 'source' | 'iceberg' | 'catalog' | 'io' | 'pipeline' | 'cli' | 'demo' | 'config' | 'util';
export type Subsystem = Layer | `${Layer}.${string}`;

export class FloeError extends Error {
  readonly subsystem: Subsystem;
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  readonly context: Record<string, string>;
  /**
   * The message without its subsystem prefix, for a caller that puts it into a sentence of its own
   * (a check line, an error that adds its context): the subsystem is then named once, or not at all.
   */
  readonly detail: string;

  constructor(
    subsystem: Subsystem,
    kind: ErrorKind,
    message: string,
    options: { retryable?: boolean; cause?: unknown; context?: Record<string, string> } = {},
  ) {
    super(`${subsystem}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'FloeError';
    this.subsystem = subsystem;
    this.kind = kind;
    this.retryable = options.retryable ?? (kind === 'commit-conflict');
    this.context = options.context ?? {};
    this.detail = message;
  }
}

export function isFloeError(e: unknown, kind?: ErrorKind): e is FloeError {
  return e instanceof FloeError && (kind === undefined || e.kind === kind);
}

/** Text of any thrown value, for logs. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
