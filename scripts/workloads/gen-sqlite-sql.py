#!/usr/bin/env python3
# Deterministic SQL script generator for the sqlite3 corpus workload.
#   usage: gen-sqlite-sql.py SIZE > workload.sql     (about 1000 * SIZE order rows)
# The script, meant for `sqlite3 -batch -init /dev/null :memory: ".read workload.sql"`,
# creates three tables, fills them with explicit INSERT statements inside a transaction (so
# the tokenizer, parser and code generator run once per row), builds indexes, then runs joins,
# GROUP BY aggregates with HAVING, ORDER BY (with and without an index), LIKE/substr/printf
# string functions, a window function, a recursive CTE, UPDATE and DELETE.
# Deterministic: a fixed-seed LCG written here (not Python's random), an in-memory database,
# temp_store=MEMORY (no temporary files, whose names are random), and no random(), date('now')
# or similar in the SQL. Same SIZE, same bytes with any Python 3.
import sys


def main():
    if len(sys.argv) != 2 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 1:
        sys.stderr.write("usage: gen-sqlite-sql.py SIZE > workload.sql\n")
        return 2
    size = int(sys.argv[1])
    state = 2463534242

    def rand(n):
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (state >> 33) % n

    first = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Ken", "Dennis", "Niklaus",
             "Frances", "John", "Leslie", "Margaret", "Tony", "Radia", "Butler", "Fran", "Robin"]
    last = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Thompson", "Ritchie",
            "Wirth", "Allen", "Backus", "Lamport", "Hamilton", "Hoare", "Perlman", "Lampson"]
    cities = ["Oslo", "Lyon", "Porto", "Graz", "Turku", "Ghent", "Malmo", "Brno", "Cork", "Bern",
              "Split", "Kaunas", "Tartu", "Pecs", "Lund", "Aarhus", "Bilbao", "Bologna"]
    cats = ["book", "tool", "food", "game", "toy", "garden", "music", "office", "sport", "bike"]
    adjs = ["red", "small", "large", "quiet", "fast", "old", "new", "shiny", "wooden", "smart"]

    n_cust = 100 * size
    n_prod = 20 * size
    n_ord = 1000 * size
    out = []
    w = out.append
    w("PRAGMA temp_store=MEMORY;")
    w("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, "
      "score REAL, joined INTEGER);")
    w("CREATE TABLE products(id INTEGER PRIMARY KEY, title TEXT, category TEXT, price INTEGER);")
    w("CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, "
      "qty INTEGER, note TEXT);")
    w("BEGIN;")
    for i in range(1, n_cust + 1):
        name = "%s %s" % (first[rand(len(first))], last[rand(len(last))])
        w("INSERT INTO customers VALUES(%d,'%s','%s',%d.%02d,%d);"
          % (i, name, cities[rand(len(cities))], rand(1000), rand(100), 2000 + rand(25)))
    for i in range(1, n_prod + 1):
        w("INSERT INTO products(id,title,category,price) VALUES(%d,'%s %s #%d','%s',%d);"
          % (i, adjs[rand(len(adjs))], cats[rand(len(cats))], i, cats[rand(len(cats))],
             100 + rand(9900)))
    for i in range(1, n_ord + 1):
        note = "NULL" if rand(4) == 0 else "'%s it''s %d'" % (adjs[rand(len(adjs))], rand(1000))
        w("INSERT INTO orders VALUES(%d,%d,%d,%d,%s);"
          % (i, 1 + rand(n_cust), 1 + rand(n_prod), 1 + rand(9), note))
    w("COMMIT;")
    w("CREATE INDEX orders_customer ON orders(customer_id);")
    w("CREATE INDEX orders_product ON orders(product_id, qty);")
    w("CREATE INDEX customers_city ON customers(city, score);")
    w("ANALYZE;")
    # Joins with GROUP BY aggregates, ordered results.
    w("SELECT c.city, count(*), sum(o.qty * p.price), round(avg(c.score), 2), max(p.price)"
      " FROM orders o JOIN customers c ON c.id = o.customer_id"
      " JOIN products p ON p.id = o.product_id GROUP BY c.city ORDER BY 3 DESC;")
    w("SELECT p.category, count(DISTINCT o.customer_id), total(o.qty) FROM products p"
      " LEFT JOIN orders o ON o.product_id = p.id GROUP BY p.category"
      " HAVING count(*) > 1 ORDER BY p.category;")
    w("SELECT c.name, sum(o.qty) AS q FROM customers c JOIN orders o ON o.customer_id = c.id"
      " GROUP BY c.id ORDER BY q DESC, c.id LIMIT 15;")
    w("SELECT o.id, c.name, p.title FROM orders o, customers c, products p"
      " WHERE o.customer_id = c.id AND o.product_id = p.id AND c.city = 'Graz'"
      " AND p.price BETWEEN 1000 AND 3000 ORDER BY o.id LIMIT 20;")
    # Strings: LIKE, substr, upper, length, printf, group_concat, instr, replace.
    w("SELECT upper(substr(name, 1, 3)) AS k, count(*), group_concat(DISTINCT city)"
      " FROM customers WHERE name LIKE '%a%' GROUP BY k ORDER BY k;")
    w("SELECT printf('%-10s|%6.2f|%05d', city, avg(score), count(*)) FROM customers"
      " GROUP BY city ORDER BY city;")
    w("SELECT count(*), sum(length(note)), sum(instr(note, 'it')) FROM orders"
      " WHERE note IS NOT NULL AND replace(note, 'it''s', 'is') LIKE '%is%';")
    # A correlated subquery, a window function and a recursive CTE.
    w("SELECT count(*) FROM customers c WHERE score > (SELECT avg(score) FROM customers"
      " WHERE city = c.city);")
    w("SELECT city, name, score, rank FROM (SELECT city, name, score, row_number() OVER"
      " (PARTITION BY city ORDER BY score DESC, id) AS rank FROM customers) WHERE rank <= 2"
      " ORDER BY city, rank;")
    w("WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < %d)"
      " SELECT count(*), sum(x * x %% 97) FROM seq;" % (200 * size))
    # Updates and deletes, then a checksum over the whole database.
    w("UPDATE products SET price = price * 11 / 10 WHERE category IN ('book', 'tool');")
    w("UPDATE customers SET score = score + 1 WHERE id % 7 = 0;")
    w("DELETE FROM orders WHERE qty = 9 AND note IS NULL;")
    w("SELECT count(*), sum(qty), sum(customer_id * product_id % 1000) FROM orders;")
    w("SELECT sum(price), count(*) FROM products;")
    w("SELECT sum(id), round(sum(score), 2) FROM customers;")
    w("PRAGMA integrity_check;")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
