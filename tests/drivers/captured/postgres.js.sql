-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   node extra/scenario_postgresjs.js
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====


      select b.oid, b.typarray
      from pg_catalog.pg_type a
      left join pg_catalog.pg_type b on b.oid = a.typelem
      where a.typcategory = 'A'
      group by b.oid, b.typarray
      order by b.oid;

-- ===== Every statement, in the order sent =====

-- backend 28510
-- execute nqdxdb7f49c1 (extended protocol)

      select b.oid, b.typarray
      from pg_catalog.pg_type a
      left join pg_catalog.pg_type b on b.oid = a.typelem
      where a.typcategory = 'A'
      group by b.oid, b.typarray
      order by b.oid;
-- execute nqdxdb7f49c2 (extended protocol)
SELECT 1 AS one;
-- execute nqdxdb7f49c3 (extended protocol)
DROP TABLE IF EXISTS "drv_postgresjs";
-- execute nqdxdb7f49c4 (extended protocol)
CREATE TABLE "drv_postgresjs" (
      id serial PRIMARY KEY,
      n integer, big bigint, name text UNIQUE, flag boolean,
      score double precision, day date, at timestamp, at_tz timestamptz);
-- execute nqdxdb7f49c5 (extended protocol)
INSERT INTO "drv_postgresjs" ("n","big","name","flag","score","day","at","at_tz")values($1,$2,$3,$4,$5,$6,$7,$8) RETURNING id;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29 00:00:00+00', $7 = '2024-01-02 03:04:05.678+00', $8 = '2024-01-02 01:04:05.678+00'
-- execute nqdxdb7f49c5 (extended protocol)
INSERT INTO "drv_postgresjs" ("n","big","name","flag","score","day","at","at_tz")values($1,$2,$3,$4,$5,$6,$7,$8) RETURNING id;
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31 00:00:00+00', $7 = '1999-12-31 23:59:59+00', $8 = '2000-01-01 00:00:00+00'
-- execute nqdxdb7f49c6 (extended protocol)
INSERT INTO "drv_postgresjs" ("n","name","day")values($1,$2,$3),($4,$5,$6),($7,$8,$9);
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01 00:00:00+00', $4 = '2', $5 = 'many2', $6 = '2020-01-02 00:00:00+00', $7 = '3', $8 = 'many3', $9 = '2020-01-03 00:00:00+00'
-- execute nqdxdb7f49c7 (extended protocol)
SELECT "n","big","name","flag","score","day","at","at_tz" FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c7 (extended protocol)
SELECT "n","big","name","flag","score","day","at","at_tz" FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c8 (extended protocol)
SELECT count(*) FROM "drv_postgresjs"
      WHERE day >= $1 AND flag = $2 AND at < $3
        AND at_tz > $4;
--   parameters: $1 = '2024-01-01 00:00:00+00', $2 = 't', $3 = '2025-01-01 00:00:00+00', $4 = '2023-12-31 00:00:00+00'
-- execute nqdxdb7f49c9 (extended protocol)
UPDATE "drv_postgresjs" SET score = $1, at_tz = $2, big = big + $3
      WHERE name = $4;
--   parameters: $1 = '2.5', $2 = '2030-06-01 12:00:00+00', $3 = '1', $4 = 'beta'
-- execute nqdxdb7f49c10 (extended protocol)
SELECT score, at_tz, big FROM "drv_postgresjs" WHERE name = $1;
--   parameters: $1 = 'beta'
-- execute nqdxdb7f49c11 (extended protocol)
DELETE FROM "drv_postgresjs" WHERE name LIKE $1;
--   parameters: $1 = 'many%'
begin;
-- execute nqdxdb7f49c12 (extended protocol)
INSERT INTO "drv_postgresjs" (name) VALUES ($1);
--   parameters: $1 = 'gone'
-- execute nqdxdb7f49c13 (extended protocol)
rollback;
begin;
-- execute nqdxdb7f49c12 (extended protocol)
INSERT INTO "drv_postgresjs" (name) VALUES ($1);
--   parameters: $1 = 'kept'
-- execute nqdxdb7f49c14 (extended protocol)
savepoint "s0";
-- execute nqdxdb7f49c12 (extended protocol)
INSERT INTO "drv_postgresjs" (name) VALUES ($1);
--   parameters: $1 = 'undone'
-- execute nqdxdb7f49c15 (extended protocol)
rollback to "s0";
-- execute nqdxdb7f49c16 (extended protocol)
commit;
-- execute nqdxdb7f49c17 (extended protocol)
SELECT name FROM "drv_postgresjs";
-- execute nqdxdb7f49c12 (extended protocol)
INSERT INTO "drv_postgresjs" (name) VALUES ($1);
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_postgresjs_name_key"
-- execute nqdxdb7f49c18 (extended protocol)
SELECT 2 AS two;
begin;
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c13 (extended protocol)
rollback;
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
-- execute nqdxdb7f49c19 (extended protocol)
SELECT name, day FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '2'
COPY "drv_postgresjs" ("n","big","name","flag","score","day","at","at_tz") FROM STDIN;
COPY "drv_postgresjs" (name, n) TO STDOUT;
begin isolation level repeatable read;
-- execute nqdxdb7f49c20 (extended protocol)
SELECT n FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'

-- backend 28512
-- execute e8d8ojoew1 (extended protocol)

      select b.oid, b.typarray
      from pg_catalog.pg_type a
      left join pg_catalog.pg_type b on b.oid = a.typelem
      where a.typcategory = 'A'
      group by b.oid, b.typarray
      order by b.oid;
-- execute e8d8ojoew2 (extended protocol)
UPDATE "drv_postgresjs" SET n = n + 100 WHERE id = $1;
--   parameters: $1 = '1'

-- backend 28510
-- execute nqdxdb7f49c20 (extended protocol)
SELECT n FROM "drv_postgresjs" WHERE id = $1;
--   parameters: $1 = '1'
-- execute nqdxdb7f49c21 (extended protocol)
UPDATE "drv_postgresjs" SET n = 0 WHERE id = $1;
--   parameters: $1 = '1'
--   ERROR: could not serialize access due to concurrent update
-- execute nqdxdb7f49c13 (extended protocol)
rollback;
