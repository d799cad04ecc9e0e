-- floe's SQL catalog on PostgreSQL: the Iceberg JdbcCatalog layout (schema version V1), so that
-- Trino (iceberg.catalog.type=jdbc), Spark's JdbcCatalog, PyIceberg's SqlCatalog and floe share the
-- same tables. floe runs these statements itself when the tables are missing; run them by hand only
-- when floe's database user may not create tables.
--
-- Column names, types and keys are exactly Java's JdbcUtil (V0_CREATE_CATALOG_SQL +
-- V1_UPDATE_CATALOG_SQL, CREATE_NAMESPACE_PROPERTIES_TABLE_SQL).
-- Statements are separated by semicolons at line ends; keep semicolons out of comments.

CREATE TABLE IF NOT EXISTS iceberg_tables (
  catalog_name VARCHAR(255) NOT NULL,
  table_namespace VARCHAR(255) NOT NULL,
  table_name VARCHAR(255) NOT NULL,
  metadata_location VARCHAR(1000),
  previous_metadata_location VARCHAR(1000),
  iceberg_type VARCHAR(5),
  PRIMARY KEY (catalog_name, table_namespace, table_name)
);

CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
  catalog_name VARCHAR(255) NOT NULL,
  namespace VARCHAR(255) NOT NULL,
  property_key VARCHAR(255) NOT NULL,
  property_value VARCHAR(1000),
  PRIMARY KEY (catalog_name, namespace, property_key)
);
