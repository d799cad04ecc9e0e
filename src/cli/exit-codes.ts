/**
 * floe's exit codes (also printed by `floe --help` and listed in docs/operations.md).
 * Scripts and supervisors branch on them: restart on 1, page a person on 3 and 4, never restart on 2.
 * `floe verify` gives 1 when a table could not be verified, 3 when the source or the job lock could
 * not be had (as `floe check`), 4 when the lake differs.
 */
export const ExitCode = {
  /** Done: snapshot complete, clean stop after a signal, all checks passed. */
  ok: 0,
  /** The pipeline or the command failed (see the log); usually worth a restart. */
  failure: 1,
  /** Bad configuration or command line; fix it before trying again. */
  usage: 2,
  /** A pre-flight check failed (`floe check` / the checks `floe run` starts with). */
  preflight: 3,
  /** Stopped at a DDL statement (schemaChanges: stop): everything before it is committed. */
  ddlStop: 4,
  /** `floe verify` found the lake different from MySQL (also when --repair fixed it). */
  differences: 4,
  /** A second SIGINT/SIGTERM forced the exit before the current checkpoint was committed. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = `
Exit codes:
  0    ok: snapshot complete, clean stop after SIGINT/SIGTERM, all checks passed
  1    failure (see the log)
  2    bad configuration or usage
  3    a pre-flight check failed
  4    stopped at a DDL statement (schemaChanges: stop); everything before it is committed —
       floe verify: the lake differs from MySQL (also when --repair fixed it)
  130  interrupted twice: forced exit before the current checkpoint was committed`;
