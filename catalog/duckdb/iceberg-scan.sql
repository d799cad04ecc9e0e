-- DuckDB → floe tables without any catalog service, with iceberg_scan.
INSTALL iceberg;
LOAD iceberg;

-- 1. floe's default filesystem catalog on local disk (./warehouse): iceberg_scan follows
--    metadata/version-hint.text to the current v<N>.metadata.json.
SELECT count(*) FROM iceberg_scan('warehouse/shop/orders');

-- 2. The same on S3 / MinIO.
INSTALL httpfs;
LOAD httpfs;
CREATE SECRET floe_minio (TYPE s3, KEY_ID 'floe', SECRET 'floe-minio-secret', ENDPOINT 'localhost:9000', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1');
-- SELECT * FROM iceberg_scan('s3://warehouse/lake/shop/orders');

-- 3. A table of the sql catalog has no version hint: name its current metadata file, which
--    SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'shop' AND table_name = 'orders'
--    returns in the catalog database, e.g.
-- SELECT * FROM iceberg_scan('s3://warehouse/lake/shop/orders/metadata/00007-7f0c….metadata.json');
