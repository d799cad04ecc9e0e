/**
 * MySQL in a container (testcontainers) for the shared-server tests, where a Docker engine is
 * reachable: `FLOE_TEST_MYSQL_CONTAINER=mysql:8.4 npm test` (global-setup.ts). The server is started
 * the way floe needs a source (docs/design.md §2): binary log on, ROW format, FULL row image and row
 * metadata, GTIDs on, a server id of its own.
 */
import { MySqlContainer, type StartedMySqlContainer } from '@testcontainers/mysql';

export interface ContainerMysql {
  url: string;
  description: string;
  stop(): Promise<void>;
}

export async function startMysqlContainer(image: string): Promise<ContainerMysql> {
  const password = 'floe-test';
  const started: StartedMySqlContainer = await new MySqlContainer(image)
    .withRootPassword(password)
    .withCommand([
      '--server-id=1',
      '--log-bin=binlog',
      '--binlog-format=ROW',
      '--binlog-row-image=FULL',
      '--binlog-row-metadata=FULL',
      '--gtid-mode=ON',
      '--enforce-gtid-consistency=ON',
    ])
    .start();
  return {
    url: `mysql://root:${encodeURIComponent(password)}@${started.getHost()}:${started.getPort()}`,
    description: `${image} in a container on ${started.getHost()}:${started.getPort()}`,
    stop: async () => {
      await started.stop();
    },
  };
}
