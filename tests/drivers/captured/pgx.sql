-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   go run main.go
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

-- ===== Every statement, in the order sent =====

-- backend 29388
-- execute lrupsc_1_0 (extended protocol)
SELECT 1;
DROP TABLE IF EXISTS drv_pgx;
CREATE TABLE drv_pgx (id serial PRIMARY KEY,
			n integer, big bigint, name text UNIQUE, flag boolean,
			score double precision, day date, at timestamp, at_tz timestamptz);
-- execute lrupsc_1_1 (extended protocol)
INSERT INTO drv_pgx (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.3', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00'
-- execute lrupsc_1_1 (extended protocol)
INSERT INTO drv_pgx (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31', $7 = '1999-12-31 23:59:59', $8 = '2000-01-01 00:00:00+00'
-- execute lrupsc_1_2 (extended protocol)
INSERT INTO drv_pgx (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01'
-- execute lrupsc_1_2 (extended protocol)
INSERT INTO drv_pgx (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '2', $2 = 'many2', $3 = '2020-01-02'
-- execute lrupsc_1_2 (extended protocol)
INSERT INTO drv_pgx (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '3', $2 = 'many3', $3 = '2020-01-03'
-- execute lrupsc_1_3 (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_3 (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_4 (extended protocol)
SELECT count(*) FROM drv_pgx WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4;
--   parameters: $1 = '2024-01-01', $2 = 't', $3 = '2025-01-01 00:00:00', $4 = '2023-12-31 00:00:00+00'
-- execute lrupsc_1_5 (extended protocol)
UPDATE drv_pgx SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4;
--   parameters: $1 = '2.5', $2 = '2030-06-01 12:00:00+00', $3 = '1', $4 = 'beta'
-- execute lrupsc_1_6 (extended protocol)
SELECT score, at_tz, big FROM drv_pgx WHERE name = $1;
--   parameters: $1 = 'beta'
-- execute lrupsc_1_7 (extended protocol)
DELETE FROM drv_pgx WHERE name LIKE $1;
--   parameters: $1 = 'many%'
begin;
-- execute lrupsc_1_8 (extended protocol)
INSERT INTO drv_pgx (name) VALUES ($1);
--   parameters: $1 = 'gone'
rollback;
begin;
-- execute lrupsc_1_8 (extended protocol)
INSERT INTO drv_pgx (name) VALUES ($1);
--   parameters: $1 = 'kept'
savepoint sp_1;
-- execute lrupsc_1_8 (extended protocol)
INSERT INTO drv_pgx (name) VALUES ($1);
--   parameters: $1 = 'undone'
rollback to savepoint sp_1;
commit;
-- execute lrupsc_1_9 (extended protocol)
SELECT name FROM drv_pgx;
-- execute lrupsc_1_8 (extended protocol)
INSERT INTO drv_pgx (name) VALUES ($1);
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_pgx_name_key"
begin;
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
rollback;
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
-- execute lrupsc_1_10 (extended protocol)
SELECT name, day FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '2'
copy "drv_pgx" ( "n", "big", "name", "flag", "score", "day", "at", "at_tz" ) from stdin binary;
-- execute lrupsc_1_11 (extended protocol)
SELECT count(*) FROM drv_pgx WHERE name LIKE 'copy%';
COPY drv_pgx (name, n) TO STDOUT;

-- backend 29391
begin isolation level repeatable read;
-- execute lrupsc_2_0 (extended protocol)
SELECT n FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'

-- backend 29394
-- execute lrupsc_3_0 (extended protocol)
UPDATE drv_pgx SET n = n + 100 WHERE id = $1;
--   parameters: $1 = '1'

-- backend 29391
-- execute lrupsc_2_0 (extended protocol)
SELECT n FROM drv_pgx WHERE id = $1;
--   parameters: $1 = '1'
-- execute lrupsc_2_1 (extended protocol)
UPDATE drv_pgx SET n = 0 WHERE id = $1;
--   parameters: $1 = '1'
--   ERROR: could not serialize access due to concurrent update
rollback;
