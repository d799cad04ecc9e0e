-- DuckDB (1.4+, iceberg extension) → floe's warehouse through `floe catalog serve`.
-- Run with the minio/ stack up (ports published on localhost):  duckdb < catalog/duckdb/attach-rest.sql
INSTALL iceberg;
LOAD iceberg;
INSTALL httpfs;
LOAD httpfs;

-- The catalog: floe-catalog-host, floe catalog serve with --token (FLOE_CATALOG_TOKEN). Without a
-- token, drop the secret and add AUTHORIZATION_TYPE 'none' to the ATTACH options instead.
-- The files live on MinIO and DuckDB reads them with its own S3 client; it needs no S3 secret here:
-- the catalog hands out the endpoint (localhost:9000 from the host), the path style, the region and,
-- since the stack runs it with --vend-credentials, the keys (DuckDB asks for them by default).
CREATE SECRET floe_catalog (TYPE iceberg, TOKEN 'floe-demo-token');
ATTACH 'floe' AS floe (TYPE iceberg, SECRET floe_catalog, ENDPOINT 'http://localhost:8182');

SHOW ALL TABLES;
SELECT * FROM floe.shop.orders ORDER BY id LIMIT 20;
