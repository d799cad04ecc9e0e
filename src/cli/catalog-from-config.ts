/**
 * The catalog and storage a command works on, from floe's configuration.
 */
import type { FloeConfig, WarehouseConfig } from '../config/schema.js';
import type { Catalog } from '../catalog/catalog.js';
import { FileSystemCatalog } from '../catalog/filesystem-catalog.js';
import type { StorageConfig } from '../io/file-io-factory.js';
import type { Logger } from '../pipeline/logger.js';
import { FloeError } from '../util/errors.js';

export function storageConfig(warehouse: WarehouseConfig): StorageConfig {
  const s3 = warehouse.s3;
  return {
    s3: {
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: s3.pathStyle,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      sessionToken: s3.sessionToken,
    },
  };
}

export async function openCatalog(config: FloeConfig, logger: Logger): Promise<Catalog> {
  const catalog = config.catalog;
  switch (catalog.type) {
    case 'filesystem':
      return new FileSystemCatalog({
        warehouse: config.warehouse.location,
        name: catalog.name,
        storage: storageConfig(config.warehouse),
        warn: (message) => logger.warn(message, { catalog: catalog.name }),
      });
    default:
      throw new FloeError('cli', 'unsupported', `catalog type ${catalog.type} is not available in this build; use catalog.type: filesystem`);
  }
}
