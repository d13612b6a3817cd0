-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   python3 scenario_psycopg3.py
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

DEALLOCATE ALL;

-- ===== Every statement, in the order sent =====

-- backend 27911
BEGIN;
SELECT 1;
ROLLBACK;
BEGIN;
DROP TABLE IF EXISTS drv_psycopg3;
CREATE TABLE drv_psycopg3 (
            id serial PRIMARY KEY,
            n integer, big bigint, name text UNIQUE, flag boolean,
            score double precision, day date, at timestamp, at_tz timestamptz);
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00'
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31', $7 = '1999-12-31 23:59:59', $8 = '2000-01-01 00:00:00+00'
-- execute _pg3_0 (extended protocol)
INSERT INTO drv_psycopg3 (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01'
-- execute _pg3_0 (extended protocol)
INSERT INTO drv_psycopg3 (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '2', $2 = 'many2', $3 = '2020-01-02'
-- execute _pg3_0 (extended protocol)
INSERT INTO drv_psycopg3 (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '3', $2 = 'many3', $3 = '2020-01-03'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT count(*) FROM drv_psycopg3 WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4;
--   parameters: $1 = '2024-01-01', $2 = 't', $3 = '2025-01-01 00:00:00', $4 = '2023-12-31 00:00:00+00'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
UPDATE drv_psycopg3 SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4;
--   parameters: $1 = '2.5', $2 = '2030-06-01 12:00:00+00', $3 = '1', $4 = 'beta'
-- execute <unnamed> (extended protocol)
SELECT score, at_tz, big FROM drv_psycopg3 WHERE name = $1;
--   parameters: $1 = 'beta'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
DELETE FROM drv_psycopg3 WHERE name LIKE $1;
--   parameters: $1 = 'many%'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (name) VALUES ($1);
--   parameters: $1 = 'gone'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (name) VALUES ($1);
--   parameters: $1 = 'kept'
SAVEPOINT "_pg3_2";
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (name) VALUES ($1);
--   parameters: $1 = 'undone'
ROLLBACK TO "_pg3_2";
RELEASE "_pg3_2";
COMMIT;
BEGIN;
SELECT name FROM drv_psycopg3;
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_psycopg3 (name) VALUES ($1);
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_psycopg3_name_key"
ROLLBACK;
BEGIN;
SELECT 2;
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT name, day FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
UPDATE drv_psycopg3 SET n = n + 1 WHERE id = $1;
--   parameters: $1 = '2'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
SELECT 3;
COMMIT;
BEGIN;
COPY drv_psycopg3 (n, big, name, flag, score, day, at, at_tz) FROM STDIN;
COPY drv_psycopg3 (n, big, name, flag, score, day, at, at_tz) TO STDOUT;
COMMIT;

-- backend 27912
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'

-- backend 27913
-- execute <unnamed> (extended protocol)
UPDATE drv_psycopg3 SET n = n + 100 WHERE id = $1;
--   parameters: $1 = '1'

-- backend 27912
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
UPDATE drv_psycopg3 SET n = 0 WHERE id = $1;
--   parameters: $1 = '1'
--   ERROR: could not serialize access due to concurrent update
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_psycopg3 WHERE id = $1;
--   parameters: $1 = '1'
COMMIT;
