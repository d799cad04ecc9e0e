-- DuckDB (1.4+, iceberg extension) → floe's warehouse through `floe catalog serve`.
-- Run with the minio/ stack up (ports published on localhost):  duckdb < catalog/duckdb/attach-rest.sql
INSTALL iceberg;
LOAD iceberg;
INSTALL httpfs;
LOAD httpfs;

-- The files live on MinIO: DuckDB reads them with its own S3 client.
CREATE SECRET floe_minio (
    TYPE s3,
    KEY_ID 'floe',
    SECRET 'floe-minio-secret',
    ENDPOINT 'localhost:9000',
    URL_STYLE 'path',
    USE_SSL false,
    REGION 'us-east-1'
);

-- The catalog: floe catalog serve with --token (FLOE_CATALOG_TOKEN). Without a token, drop the
-- secret and add AUTHORIZATION_TYPE 'none' to the ATTACH options instead.
CREATE SECRET floe_catalog (TYPE iceberg, TOKEN 'floe-demo-token');
ATTACH 'floe' AS floe (TYPE iceberg, SECRET floe_catalog, ENDPOINT 'http://localhost:8181');

SHOW ALL TABLES;
SELECT * FROM floe.shop.orders ORDER BY id LIMIT 20;
