-- Captured from PostgreSQL 15 (log_statement = 'all') while running:
--   java -cp /usr/share/java/postgresql.jar Scenario.java
-- exit status 0

-- ===== Distinct catalog, introspection and session statements =====

SET extra_float_digits = 3;

SET application_name = 'PostgreSQL JDBC Driver';

SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,  CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema'  WHEN true THEN CASE  WHEN n.nspname = 'pg_catalog' OR n.nspname = 'information_schema' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TABLE'   WHEN 'v' THEN 'SYSTEM VIEW'   WHEN 'i' THEN 'SYSTEM INDEX'   ELSE NULL   END  WHEN n.nspname = 'pg_toast' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TOAST TABLE'   WHEN 'i' THEN 'SYSTEM TOAST INDEX'   ELSE NULL   END  ELSE CASE c.relkind   WHEN 'r' THEN 'TEMPORARY TABLE'   WHEN 'p' THEN 'TEMPORARY TABLE'   WHEN 'i' THEN 'TEMPORARY INDEX'   WHEN 'S' THEN 'TEMPORARY SEQUENCE'   WHEN 'v' THEN 'TEMPORARY VIEW'   ELSE NULL   END  END  WHEN false THEN CASE c.relkind  WHEN 'r' THEN 'TABLE'  WHEN 'p' THEN 'PARTITIONED TABLE'  WHEN 'i' THEN 'INDEX'  WHEN 'P' then 'PARTITIONED INDEX'  WHEN 'S' THEN 'SEQUENCE'  WHEN 'v' THEN 'VIEW'  WHEN 'c' THEN 'TYPE'  WHEN 'f' THEN 'FOREIGN TABLE'  WHEN 'm' THEN 'MATERIALIZED VIEW'  ELSE NULL  END  ELSE NULL  END  AS TABLE_TYPE, d.description AS REMARKS,  '' as TYPE_CAT, '' as TYPE_SCHEM, '' as TYPE_NAME, '' AS SELF_REFERENCING_COL_NAME, '' AS REF_GENERATION  FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c  LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)  WHERE c.relnamespace = n.oid  AND c.relname LIKE 'drv_pgjdbc' AND (false  OR ( c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ) )  ORDER BY TABLE_TYPE,TABLE_SCHEM,TABLE_NAME;

SELECT * FROM (SELECT n.nspname,c.relname,a.attname,a.atttypid,a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,a.atttypmod,a.attlen,t.typtypmod,row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum, nullif(a.attidentity, '') as attidentity,nullif(a.attgenerated, '') as attgenerated,pg_catalog.pg_get_expr(def.adbin, def.adrelid) AS adsrc,dsc.description,t.typbasetype,t.typtype  FROM pg_catalog.pg_namespace n  JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)  JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)  JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)  LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)  LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)  LEFT JOIN pg_catalog.pg_class dc ON (dc.oid=dsc.classoid AND dc.relname='pg_class')  LEFT JOIN pg_catalog.pg_namespace dn ON (dc.relnamespace=dn.oid AND dn.nspname='pg_catalog')  WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped  AND c.relname LIKE 'drv_pgjdbc') c WHERE true  ORDER BY nspname,c.relname,attnum;

SELECT        result.TABLE_CAT,        result.TABLE_SCHEM,        result.TABLE_NAME,        result.COLUMN_NAME,        result.KEY_SEQ,        result.PK_NAME FROM      (SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM,   ct.relname AS TABLE_NAME, a.attname AS COLUMN_NAME,   (information_schema._pg_expandarray(i.indkey)).n AS KEY_SEQ, ci.relname AS PK_NAME,   information_schema._pg_expandarray(i.indkey) AS KEYS, a.attnum AS A_ATTNUM FROM pg_catalog.pg_class ct   JOIN pg_catalog.pg_attribute a ON (ct.oid = a.attrelid)   JOIN pg_catalog.pg_namespace n ON (ct.relnamespace = n.oid)   JOIN pg_catalog.pg_index i ON ( a.attrelid = i.indrelid)   JOIN pg_catalog.pg_class ci ON (ci.oid = i.indexrelid) WHERE true  AND ct.relname = 'drv_pgjdbc' AND i.indisprimary  ) result where  result.A_ATTNUM = (result.KEYS).x  ORDER BY result.table_name, result.pk_name, result.key_seq;

SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ;

-- ===== Every statement, in the order sent =====

-- backend 28973
-- execute <unnamed> (extended protocol)
SET extra_float_digits = 3;
-- execute <unnamed> (extended protocol)
SET application_name = 'PostgreSQL JDBC Driver';
-- execute <unnamed> (extended protocol)
SELECT 1;
-- execute <unnamed> (extended protocol)
DROP TABLE IF EXISTS drv_pgjdbc;
-- execute <unnamed> (extended protocol)
CREATE TABLE drv_pgjdbc (id serial PRIMARY KEY, n integer, big bigint, name text UNIQUE, flag boolean, score double precision, day date, at timestamp, at_tz timestamptz);
-- execute <unnamed> (extended protocol)
SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,  CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema'  WHEN true THEN CASE  WHEN n.nspname = 'pg_catalog' OR n.nspname = 'information_schema' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TABLE'   WHEN 'v' THEN 'SYSTEM VIEW'   WHEN 'i' THEN 'SYSTEM INDEX'   ELSE NULL   END  WHEN n.nspname = 'pg_toast' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TOAST TABLE'   WHEN 'i' THEN 'SYSTEM TOAST INDEX'   ELSE NULL   END  ELSE CASE c.relkind   WHEN 'r' THEN 'TEMPORARY TABLE'   WHEN 'p' THEN 'TEMPORARY TABLE'   WHEN 'i' THEN 'TEMPORARY INDEX'   WHEN 'S' THEN 'TEMPORARY SEQUENCE'   WHEN 'v' THEN 'TEMPORARY VIEW'   ELSE NULL   END  END  WHEN false THEN CASE c.relkind  WHEN 'r' THEN 'TABLE'  WHEN 'p' THEN 'PARTITIONED TABLE'  WHEN 'i' THEN 'INDEX'  WHEN 'P' then 'PARTITIONED INDEX'  WHEN 'S' THEN 'SEQUENCE'  WHEN 'v' THEN 'VIEW'  WHEN 'c' THEN 'TYPE'  WHEN 'f' THEN 'FOREIGN TABLE'  WHEN 'm' THEN 'MATERIALIZED VIEW'  ELSE NULL  END  ELSE NULL  END  AS TABLE_TYPE, d.description AS REMARKS,  '' as TYPE_CAT, '' as TYPE_SCHEM, '' as TYPE_NAME, '' AS SELF_REFERENCING_COL_NAME, '' AS REF_GENERATION  FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c  LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)  WHERE c.relnamespace = n.oid  AND c.relname LIKE 'drv_pgjdbc' AND (false  OR ( c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ) )  ORDER BY TABLE_TYPE,TABLE_SCHEM,TABLE_NAME;
-- execute <unnamed> (extended protocol)
SELECT * FROM (SELECT n.nspname,c.relname,a.attname,a.atttypid,a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) AS attnotnull,a.atttypmod,a.attlen,t.typtypmod,row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum, nullif(a.attidentity, '') as attidentity,nullif(a.attgenerated, '') as attgenerated,pg_catalog.pg_get_expr(def.adbin, def.adrelid) AS adsrc,dsc.description,t.typbasetype,t.typtype  FROM pg_catalog.pg_namespace n  JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid)  JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)  JOIN pg_catalog.pg_type t ON (a.atttypid = t.oid)  LEFT JOIN pg_catalog.pg_attrdef def ON (a.attrelid=def.adrelid AND a.attnum = def.adnum)  LEFT JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)  LEFT JOIN pg_catalog.pg_class dc ON (dc.oid=dsc.classoid AND dc.relname='pg_class')  LEFT JOIN pg_catalog.pg_namespace dn ON (dc.relnamespace=dn.oid AND dn.nspname='pg_catalog')  WHERE c.relkind in ('r','p','v','f','m') and a.attnum > 0 AND NOT a.attisdropped  AND c.relname LIKE 'drv_pgjdbc') c WHERE true  ORDER BY nspname,c.relname,attnum;
-- execute <unnamed> (extended protocol)
SELECT        result.TABLE_CAT,        result.TABLE_SCHEM,        result.TABLE_NAME,        result.COLUMN_NAME,        result.KEY_SEQ,        result.PK_NAME FROM      (SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM,   ct.relname AS TABLE_NAME, a.attname AS COLUMN_NAME,   (information_schema._pg_expandarray(i.indkey)).n AS KEY_SEQ, ci.relname AS PK_NAME,   information_schema._pg_expandarray(i.indkey) AS KEYS, a.attnum AS A_ATTNUM FROM pg_catalog.pg_class ct   JOIN pg_catalog.pg_attribute a ON (ct.oid = a.attrelid)   JOIN pg_catalog.pg_namespace n ON (ct.relnamespace = n.oid)   JOIN pg_catalog.pg_index i ON ( a.attrelid = i.indrelid)   JOIN pg_catalog.pg_class ci ON (ci.oid = i.indexrelid) WHERE true  AND ct.relname = 'drv_pgjdbc' AND i.indisprimary  ) result where  result.A_ATTNUM = (result.KEYS).x  ORDER BY result.table_name, result.pk_name, result.key_seq;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING "id";
--   parameters: $1 = '42', $2 = '9000000000', $3 = 'O''Hara ✓', $4 = 't', $5 = '0.30000000000000004', $6 = '2024-02-29', $7 = '2024-01-02 03:04:05.678', $8 = '2024-01-02 01:04:05.678+00'
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (n, big, name, flag, score, day, at, at_tz) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING "id";
--   parameters: $1 = '-7', $2 = '-1', $3 = 'beta', $4 = 'f', $5 = '-1.5e+300', $6 = '1999-12-31', $7 = '1999-12-31 23:59:59', $8 = '2000-01-01 00:00:00+00'
-- execute S_1 (extended protocol)
INSERT INTO drv_pgjdbc (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '1', $2 = 'many1', $3 = '2020-01-01'
-- execute S_1 (extended protocol)
INSERT INTO drv_pgjdbc (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '2', $2 = 'many2', $3 = '2020-01-02'
-- execute S_1 (extended protocol)
INSERT INTO drv_pgjdbc (n, name, day) VALUES ($1, $2, $3);
--   parameters: $1 = '3', $2 = 'many3', $3 = '2020-01-03'
-- execute <unnamed> (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT n, big, name, flag, score, day, at, at_tz FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute <unnamed> (extended protocol)
SELECT count(*) FROM drv_pgjdbc WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4;
--   parameters: $1 = '2024-01-01', $2 = 't', $3 = '2025-01-01 00:00:00', $4 = '2023-12-31 00:00:00+00'
-- execute <unnamed> (extended protocol)
UPDATE drv_pgjdbc SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4;
--   parameters: $1 = '2.5', $2 = '2030-06-01 12:00:00+00', $3 = '1', $4 = 'beta'
-- execute <unnamed> (extended protocol)
SELECT score, at_tz, big FROM drv_pgjdbc WHERE name = $1;
--   parameters: $1 = 'beta'
-- execute <unnamed> (extended protocol)
DELETE FROM drv_pgjdbc WHERE name LIKE $1;
--   parameters: $1 = 'many%'
-- execute <unnamed> (extended protocol)
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (name) VALUES ($1);
--   parameters: $1 = 'gone'
-- execute S_2 (extended protocol)
ROLLBACK;
-- execute <unnamed> (extended protocol)
BEGIN;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (name) VALUES ($1);
--   parameters: $1 = 'kept'
-- execute <unnamed> (extended protocol)
SAVEPOINT JDBC_SAVEPOINT_0;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (name) VALUES ($1);
--   parameters: $1 = 'undone'
-- execute <unnamed> (extended protocol)
ROLLBACK TO SAVEPOINT JDBC_SAVEPOINT_0;
-- execute S_3 (extended protocol)
COMMIT;
-- execute <unnamed> (extended protocol)
SELECT name FROM drv_pgjdbc;
-- execute <unnamed> (extended protocol)
INSERT INTO drv_pgjdbc (name) VALUES ($1);
--   parameters: $1 = 'beta'
--   ERROR: duplicate key value violates unique constraint "drv_pgjdbc_name_key"
-- execute <unnamed> (extended protocol)
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute <unnamed> (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '1'
-- execute S_2 (extended protocol)
ROLLBACK;
-- execute S_5 (extended protocol)
BEGIN;
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_4 (extended protocol)
SELECT name, day FROM drv_pgjdbc WHERE id = $1;
--   parameters: $1 = '2'
-- execute S_3 (extended protocol)
COMMIT;
COPY drv_pgjdbc (n, big, name, flag, score, day, at, at_tz) FROM STDIN;
COPY drv_pgjdbc (name, n) TO STDOUT;

-- backend 29211
-- execute <unnamed> (extended protocol)
SET extra_float_digits = 3;
-- execute <unnamed> (extended protocol)
SET application_name = 'PostgreSQL JDBC Driver';

-- backend 29212
-- execute <unnamed> (extended protocol)
SET extra_float_digits = 3;
-- execute <unnamed> (extended protocol)
SET application_name = 'PostgreSQL JDBC Driver';

-- backend 29211
-- execute <unnamed> (extended protocol)
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ;
-- execute <unnamed> (extended protocol)
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_pgjdbc WHERE id = 1;

-- backend 29212
-- execute <unnamed> (extended protocol)
UPDATE drv_pgjdbc SET n = n + 100 WHERE id = 1;

-- backend 29211
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_pgjdbc WHERE id = 1;
-- execute <unnamed> (extended protocol)
UPDATE drv_pgjdbc SET n = 0 WHERE id = 1;
--   ERROR: could not serialize access due to concurrent update
-- execute S_1 (extended protocol)
ROLLBACK;
-- execute <unnamed> (extended protocol)
BEGIN;
-- execute <unnamed> (extended protocol)
SELECT n FROM drv_pgjdbc WHERE id = 1;
-- execute S_2 (extended protocol)
COMMIT;
