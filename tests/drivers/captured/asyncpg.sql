-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   python3 scenario_asyncpg.py
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

SELECT quote_literal($1::"pg_catalog"."int4"::text);

SET application_name = 'drv';

SELECT pg_advisory_unlock_all();
CLOSE ALL;
UNLISTEN *;
RESET ALL;

-- ===== Every statement, in the order sent =====

-- backend 30885
-- execute __asyncpg_stmt_1__ (extended protocol)
SELECT 1;
DROP TABLE IF EXISTS drv_asyncpg;
CREATE TABLE drv_asyncpg (
                id serial PRIMARY KEY,
                n integer, big bigint, name text UNIQUE, flag boolean,
                score double precision, day date, at timestamp, at_tz timestamptz);
-- execute __asyncpg_stmt_2__ (extended protocol)
INSERT INTO drv_asyncpg (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00'
-- execute __asyncpg_stmt_2__ (extended protocol)
INSERT INTO drv_asyncpg (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31', $7 = '1999-12-31 23:59:59', $8 = '2000-01-01 00:00:00+00'
-- execute __asyncpg_stmt_3__ (extended protocol)
INSERT INTO drv_asyncpg (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01'
-- execute __asyncpg_stmt_3__ (extended protocol)
INSERT INTO drv_asyncpg (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '2', $2 = 'many2', $3 = '2020-01-02'
-- execute __asyncpg_stmt_3__ (extended protocol)
INSERT INTO drv_asyncpg (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '3', $2 = 'many3', $3 = '2020-01-03'
-- execute __asyncpg_stmt_4__ (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_4__ (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_5__ (extended protocol)
SELECT count(*) FROM drv_asyncpg WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4;
--   parameters: $1 = '2024-01-01', $2 = 't', $3 = '2025-01-01 00:00:00', $4 = '2023-12-31 00:00:00+00'
-- execute __asyncpg_stmt_6__ (extended protocol)
UPDATE drv_asyncpg SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4;
--   parameters: $1 = '2.5', $2 = '2030-06-01 12:00:00+00', $3 = '1', $4 = 'beta'
-- execute __asyncpg_stmt_7__ (extended protocol)
SELECT score, at_tz, big FROM drv_asyncpg WHERE name = $1;
--   parameters: $1 = 'beta'
-- execute __asyncpg_stmt_8__ (extended protocol)
DELETE FROM drv_asyncpg WHERE name LIKE $1;
--   parameters: $1 = 'many%'
BEGIN;
-- execute __asyncpg_stmt_9__ (extended protocol)
INSERT INTO drv_asyncpg (name) VALUES ($1);
--   parameters: $1 = 'gone'
ROLLBACK;
BEGIN;
-- execute __asyncpg_stmt_9__ (extended protocol)
INSERT INTO drv_asyncpg (name) VALUES ($1);
--   parameters: $1 = 'kept'
SAVEPOINT __asyncpg_savepoint_a__;
-- execute __asyncpg_stmt_9__ (extended protocol)
INSERT INTO drv_asyncpg (name) VALUES ($1);
--   parameters: $1 = 'undone'
ROLLBACK TO __asyncpg_savepoint_a__;
COMMIT;
-- execute __asyncpg_stmt_b__ (extended protocol)
SELECT name FROM drv_asyncpg;
-- execute __asyncpg_stmt_9__ (extended protocol)
INSERT INTO drv_asyncpg (name) VALUES ($1);
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_asyncpg_name_key"
-- execute __asyncpg_stmt_c__ (extended protocol)
SELECT 2;
BEGIN;
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
ROLLBACK;
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_d__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
-- execute __asyncpg_stmt_e__ (extended protocol)
SELECT name, day FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
COPY "drv_asyncpg"("n", "big", "name", "flag", "score", "day", "at", "at_tz") FROM STDIN (FORMAT binary);
-- execute __asyncpg_stmt_10__ (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_asyncpg WHERE name LIKE 'copy%' ORDER BY name;
COPY "drv_asyncpg"("name", "n") TO STDOUT;
-- execute __asyncpg_stmt_12__ (extended protocol)
SELECT quote_literal($1::"pg_catalog"."int4"::text);
--   parameters: $1 = '2'
COPY (SELECT name, n FROM drv_asyncpg WHERE id = '2') TO STDOUT;

-- backend 30953
-- execute __asyncpg_stmt_13__ (extended protocol)
SELECT name FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
SET application_name = 'drv';
SELECT pg_advisory_unlock_all();
CLOSE ALL;
UNLISTEN *;
RESET ALL;
-- execute __asyncpg_stmt_13__ (extended protocol)
SELECT name FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
SET application_name = 'drv';
SELECT pg_advisory_unlock_all();
CLOSE ALL;
UNLISTEN *;
RESET ALL;
-- execute __asyncpg_stmt_13__ (extended protocol)
SELECT name FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '2'
SET application_name = 'drv';
SELECT pg_advisory_unlock_all();
CLOSE ALL;
UNLISTEN *;
RESET ALL;

-- backend 30954
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute __asyncpg_stmt_14__ (extended protocol)
SELECT n FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'

-- backend 30955
-- execute __asyncpg_stmt_15__ (extended protocol)
UPDATE drv_asyncpg SET n = n + 100 WHERE id = $1;
--   parameters: $1 = '1'

-- backend 30954
-- execute __asyncpg_stmt_14__ (extended protocol)
SELECT n FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
-- execute __asyncpg_stmt_16__ (extended protocol)
UPDATE drv_asyncpg SET n = 0 WHERE id = $1;
--   parameters: $1 = '1'
--   ERROR: could not serialize access due to concurrent update
ROLLBACK;
-- execute __asyncpg_stmt_14__ (extended protocol)
SELECT n FROM drv_asyncpg WHERE id = $1;
--   parameters: $1 = '1'
