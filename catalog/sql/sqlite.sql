-- floe's SQL catalog in a SQLite file (single machine): the Iceberg JdbcCatalog layout (schema
-- version V1), the same tables PyIceberg's SqlCatalog and Java's JdbcCatalog (sqlite-jdbc) use.
-- floe runs these statements itself when the tables are missing.
--
-- Column names, types and keys are exactly Java's JdbcUtil. floe also turns on
-- `PRAGMA case_sensitive_like` on its connections: SQLite's LIKE ignores ASCII case by default, and
-- the catalog finds nested namespaces with LIKE prefixes.
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
