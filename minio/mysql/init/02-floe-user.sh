#!/bin/bash
# floe's replication user: SELECT for the snapshot, REPLICATION SLAVE + REPLICATION CLIENT for the
# binlog (what `floe check` verifies). Runs once, when the MySQL data directory is initialized.
set -euo pipefail
mysql --protocol=socket -uroot -p"${MYSQL_ROOT_PASSWORD}" <<SQL
CREATE USER IF NOT EXISTS 'floe'@'%' IDENTIFIED BY '${MYSQL_FLOE_PASSWORD}';
GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'floe'@'%';
FLUSH PRIVILEGES;
SQL
