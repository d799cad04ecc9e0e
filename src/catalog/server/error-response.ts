/**
 * FloeError → the REST protocol's error response: HTTP status and `{"error": {message, type, code}}`
 * (ErrorModel). Exception type names are Java's, because Java clients (Trino, Spark) choose the
 * exception they throw from the status and, for 404 and 409, from the type
 * (`ErrorHandlers.tableErrorHandler` / `namespaceErrorHandler`):
 *
 * | FloeError kind                 | status | type                                                      |
 * |--------------------------------|--------|-----------------------------------------------------------|
 * | not-found                      | 404    | NoSuchTableException / NoSuchNamespaceException (by route) |
 * | already-exists                 | 409    | AlreadyExistsException                                    |
 * | commit-conflict                | 409    | CommitFailedException                                     |
 * | invalid-argument, invalid body | 400    | BadRequestException (namespace not empty: 409 NamespaceNotEmptyException) |
 * | unsupported                    | 406    | UnsupportedOperationException                             |
 * | commit-state-unknown           | 500    | CommitStateUnknownException                               |
 * | io (storage, database)         | 503    | ServiceUnavailableException                               |
 * | anything else                  | 500    | InternalServerError                                       |
 *
 * Clients treat every 5xx on a commit as "state unknown", which is safe: 5xx is only sent when the
 * server cannot be sure nothing changed, or when it failed before doing anything.
 */
import { errorMessage, isFloeError } from '../../util/errors.js';
import type { ErrorModel } from '../rest/rest-json.js';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export type NotFoundType = 'NoSuchTableException' | 'NoSuchNamespaceException';

export interface ErrorContext {
  /** Which 404 type applies to this route. */
  notFound?: NotFoundType;
  /** The route drops a namespace: invalid-argument with context.reason "not-empty" is a 409. */
  dropNamespace?: boolean;
}

export function errorModelFor(e: unknown, context: ErrorContext = {}): ErrorModel {
  if (e instanceof HttpError) return { code: e.status, type: e.type, message: e.message };
  const message = errorMessage(e);
  if (!isFloeError(e)) return { code: 500, type: 'InternalServerError', message };
  switch (e.kind) {
    case 'not-found':
      return { code: 404, type: context.notFound ?? 'NoSuchTableException', message };
    case 'already-exists':
      return { code: 409, type: 'AlreadyExistsException', message };
    case 'commit-conflict':
      return { code: 409, type: 'CommitFailedException', message };
    case 'invalid-argument':
      // only the catalogs' "not empty" refusal is a 409; a bad name in a drop is the client's 400
      return context.dropNamespace && e.context.reason === 'not-empty' ? { code: 409, type: 'NamespaceNotEmptyException', message } : { code: 400, type: 'BadRequestException', message };
    case 'unsupported':
      return { code: 406, type: 'UnsupportedOperationException', message };
    case 'commit-state-unknown':
      return { code: 500, type: 'CommitStateUnknownException', message };
    case 'io':
      return { code: 503, type: 'ServiceUnavailableException', message };
    default:
      return { code: 500, type: 'InternalServerError', message };
  }
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, 'BadRequestException', message);
}
