/**
 * `floe catalog serve [--port 8181] [--host 127.0.0.1] [--token T] …`: serves the Iceberg REST catalog
 * protocol over the catalog of the configuration `floe run` uses (`-c/--config`; filesystem or sql),
 * so that Trino, Spark, DuckDB and PyIceberg can attach to the warehouse (catalog/server/).
 *
 * Secrets can come from the environment instead of the command line (where `ps` shows them):
 * `FLOE_CATALOG_TOKEN` for `--token`, `FLOE_CATALOG_CREDENTIAL` for `--credential`. The first line on
 * stdout says where the catalog listens; requests are logged at debug level. SIGINT/SIGTERM stop it.
 */
import type { Command } from 'commander';
import { warehouseOf, openCatalog, storageConfigOf } from '../../catalog/factory.js';
import { RestCatalogServer } from '../../catalog/server/rest-server.js';
import type { ClientSecret } from '../../catalog/server/server-auth.js';
import { FloeError } from '../../util/errors.js';
import { commandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';

interface ServeOptions {
  port: string;
  host: string;
  token?: string;
  credential?: string;
  prefix?: string;
  s3Endpoint?: string;
  vendCredentials?: boolean;
}

function usage(message: string): FloeError {
  return new FloeError('cli.catalog-serve', 'invalid-argument', message);
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw usage(`--port expects a port number 0..65535, found ${JSON.stringify(text)}`);
  return port;
}

function parseCredential(text: string | undefined): ClientSecret[] | undefined {
  if (text === undefined || text === '') return undefined;
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw usage('--credential / FLOE_CATALOG_CREDENTIAL expects client_id:client_secret');
  return [{ clientId: text.slice(0, colon), clientSecret: text.slice(colon + 1) }];
}

export function registerCatalogServe(catalogCommand: Command, setExit: (code: ExitCodeValue) => void = (code) => (process.exitCode = code)): void {
  catalogCommand
    .command('serve')
    .description('serve the Iceberg REST catalog protocol over the configured catalog (for Trino, Spark, DuckDB, PyIceberg)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8181')
    .option('--host <host>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
    .option('--token <token>', 'require this bearer token on every request (default $FLOE_CATALOG_TOKEN)')
    .option('--credential <id:secret>', 'issue OAuth2 tokens to this client at /v1/oauth/tokens (default $FLOE_CATALOG_CREDENTIAL)')
    .option('--prefix <prefix>', 'routing prefix advertised to clients (/v1/{prefix}/...)')
    .option('--s3-endpoint <url>', 'S3 endpoint to tell clients, when they reach the store at another address than floe')
    .option('--vend-credentials', "hand floe's S3 credentials to clients that ask for them (X-Iceberg-Access-Delegation: vended-credentials) when loading a table (off by default)")
    .action(async (options: ServeOptions, command: Command) => {
      const ctx = await commandContext(command);
      const port = parsePort(options.port);
      const token = options.token ?? (process.env.FLOE_CATALOG_TOKEN || undefined);
      const clients = parseCredential(options.credential ?? process.env.FLOE_CATALOG_CREDENTIAL);
      if (ctx.config.catalog.type === 'rest') {
        throw new FloeError('cli.catalog-serve', 'config', 'catalog.type is rest: floe catalog serve serves a filesystem or sql catalog; point clients at that REST catalog directly');
      }
      const catalog = await openCatalog(ctx.config, { warn: (message) => ctx.logger.warn(message) });
      const warehouse = warehouseOf(catalog)!;
      const server = new RestCatalogServer({
        catalog,
        warehouse,
        prefix: options.prefix,
        token,
        clients,
        storage: storageConfigOf(ctx.config.warehouse),
        advertisedS3Endpoint: options.s3Endpoint,
        vendCredentials: options.vendCredentials === true,
        log: (entry) => ctx.logger.debug('request', { ...entry }),
      });
      const url = await server.listen(port, options.host);
      const listening = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${new URL(url).port}`;
      process.stdout.write(`floe catalog serve: ${ctx.config.catalog.type} catalog "${catalog.name}" (warehouse ${warehouse}) at ${listening}\n`);
      ctx.logger.info('REST catalog listening', { url: listening, catalog: ctx.config.catalog.type, warehouse, auth: token !== undefined || clients !== undefined });
      await new Promise<void>((resolve) => {
        const stop = (name: NodeJS.Signals) => {
          ctx.logger.info(`${name} received: stopping the REST catalog`);
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      await server.close();
      await catalog.close();
      setExit(ExitCode.ok);
    });
}
