-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   python3 extra/scenario_psycopg2.py
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

DEALLOCATE drv_by_id;

-- ===== Every statement, in the order sent =====

-- backend 28439
BEGIN;
SELECT 1;
ROLLBACK;
BEGIN;
DROP TABLE IF EXISTS drv_psycopg2;
CREATE TABLE drv_psycopg2 (
            id serial PRIMARY KEY,
            n integer, big bigint, name text UNIQUE, flag boolean,
            score double precision, day date, at timestamp, at_tz timestamptz);
COMMIT;
BEGIN;
INSERT INTO drv_psycopg2 (n, big, name, flag, score, day, at, at_tz) VALUES (42, 9000000000, 'O''Hara ✓', true, 0.30000000000000004, '2024-02-29'::date, '2024-01-02T03:04:05.678000'::timestamp, '2024-01-02T03:04:05.678000+02:00'::timestamptz) RETURNING id;
INSERT INTO drv_psycopg2 (n, big, name, flag, score, day, at, at_tz) VALUES ( -7,  -1, 'beta', false,  -1.5e+300, '1999-12-31'::date, '1999-12-31T23:59:59'::timestamp, '2000-01-01T00:00:00+00:00'::timestamptz) RETURNING id;
INSERT INTO drv_psycopg2 (n, name, day) VALUES (1, 'many1', '2020-01-01'::date);
INSERT INTO drv_psycopg2 (n, name, day) VALUES (2, 'many2', '2020-01-02'::date);
INSERT INTO drv_psycopg2 (n, name, day) VALUES (3, 'many3', '2020-01-03'::date);
COMMIT;
BEGIN;
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_psycopg2 WHERE id = 1;
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_psycopg2 WHERE id = 2;
SELECT count(*) FROM drv_psycopg2 WHERE day >= '2024-01-01'::date AND flag = true AND at < '2025-01-01T00:00:00'::timestamp AND at_tz > '2023-12-31T00:00:00+00:00'::timestamptz;
COMMIT;
BEGIN;
UPDATE drv_psycopg2 SET score = 2.5, at_tz = '2030-06-01T12:00:00+00:00'::timestamptz, big = big + 1 WHERE name = 'beta';
SELECT score, at_tz, big FROM drv_psycopg2 WHERE name = 'beta';
COMMIT;
BEGIN;
DELETE FROM drv_psycopg2 WHERE name LIKE 'many%';
COMMIT;
BEGIN;
INSERT INTO drv_psycopg2 (name) VALUES ('gone');
ROLLBACK;
BEGIN;
INSERT INTO drv_psycopg2 (name) VALUES ('kept');
SAVEPOINT sp;
INSERT INTO drv_psycopg2 (name) VALUES ('undone');
ROLLBACK TO SAVEPOINT sp;
COMMIT;
BEGIN;
SELECT name FROM drv_psycopg2;
COMMIT;
BEGIN;
INSERT INTO drv_psycopg2 (name) VALUES ('beta') RETURNING id;
--   ERROR: duplicate key value violates unique constraint "drv_psycopg2_name_key"
ROLLBACK;
BEGIN;
SELECT 2;
COMMIT;
BEGIN;
PREPARE drv_by_id (int) AS SELECT name, day FROM drv_psycopg2 WHERE id = $1;
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
EXECUTE drv_by_id (1);
ROLLBACK;
BEGIN;
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
EXECUTE drv_by_id (2);
DEALLOCATE drv_by_id;
COMMIT;
BEGIN;
COPY "drv_psycopg2"("n","big","name","flag","score","day","at","at_tz") FROM stdin WITH DELIMITER AS '	' NULL AS '\N';
SELECT name, n FROM drv_psycopg2 WHERE name LIKE 'copy%' ORDER BY name;
COMMIT;
BEGIN;
COPY "drv_psycopg2"("name","n") TO stdout WITH DELIMITER AS '	' NULL AS '\N';
COPY (SELECT name, n FROM drv_psycopg2 WHERE id = 2) TO STDOUT WITH CSV HEADER;
COMMIT;

-- backend 28440
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT n FROM drv_psycopg2 WHERE id = 1;

-- backend 28441
UPDATE drv_psycopg2 SET n = n + 100 WHERE id = 1;

-- backend 28440
SELECT n FROM drv_psycopg2 WHERE id = 1;
UPDATE drv_psycopg2 SET n = 0 WHERE id = 1;
--   ERROR: could not serialize access due to concurrent update
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT n FROM drv_psycopg2 WHERE id = 1;
COMMIT;
