#!/bin/bash
# Keeps the sample shop busy so that rows keep arriving in the lake: every couple of seconds a new
# customer and order, an order status change, and now and then a deleted order (its items go with it
# by ON DELETE CASCADE). Stop it with `docker compose stop shop-writer`.
set -uo pipefail
mysql_shop() { mysql -h mysql -uroot -p"${MYSQL_ROOT_PASSWORD}" --batch --skip-column-names shop "$@"; }
until mysql_shop -e 'SELECT 1' >/dev/null 2>&1; do sleep 1; done
n=0
while true; do
  n=$((n + 1))
  mysql_shop -e "
    INSERT INTO customers (email, name) VALUES (CONCAT('buyer', UUID_SHORT(), '@example.com'), CONCAT('Buyer ', ${n}));
    INSERT INTO orders (customer_id, status, total) VALUES (LAST_INSERT_ID(), 'new', ROUND(RAND() * 100, 2));
    INSERT INTO order_items (order_id, line, sku, quantity) VALUES (LAST_INSERT_ID(), 1, 'TEA-01', 1 + FLOOR(RAND() * 3));
    UPDATE orders SET status = 'paid' WHERE status = 'new' ORDER BY id LIMIT 1;
  " || echo "shop-writer: write ${n} failed (will retry)" >&2
  if (( n % 5 == 0 )); then
    mysql_shop -e "DELETE FROM orders WHERE status = 'paid' ORDER BY id LIMIT 1;" || true
  fi
  echo "shop-writer: round ${n}"
  sleep 2
done
