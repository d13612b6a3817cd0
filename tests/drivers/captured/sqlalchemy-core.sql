-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   python3 scenario_sqlalchemy_core.py
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

select pg_catalog.version();

select current_schema();

show transaction isolation level;

show standard_conforming_strings;

SELECT
    typname AS name, oid, typarray AS array_oid,
    oid::regtype::text AS regtype, typdelim AS delimiter
FROM pg_type t
WHERE t.oid = to_regtype($1)
ORDER BY t.oid;

SELECT pg_catalog.pg_class.relname 
FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace 
WHERE pg_catalog.pg_class.relname IN ($1::VARCHAR) AND pg_catalog.pg_class.relkind = ANY (ARRAY[$2::VARCHAR, $3::VARCHAR, $4::VARCHAR, $5::VARCHAR, $6::VARCHAR]) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != $7::VARCHAR;

DEALLOCATE ALL;

-- ===== Every statement, in the order sent =====

-- backend 28001
BEGIN;
select pg_catalog.version();
select current_schema();
show transaction isolation level;
show standard_conforming_strings;
SAVEPOINT "_pg3_1";
-- execute <unnamed> (extended protocol)
SELECT
    typname AS name, oid, typarray AS array_oid,
    oid::regtype::text AS regtype, typdelim AS delimiter
FROM pg_type t
WHERE t.oid = to_regtype($1)
ORDER BY t.oid;
--   parameters: $1 = 'hstore'
RELEASE "_pg3_1";
ROLLBACK;
BEGIN;
SELECT 1;
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT pg_catalog.pg_class.relname 
FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace 
WHERE pg_catalog.pg_class.relname IN ($1::VARCHAR) AND pg_catalog.pg_class.relkind = ANY (ARRAY[$2::VARCHAR, $3::VARCHAR, $4::VARCHAR, $5::VARCHAR, $6::VARCHAR]) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != $7::VARCHAR;
--   parameters: $1 = 'drv_sa_core', $2 = 'r', $3 = 'p', $4 = 'f', $5 = 'v', $6 = 'm', $7 = 'pg_catalog'

DROP TABLE drv_sa_core;
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT pg_catalog.pg_class.relname 
FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace 
WHERE pg_catalog.pg_class.relname IN ($1::VARCHAR) AND pg_catalog.pg_class.relkind = ANY (ARRAY[$2::VARCHAR, $3::VARCHAR, $4::VARCHAR, $5::VARCHAR, $6::VARCHAR]) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != $7::VARCHAR;
--   parameters: $1 = 'drv_sa_core', $2 = 'r', $3 = 'p', $4 = 'f', $5 = 'v', $6 = 'm', $7 = 'pg_catalog'

CREATE TABLE drv_sa_core (
	id SERIAL NOT NULL, 
	n INTEGER, 
	big BIGINT, 
	name TEXT, 
	flag BOOLEAN, 
	score DOUBLE PRECISION, 
	day DATE, 
	at TIMESTAMP WITHOUT TIME ZONE, 
	at_tz TIMESTAMP WITH TIME ZONE, 
	PRIMARY KEY (id), 
	UNIQUE (name)
);
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT pg_catalog.pg_class.relname 
FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace 
WHERE pg_catalog.pg_class.relname IN ($1::VARCHAR) AND pg_catalog.pg_class.relkind = ANY (ARRAY[$2::VARCHAR, $3::VARCHAR, $4::VARCHAR, $5::VARCHAR, $6::VARCHAR]) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != $7::VARCHAR;
--   parameters: $1 = 'drv_sa_core', $2 = 'r', $3 = 'p', $4 = 'f', $5 = 'v', $6 = 'm', $7 = 'pg_catalog'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_core.id;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00'
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_core.id;
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31', $7 = '1999-12-31 23:59:59', $8 = '2000-01-01 00:00:00+00'
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (n, name, day) VALUES ($1::INTEGER, $2::VARCHAR, $3::DATE), ($4::INTEGER, $5::VARCHAR, $6::DATE), ($7::INTEGER, $8::VARCHAR, $9::DATE) RETURNING drv_sa_core.id;
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01', $4 = '2', $5 = 'many2', $6 = '2020-01-02', $7 = '3', $8 = 'many3', $9 = '2020-01-03'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.n, drv_sa_core.big, drv_sa_core.name, drv_sa_core.flag, drv_sa_core.score, drv_sa_core.day, drv_sa_core.at, drv_sa_core.at_tz 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.n, drv_sa_core.big, drv_sa_core.name, drv_sa_core.flag, drv_sa_core.score, drv_sa_core.day, drv_sa_core.at, drv_sa_core.at_tz 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT count(*) AS count_1 
FROM drv_sa_core 
WHERE drv_sa_core.day >= $1::DATE AND drv_sa_core.flag IS true AND drv_sa_core.at < $2::TIMESTAMP WITHOUT TIME ZONE AND drv_sa_core.at_tz > $3::TIMESTAMP WITH TIME ZONE;
--   parameters: $1 = '2024-01-01', $2 = '2025-01-01 00:00:00', $3 = '2023-12-31 00:00:00+00'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_core SET big=(drv_sa_core.big + $1::BIGINT), score=$2, at_tz=$3::TIMESTAMP WITH TIME ZONE WHERE drv_sa_core.name = $4::VARCHAR;
--   parameters: $1 = '1', $2 = '2.5', $3 = '2030-06-01 12:00:00+00', $4 = 'beta'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.score, drv_sa_core.at_tz, drv_sa_core.big 
FROM drv_sa_core 
WHERE drv_sa_core.name = $1::VARCHAR;
--   parameters: $1 = 'beta'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
DELETE FROM drv_sa_core WHERE drv_sa_core.name LIKE $1::VARCHAR;
--   parameters: $1 = 'many%'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (name) VALUES ($1::VARCHAR) RETURNING drv_sa_core.id;
--   parameters: $1 = 'gone'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (name) VALUES ($1::VARCHAR) RETURNING drv_sa_core.id;
--   parameters: $1 = 'kept'
SAVEPOINT sa_savepoint_1;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (name) VALUES ($1::VARCHAR) RETURNING drv_sa_core.id;
--   parameters: $1 = 'undone'
ROLLBACK TO SAVEPOINT sa_savepoint_1;
COMMIT;
BEGIN;
SELECT drv_sa_core.name 
FROM drv_sa_core;
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_core (name) VALUES ($1::VARCHAR) RETURNING drv_sa_core.id;
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_sa_core_name_key"
ROLLBACK;
BEGIN;
SELECT 2;
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_0 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_0 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_0 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_0 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_0 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.name 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.n 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'

-- backend 28016
BEGIN;
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_core SET n=(drv_sa_core.n + $1::INTEGER) WHERE drv_sa_core.id = $2::INTEGER;
--   parameters: $1 = '100', $2 = '1'
COMMIT;

-- backend 28001
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.n 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_core SET n=$1::INTEGER WHERE drv_sa_core.id = $2::INTEGER;
--   parameters: $1 = '0', $2 = '1'
--   ERROR: could not serialize access due to concurrent update
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_core.n 
FROM drv_sa_core 
WHERE drv_sa_core.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
