-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   python3 scenario_sqlalchemy_orm.py
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

-- backend 28091
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
--   parameters: $1 = 'drv_sa_orm', $2 = 'r', $3 = 'p', $4 = 'f', $5 = 'v', $6 = 'm', $7 = 'pg_catalog'

DROP TABLE drv_sa_orm;
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT pg_catalog.pg_class.relname 
FROM pg_catalog.pg_class JOIN pg_catalog.pg_namespace ON pg_catalog.pg_namespace.oid = pg_catalog.pg_class.relnamespace 
WHERE pg_catalog.pg_class.relname IN ($1::VARCHAR) AND pg_catalog.pg_class.relkind = ANY (ARRAY[$2::VARCHAR, $3::VARCHAR, $4::VARCHAR, $5::VARCHAR, $6::VARCHAR]) AND pg_catalog.pg_table_is_visible(pg_catalog.pg_class.oid) AND pg_catalog.pg_namespace.nspname != $7::VARCHAR;
--   parameters: $1 = 'drv_sa_orm', $2 = 'r', $3 = 'p', $4 = 'f', $5 = 'v', $6 = 'm', $7 = 'pg_catalog'

CREATE TABLE drv_sa_orm (
	id SERIAL NOT NULL, 
	n INTEGER, 
	big BIGINT, 
	name VARCHAR NOT NULL, 
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
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) SELECT p0::INTEGER, p1::BIGINT, p2::VARCHAR, p3::BOOLEAN, p4::FLOAT, p5::DATE, p6::TIMESTAMP WITHOUT TIME ZONE, p7::TIMESTAMP WITH TIME ZONE FROM (VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE, 0), ($9::INTEGER, $10::BIGINT, $11::VARCHAR, $12, $13, $14::DATE, $15::TIMESTAMP WITHOUT TIME ZONE, $16::TIMESTAMP WITH TIME ZONE, 1)) AS imp_sen(p0, p1, p2, p3, p4, p5, p6, p7, sen_counter) ORDER BY sen_counter RETURNING drv_sa_orm.id, drv_sa_orm.id AS id__1;
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00', $9 = '-7', $10 = '-1', $11 = 'beta', $12 = 'f', $13 = '-1.5e+300', $14 = '1999-12-31', $15 = '1999-12-31 23:59:59', $16 = '2000-01-01 00:00:00+00'
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) SELECT p0::INTEGER, p1::BIGINT, p2::VARCHAR, p3::BOOLEAN, p4::FLOAT, p5::DATE, p6::TIMESTAMP WITHOUT TIME ZONE, p7::TIMESTAMP WITH TIME ZONE FROM (VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE, 0), ($9::INTEGER, $10::BIGINT, $11::VARCHAR, $12, $13, $14::DATE, $15::TIMESTAMP WITHOUT TIME ZONE, $16::TIMESTAMP WITH TIME ZONE, 1), ($17::INTEGER, $18::BIGINT, $19::VARCHAR, $20, $21, $22::DATE, $23::TIMESTAMP WITHOUT TIME ZONE, $24::TIMESTAMP WITH TIME ZONE, 2)) AS imp_sen(p0, p1, p2, p3, p4, p5, p6, p7, sen_counter) ORDER BY sen_counter RETURNING drv_sa_orm.id, drv_sa_orm.id AS id__1;
--   parameters: $1 = '1', $2 = NULL, $3 = 'many1', $4 = NULL, $5 = NULL, $6 = '2020-01-01', $7 = NULL, $8 = NULL, $9 = '2', $10 = NULL, $11 = 'many2', $12 = NULL, $13 = NULL, $14 = '2020-01-02', $15 = NULL, $16 = NULL, $17 = '3', $18 = NULL, $19 = 'many3', $20 = NULL, $21 = NULL, $22 = '2020-01-03', $23 = NULL, $24 = NULL
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT count(*) AS count_1 
FROM drv_sa_orm 
WHERE drv_sa_orm.day >= $1::DATE AND drv_sa_orm.flag IS true AND drv_sa_orm.at < $2::TIMESTAMP WITHOUT TIME ZONE AND drv_sa_orm.at_tz > $3::TIMESTAMP WITH TIME ZONE;
--   parameters: $1 = '2024-01-01', $2 = '2025-01-01 00:00:00', $3 = '2023-12-31 00:00:00+00'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.name LIKE $1::VARCHAR;
--   parameters: $1 = 'many%'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.name = $1::VARCHAR;
--   parameters: $1 = 'beta'
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_orm SET big=$1::BIGINT, score=$2, at_tz=$3::TIMESTAMP WITH TIME ZONE WHERE drv_sa_orm.id = $4::INTEGER;
--   parameters: $1 = '0', $2 = '2.5', $3 = '2030-06-01 12:00:00+00', $4 = '2'
COMMIT;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.name = $1::VARCHAR;
--   parameters: $1 = 'beta'
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.name LIKE $1::VARCHAR;
--   parameters: $1 = 'many%'
-- execute _pg3_0 (extended protocol)
DELETE FROM drv_sa_orm WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '3'
-- execute _pg3_0 (extended protocol)
DELETE FROM drv_sa_orm WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '4'
-- execute _pg3_0 (extended protocol)
DELETE FROM drv_sa_orm WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '5'
COMMIT;
BEGIN;
SELECT count(*) AS count_1 
FROM drv_sa_orm;
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_orm.id;
--   parameters: $1 = NULL, $2 = NULL, $3 = 'gone', $4 = NULL, $5 = NULL, $6 = NULL, $7 = NULL, $8 = NULL
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_orm.id;
--   parameters: $1 = NULL, $2 = NULL, $3 = 'kept', $4 = NULL, $5 = NULL, $6 = NULL, $7 = NULL, $8 = NULL
SAVEPOINT sa_savepoint_1;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_orm.id;
--   parameters: $1 = NULL, $2 = NULL, $3 = 'undone', $4 = NULL, $5 = NULL, $6 = NULL, $7 = NULL, $8 = NULL
ROLLBACK TO SAVEPOINT sa_savepoint_1;
COMMIT;
BEGIN;
SELECT drv_sa_orm.name 
FROM drv_sa_orm;
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_sa_orm (n, big, name, flag, score, day, at, at_tz) VALUES ($1::INTEGER, $2::BIGINT, $3::VARCHAR, $4, $5, $6::DATE, $7::TIMESTAMP WITHOUT TIME ZONE, $8::TIMESTAMP WITH TIME ZONE) RETURNING drv_sa_orm.id;
--   parameters: $1 = NULL, $2 = NULL, $3 = 'beta', $4 = NULL, $5 = NULL, $6 = NULL, $7 = NULL, $8 = NULL
--   ERROR: duplicate key value violates unique constraint "drv_sa_orm_name_key"
ROLLBACK;
BEGIN;
SELECT count(*) AS count_1 
FROM drv_sa_orm;
ROLLBACK;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_1 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
DEALLOCATE ALL;
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '2'
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'

-- backend 28106
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_orm SET n=$1::INTEGER WHERE drv_sa_orm.id = $2::INTEGER;
--   parameters: $1 = '142', $2 = '1'
COMMIT;

-- backend 28091
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute _pg3_2 (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
UPDATE drv_sa_orm SET n=$1::INTEGER WHERE drv_sa_orm.id = $2::INTEGER;
--   parameters: $1 = '0', $2 = '1'
--   ERROR: could not serialize access due to concurrent update
ROLLBACK;
DEALLOCATE ALL;

-- backend 28106
BEGIN ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
SELECT drv_sa_orm.id, drv_sa_orm.n, drv_sa_orm.big, drv_sa_orm.name, drv_sa_orm.flag, drv_sa_orm.score, drv_sa_orm.day, drv_sa_orm.at, drv_sa_orm.at_tz 
FROM drv_sa_orm 
WHERE drv_sa_orm.id = $1::INTEGER;
--   parameters: $1 = '1'
ROLLBACK;
