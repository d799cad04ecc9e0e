/**
 * The rows of Iceberg's JdbcCatalog `iceberg_tables` table that point at each table's current
 * metadata file, for the SQL catalog (sql-catalog.ts): reading a pointer, the compare-and-swap a
 * commit ends with (Java `JdbcTableOperations.doCommit`: `UPDATE … WHERE metadata_location = old`),
 * including what a connection lost during the UPDATE means, and the refusal of a name that is taken.
 */
import type { FileIO } from '../../io/file-io.js';
import { identifierToString, type TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { errorMessage, FloeError } from '../../util/errors.js';
import { checkTableIdentifier } from '../identifiers.js';
import type { SqlDriver, SqlExecutor } from './sql-driver.js';
import { storedNamespace } from './sql-namespaces.js';
import { SQL } from './sql-statements.js';

const SUBSYSTEM = 'catalog.sql';

export class SqlTablePointers {
  constructor(
    private readonly driver: SqlDriver,
    /** `catalog_name` of the rows. */
    private readonly name: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** The table's `metadata_location`, or undefined when the catalog has no such table. */
  async read(identifier: TableIdentifier, on: SqlExecutor = this.driver): Promise<string | undefined> {
    checkTableIdentifier(identifier);
    const rows = (await on.execute(SQL.getTable, [this.name, storedNamespace(identifier.namespace), identifier.name])).rows;
    if (rows.length === 0) return undefined;
    const location = rows[0]!.metadata_location;
    if (location == null || location === '') {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${identifierToString(identifier)} has no metadata_location in ${this.driver.description}; drop the row or register the table again`);
    }
    return String(location);
  }

  /** The compare-and-swap. true: landed; false: the pointer had moved. Unknown outcomes throw. */
  async swap(on: SqlExecutor, identifier: TableIdentifier, oldLocation: string, newLocation: string, io: FileIO): Promise<boolean> {
    const stored = storedNamespace(identifier.namespace);
    try {
      const r = await on.execute(SQL.commitTable, [newLocation, oldLocation, this.name, stored, identifier.name, oldLocation]);
      return r.affectedRows === 1;
    } catch (e) {
      if (!this.driver.isConnectionLoss(e)) {
        await this.deleteOrphan(io, newLocation); // the server refused the statement: nothing changed
        throw e;
      }
      // Delivery guarantee weakens here: the UPDATE may have run. Read back once.
      let now: string | undefined;
      try {
        now = await this.read(identifier);
      } catch {
        now = undefined;
      }
      if (now === newLocation) return true;
      throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `the connection to ${this.driver.description} was lost while swapping the metadata pointer of ${identifierToString(identifier)} to ${newLocation} (${errorMessage(e)}); the commit may or may not have landed: do not delete its files, reload the table and look for its snapshot before retrying`, { cause: e, retryable: false });
    }
  }

  async refuseExisting(identifier: TableIdentifier): Promise<void> {
    const rows = (await this.driver.execute(SQL.getAnyEntry, [this.name, storedNamespace(identifier.namespace), identifier.name])).rows;
    if (rows.length > 0) {
      const type = rows[0]!.iceberg_type;
      throw new FloeError(SUBSYSTEM, 'already-exists', `${type === 'VIEW' ? 'a view' : 'table'} ${identifierToString(identifier)} already exists in catalog ${this.name}`);
    }
  }

  async deleteOrphan(io: FileIO, location: string): Promise<void> {
    try {
      await io.delete(location);
    } catch (e) {
      this.warn(`${SUBSYSTEM}: could not delete the unreferenced metadata file ${location}: ${errorMessage(e)}`);
    }
  }
}
