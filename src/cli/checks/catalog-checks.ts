/**
 * The catalog part of `floe check`: open the configured catalog and list its namespaces.
 */
import type { FloeConfig } from '../../config/schema.js';
import type { Catalog } from '../../iceberg/metadata/catalog.js';
import type { Logger } from '../../pipeline/observe/logger.js';
import { errorMessage } from '../../util/errors.js';
import { openCatalog } from '../../pipeline/config-options.js';
import type { CheckLine } from './check-line.js';

export async function catalogChecks(config: FloeConfig, logger: Logger): Promise<CheckLine[]> {
  const name = `${config.catalog.type} catalog ${JSON.stringify(config.catalog.name)}`;
  let catalog: Catalog;
  try {
    catalog = openCatalog(config, logger);
  } catch (e) {
    return [{ check: 'catalog.connect', ok: false, severity: 'error', message: `cannot open the ${name}: ${errorMessage(e)}` }];
  }
  try {
    const lines: CheckLine[] = [{ check: 'catalog.connect', ok: true, severity: 'error', message: `opened the ${name}` }];
    try {
      const namespaces = await catalog.listNamespaces();
      const names = namespaces.map((n) => n.join('.'));
      lines.push({
        check: 'catalog.namespaces',
        ok: true,
        severity: 'info',
        message: names.length === 0 ? 'no namespaces yet (floe creates them)' : `${names.length} namespace${names.length === 1 ? '' : 's'}: ${names.slice(0, 8).join(', ')}${names.length > 8 ? ', …' : ''}`,
      });
    } catch (e) {
      lines.push({ check: 'catalog.namespaces', ok: false, severity: 'error', message: `cannot list namespaces of the ${name}: ${errorMessage(e)}` });
    }
    return lines;
  } finally {
    // the check's verdict is already made; a failed close of its probe catalog changes nothing
    await catalog.close?.().catch(() => undefined);
  }
}
