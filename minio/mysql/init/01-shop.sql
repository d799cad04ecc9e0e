-- The sample source schema: a small shop. Composite keys, a BIGINT UNSIGNED key, decimals, JSON,
-- DATETIME(6) / TIMESTAMP(6), an ENUM, and foreign keys with ON DELETE CASCADE (cascaded deletes
-- arrive in the binlog as ordinary row deletes).
CREATE DATABASE IF NOT EXISTS shop;
USE shop;

CREATE TABLE customers (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  email VARCHAR(255) NOT NULL,
  name VARCHAR(100) NOT NULL,
  tier ENUM('basic', 'silver', 'gold') NOT NULL DEFAULT 'basic',
  created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  UNIQUE KEY uq_customers_email (email)
);

CREATE TABLE products (
  sku VARCHAR(32) NOT NULL PRIMARY KEY,
  title VARCHAR(200) NOT NULL,
  price DECIMAL(10, 2) NOT NULL,
  attributes JSON NULL
);

CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id BIGINT UNSIGNED NOT NULL,
  status VARCHAR(16) NOT NULL DEFAULT 'new',
  total DECIMAL(12, 2) NOT NULL,
  ordered_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE CASCADE
);

CREATE TABLE order_items (
  order_id BIGINT NOT NULL,
  line INT NOT NULL,
  sku VARCHAR(32) NOT NULL,
  quantity INT NOT NULL,
  PRIMARY KEY (order_id, line),
  CONSTRAINT fk_items_order FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
  CONSTRAINT fk_items_product FOREIGN KEY (sku) REFERENCES products (sku)
);

INSERT INTO customers (email, name, tier) VALUES
  ('ada@example.com', 'Ada', 'gold'),
  ('bob@example.com', 'Bob', 'basic'),
  ('cy@example.com', 'Cy', 'silver');

INSERT INTO products (sku, title, price, attributes) VALUES
  ('TEA-01', 'Green tea', 4.50, '{"origin": "Jeju", "grams": 100}'),
  ('MUG-02', 'Stoneware mug', 12.00, '{"color": "blue"}'),
  ('PAN-03', 'Iron pan', 39.90, NULL);

INSERT INTO orders (customer_id, status, total) VALUES
  (1, 'paid', 21.00),
  (2, 'new', 39.90),
  (1, 'shipped', 4.50);

INSERT INTO order_items (order_id, line, sku, quantity) VALUES
  (1, 1, 'TEA-01', 2),
  (1, 2, 'MUG-02', 1),
  (2, 1, 'PAN-03', 1),
  (3, 1, 'TEA-01', 1);
