// node-postgres (pg) with its defaults, against the server named by
// PGHOST/PGPORT/PGUSER/PGDATABASE. COPY through pg-copy-streams.
'use strict'

const { Client } = require('pg')
const { from: copyFrom, to: copyTo } = require('pg-copy-streams')
const { Readable } = require('node:stream')
const { pipeline } = require('node:stream/promises')
const { Scenario, check, checkEq } = require('./steps')

const T = 'drv_node_pg'
const COLS = 'n, big, name, flag, score, day, at, at_tz'
// dates are the language's Date: a date and a timestamp are local times
const ROWS = [
  [42, 9000000000n, "O'Hara ✓", true, 0.1 + 0.2, new Date(2024, 1, 29),
    new Date(2024, 0, 2, 3, 4, 5, 678), new Date(Date.UTC(2024, 0, 2, 1, 4, 5, 678))],
  [-7, -1n, 'beta', false, -1.5e300, new Date(1999, 11, 31),
    new Date(1999, 11, 31, 23, 59, 59), new Date(Date.UTC(2000, 0, 1))]
]

// application types: numeric (unconstrained and numeric(12,2)), uuid, bytea.
// node-postgres sends a string as text and a Buffer as a binary parameter; it
// returns numeric and int8 as strings (its default), uuid as a string, bytea
// as a Buffer.
const TT = `${T}_types`
const TYPE_COLS = 'amount, price, u, data, n, big'
const UUID_A = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
const TYPE_ROWS = [
  // amount numeric, price numeric(12,2) as inserted, u uuid, data bytea, n int, big bigint
  ['12345678901234567890.123456789', '1234.565', UUID_A,
    Buffer.from([0, 0xff, 1, 0x27, 0x5c, 0x7f, 0x80, ...Buffer.from('end')]), 1, 9000000000000000000n],
  ['-0.000000001', '-0.005', '00000000-0000-0000-0000-000000000000', Buffer.alloc(0), 2,
    9000000000000000000n],
  ['NaN', '7', 'ffffffff-ffff-ffff-ffff-ffffffffffff', Buffer.from([...Array(256).keys()]), 2, -5n],
  ['Infinity', '9999999999.994', '00000000-0000-4000-8000-000000000001', Buffer.from([0]), null, null]
]
// price as numeric(12,2) stores it: rounded half away from zero to 2 places
const PRICES = ['1234.57', '-0.01', '7.00', '9999999999.99']

// more types: jsonb and json, real (float4), time and timetz, interval, an
// enum and a domain over integer, with names of this scenario's own.
// node-postgres sends an object as JSON.stringify's text (an array it would
// send as a PostgreSQL array literal: JSON arrays go as strings), parses
// json and jsonb results with JSON.parse, returns real as a number, time and
// timetz as strings, and interval as a PostgresInterval object (whose
// toPostgres() makes it a parameter again).
const TM = `${T}_more`
const TE = `${T}_moods`
const TD = `${T}_pos`
const MOOD = 'drv_mood_node_pg'
const POS = 'drv_pos_node_pg'
const DOC = {
  name: 'Zoë ✓ "q"\\',
  n: 42,
  pi: 3.25,
  tiny: -1.5e-7,
  none: null,
  yes: true,
  tags: ['a', 1, null, [], {}],
  nested: { deep: { list: [1, 2.5, 'x'] } }
}
// jsonb's text form: keys sorted by length then bytes, numbers as numeric writes them
const DOC_JSONB_TEXT = '{"n": 42, "pi": 3.25, "yes": true, "name": "Zoë ✓ \\"q\\"\\\\", "none": null, ' +
  '"tags": ["a", 1, null, [], {}], "tiny": -0.00000015, "nested": {"deep": {"list": [1, 2.5, "x"]}}}'
const DOC_JSONB_KEYS = ['n', 'pi', 'yes', 'name', 'none', 'tags', 'tiny', 'nested']
const IV_TEXT = '1 year 2 mons 3 days 04:05:06.789'

// what comes back: int8 as a string, dates as Date
function expected (row) {
  return row.map((v) => (typeof v === 'bigint' ? v.toString() : v))
}

async function main () {
  const sc = new Scenario('node-pg')
  const client = new Client()
  const ids = []
  sc.onFailure.push(async () => { await client.query('ROLLBACK') })

  await sc.step('connect', async () => {
    await client.connect()
    checkEq((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }])
  })

  await sc.step('create table (DROP IF EXISTS, SERIAL key, eight column types)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${T}`)
    await client.query(`CREATE TABLE ${T} (
      id serial PRIMARY KEY,
      n integer, big bigint, name text UNIQUE, flag boolean,
      score double precision, day date, at timestamp, at_tz timestamptz)`)
  })

  await sc.step('insert with parameters of every type, RETURNING id', async () => {
    for (const row of ROWS) {
      const r = await client.query(
        `INSERT INTO ${T} (${COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`, row)
      ids.push(r.rows[0].id)
    }
    for (let i = 1; i <= 3; i++) {
      await client.query(`INSERT INTO ${T} (n, name, day) VALUES ($1, $2, $3)`,
        [i, `many${i}`, new Date(2020, 0, i)])
    }
    checkEq(ids.length, 2, 'ids returned')
  })

  await sc.step('select with parameters, values round-trip', async () => {
    for (let k = 0; k < ids.length; k++) {
      const r = await client.query({ text: `SELECT ${COLS} FROM ${T} WHERE id = $1`, values: [ids[k]], rowMode: 'array' })
      checkEq(r.rows[0], expected(ROWS[k]), `row ${ids[k]}`)
    }
    const r = await client.query(
      `SELECT count(*) FROM ${T} WHERE day >= $1 AND flag = $2 AND at < $3 AND at_tz > $4`,
      [new Date(2024, 0, 1), true, new Date(2025, 0, 1), new Date(Date.UTC(2023, 11, 31))])
    checkEq(r.rows[0].count, '1', 'filtered count')
  })

  await sc.step('update with parameters', async () => {
    const newTz = new Date(Date.UTC(2030, 5, 1, 12))
    const r = await client.query(
      `UPDATE ${T} SET score = $1, at_tz = $2, big = big + $3 WHERE name = $4`,
      [2.5, newTz, 1, 'beta'])
    checkEq(r.rowCount, 1, 'rowCount')
    const g = await client.query(`SELECT score, at_tz, big FROM ${T} WHERE name = $1`, ['beta'])
    checkEq(g.rows[0], { score: 2.5, at_tz: newTz, big: '0' })
  })

  await sc.step('delete with parameters', async () => {
    const r = await client.query(`DELETE FROM ${T} WHERE name LIKE $1`, ['many%'])
    checkEq(r.rowCount, 3, 'rowCount')
  })

  await sc.step('transaction rolled back; savepoint rolled back inside a committed one', async () => {
    await client.query('BEGIN')
    await client.query(`INSERT INTO ${T} (name) VALUES ($1)`, ['gone'])
    await client.query('ROLLBACK')
    await client.query('BEGIN')
    await client.query(`INSERT INTO ${T} (name) VALUES ($1)`, ['kept'])
    await client.query('SAVEPOINT sp')
    await client.query(`INSERT INTO ${T} (name) VALUES ($1)`, ['undone'])
    await client.query('ROLLBACK TO SAVEPOINT sp')
    await client.query('COMMIT')
    const names = (await client.query(`SELECT name FROM ${T}`)).rows.map((r) => r.name)
    check(!names.includes('gone') && !names.includes('undone'), `rolled back rows visible: ${names}`)
    check(names.includes('kept'), 'committed row missing')
  })

  await sc.step('unique violation caught, constraint name reported', async () => {
    let err = null
    try {
      await client.query(`INSERT INTO ${T} (name) VALUES ($1)`, ['beta'])
    } catch (e) {
      err = e
    }
    check(err !== null, 'no error for a duplicate key')
    checkEq(err.code, '23505', 'code')
    checkEq(err.constraint, `${T}_name_key`, 'constraint')
    checkEq(err.table, T, 'table')
    checkEq((await client.query('SELECT 2 AS two')).rows[0].two, 2)
  })

  await sc.step('named prepared statement run 10 times, ROLLBACK, reused', async () => {
    const q = (id) => ({ name: 'drv_node_pg_by_id', text: `SELECT name, day FROM ${T} WHERE id = $1`, values: [id] })
    await client.query('BEGIN')
    for (let i = 0; i < 10; i++) checkEq((await client.query(q(ids[0]))).rows[0].name, ROWS[0][2])
    await client.query('ROLLBACK')
    for (let i = 0; i < 10; i++) checkEq((await client.query(q(ids[1]))).rows[0].name, 'beta')
  })

  await sc.step('COPY FROM STDIN and TO STDOUT (pg-copy-streams)', async () => {
    const lines = []
    for (let i = 0; i < 5; i++) {
      lines.push(`${100 + i}\t${1e12 + i}\tcopy${i}\t${i % 2 === 0}\t${i / 4}\t2021-03-0${i + 1}\t2021-03-0${i + 1} 08:30:00\t2021-03-0${i + 1} 08:30:00+00\n`)
    }
    lines.push('\\N\t\\N\tcopynull\t\\N\t\\N\t\\N\t\\N\t\\N\n')
    const inStream = client.query(copyFrom(`COPY ${T} (${COLS}) FROM STDIN`))
    await pipeline(Readable.from(lines), inStream)
    checkEq(inStream.rowCount, 6, 'rows copied in')
    const chunks = []
    const outStream = client.query(copyTo(`COPY ${T} (name, n) TO STDOUT`))
    for await (const chunk of outStream) chunks.push(chunk)
    const got = Buffer.concat(chunks).toString().split('\n').filter((l) => l.startsWith('copy')).sort()
    checkEq(got, ['copy0\t100', 'copy1\t101', 'copy2\t102', 'copy3\t103', 'copy4\t104', 'copynull\t\\N'])
  })

  await sc.step('REPEATABLE READ, snapshot kept, update of a changed row fails with 40001', async () => {
    const a = new Client()
    const b = new Client()
    await a.connect()
    await b.connect()
    try {
      const q = `SELECT n FROM ${T} WHERE id = $1`
      await a.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      const before = (await a.query(q, [ids[0]])).rows[0].n
      await b.query(`UPDATE ${T} SET n = n + 100 WHERE id = $1`, [ids[0]])
      checkEq((await a.query(q, [ids[0]])).rows[0].n, before, "A's second read")
      let err = null
      try {
        await a.query(`UPDATE ${T} SET n = 0 WHERE id = $1`, [ids[0]])
      } catch (e) {
        err = e
      }
      check(err !== null, "A's update of a row B changed succeeded")
      checkEq(err.code, '40001', 'code')
      await a.query('ROLLBACK')
      checkEq((await a.query(q, [ids[0]])).rows[0].n, before + 100, "A's read after the rollback")
    } finally {
      await a.end()
      await b.end()
    }
  })

  await sc.step('application types numeric, uuid, bytea, sum/avg as strings (text results, Buffer sent in binary)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${TT}`)
    await client.query(`CREATE TABLE ${TT} (id serial PRIMARY KEY, amount numeric,
      price numeric(12,2), u uuid UNIQUE, data bytea, n integer, big bigint)`)
    for (const row of TYPE_ROWS) {
      await client.query(`INSERT INTO ${TT} (${TYPE_COLS}) VALUES ($1, $2, $3, $4, $5, $6)`, row)
    }
    const r = await client.query({ text: `SELECT ${TYPE_COLS} FROM ${TT} ORDER BY id`, rowMode: 'array' })
    checkEq(r.fields.map((f) => f.dataTypeID), [1700, 1700, 2950, 17, 23, 20], 'result type oids')
    checkEq(r.rows, TYPE_ROWS.map((row, k) =>
      [row[0], PRICES[k], row[2], row[3], row[4], row[5] === null ? null : row[5].toString()]), 'rows')
    // each type as a parameter in WHERE (numeric NaN equals NaN in PostgreSQL)
    for (const [col, i] of [['amount', 0], ['u', 2], ['data', 3]]) {
      for (let k = 0; k < TYPE_ROWS.length; k++) {
        const g = await client.query({
          text: `SELECT n, price FROM ${TT} WHERE ${col} = $1`, values: [TYPE_ROWS[k][i]], rowMode: 'array'
        })
        checkEq(g.rows, [[TYPE_ROWS[k][4], PRICES[k]]], `WHERE ${col} = row ${k}'s`)
      }
    }
    checkEq((await client.query(`SELECT u FROM ${TT} WHERE price = $1`, ['1234.57'])).rows, [{ u: UUID_A }],
      'WHERE price = 1234.57')
    // uuid in PostgreSQL's other input forms, returned in the canonical one
    for (const text of ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}',
      'a0eebc999c0b4ef8bb6d6bb9bd380a11']) {
      checkEq((await client.query(`SELECT u, n FROM ${TT} WHERE u = $1`, [text])).rows, [{ u: UUID_A, n: 1 }],
        `WHERE u = '${text}'`)
    }
    // parameters straight back as results
    const e = await client.query({
      text: "SELECT $1::numeric, $2::numeric, $3::numeric, $4::uuid, $5::bytea, encode($5::bytea, 'hex')",
      values: ['-Infinity', '-98765432109876543210.0000000001', 0.1, UUID_A, Buffer.from([0, 0, 0xff, 0xff])],
      rowMode: 'array'
    })
    checkEq(e.rows[0], ['-Infinity', '-98765432109876543210.0000000001', '0.1', UUID_A,
      Buffer.from([0, 0, 0xff, 0xff]), '0000ffff'], 'parameters echoed')
    // sum(bigint) and avg(integer) are numeric (strings); sum(integer) is bigint
    const a = await client.query({
      text: `SELECT sum(big), avg(n), sum(n), sum(price), avg(big) FROM ${TT}`, rowMode: 'array'
    })
    checkEq(a.fields.map((f) => f.dataTypeID), [1700, 1700, 20, 1700, 1700], 'aggregate type oids')
    checkEq(a.rows[0], ['17999999999999999995', '1.6666666666666667', '5', '10000001241.55',
      '5999999999999999998'], 'sum(big), avg(n), sum(n), sum(price), avg(big)')
    // a price that rounds past numeric(12,2)'s 10 integer digits
    let err = null
    try {
      await client.query(`INSERT INTO ${TT} (price) VALUES ($1)`, ['9999999999.995'])
    } catch (x) {
      err = x
    }
    check(err !== null, 'no error for 9999999999.995 in numeric(12,2)')
    checkEq(err.code, '22003', 'code')
  })

  await sc.step('more types jsonb, json, real, time, timetz, interval (text results)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${TM}`)
    await client.query(`CREATE TABLE ${TM} (id serial PRIMARY KEY, jb jsonb, js json, r real,
      t time, tz timetz, iv interval)`)
    const rows = [
      [DOC, DOC, 0.1, '04:05:06.789012', '04:05:06.789012+05:30', IV_TEXT],
      [{ name: 'other', n: -1, tags: [] }, { name: 'other', n: -1, tags: [] }, 16777217,
        '23:59:59.999999', '23:59:59.999999-08', '-3 days +00:00:00.000001'],
      [JSON.stringify([1, 'two', null]), JSON.stringify('just a string'), -3.4028235e38, '00:00',
        '00:00:00+00', null]
    ]
    for (const row of rows) {
      await client.query(`INSERT INTO ${TM} (jb, js, r, t, tz, iv) VALUES ($1, $2, $3, $4, $5, $6)`, row)
    }
    const r = await client.query({ text: `SELECT jb, js, r, t, tz, iv FROM ${TM} ORDER BY id`, rowMode: 'array' })
    checkEq(r.fields.map((f) => f.dataTypeID), [3802, 114, 700, 1083, 1266, 1186], 'result type oids')
    const ivs = r.rows.map((row) => row.pop())
    // real: 0.1 reads as 0.1 (float4's shortest text); 16777217 is 16777216 as a float4
    checkEq(r.rows, [
      [DOC, DOC, 0.1, '04:05:06.789012', '04:05:06.789012+05:30'],
      [{ n: -1, name: 'other', tags: [] }, { name: 'other', n: -1, tags: [] }, 16777216, '23:59:59.999999',
        '23:59:59.999999-08'],
      [[1, 'two', null], 'just a string', -3.4028235e38, '00:00:00', '00:00:00+00']
    ], 'rows')
    checkEq(Object.keys(r.rows[0][0]), DOC_JSONB_KEYS, 'jsonb key order')
    checkEq(Object.keys(r.rows[0][1]), Object.keys(DOC), 'json key order')
    // interval: a PostgresInterval; a month is not a number of days
    checkEq({ ...ivs[0] }, { years: 1, months: 2, days: 3, hours: 4, minutes: 5, seconds: 6, milliseconds: 789 },
      'interval 1')
    checkEq({ ...ivs[1] }, { days: -3, milliseconds: 0.001 }, 'interval 2')
    checkEq(ivs[2], null, 'interval 3')
    // the same as PostgreSQL's text
    const tx = await client.query({
      text: `SELECT jb::text, js::text, r::float8, r::text, iv::text FROM ${TM} ORDER BY id`, rowMode: 'array'
    })
    checkEq(tx.rows[0], [DOC_JSONB_TEXT, JSON.stringify(DOC), 0.10000000149011612, '0.1', IV_TEXT], 'as text')
    checkEq(tx.rows[1].slice(2), [16777216, '1.6777216e+07', '-3 days +00:00:00.000001'], 'as text 2')
    // jsonb ->> with parameters, json ->>, containment
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE jb ->> 'name' = $1`, [DOC.name])).rows,
      [{ c: 1 }], "jb ->> 'name' = a parameter")
    const j = await client.query({
      text: `SELECT jb ->> $1, js ->> 'name', jb -> 'nested' -> 'deep' FROM ${TM} WHERE jb ->> $1 = $2`,
      values: ['n', '42'],
      rowMode: 'array'
    })
    checkEq(j.rows, [['42', DOC.name, { list: [1, 2.5, 'x'] }]], 'jb ->> a parameter key')
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE jb @> $1`, [{ tags: ['a'] }])).rows,
      [{ c: 1 }], 'jb @> a jsonb parameter')
    // real: a float4 parameter equals the stored 0.1, a float8 one does not
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE r = $1`, [0.1])).rows, [{ c: 1 }],
      'r = float4 0.1')
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE r = $1::float8`, [0.1])).rows,
      [{ c: 0 }], 'r = float8 0.1')
    // time, timetz and interval (the object read back) as parameters in WHERE
    checkEq((await client.query(`SELECT id FROM ${TM} WHERE t = $1 AND tz = $2`,
      ['23:59:59.999999', '23:59:59.999999-08'])).rows.length, 1, 'WHERE t = and tz =')
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE t > $1`, ['04:05:06.789011'])).rows,
      [{ c: 2 }], 'WHERE t > 04:05:06.789011')
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE iv = $1`, [ivs[0]])).rows,
      [{ c: 1 }], 'WHERE iv = the PostgresInterval read')
    checkEq((await client.query(`SELECT count(*)::int AS c FROM ${TM} WHERE iv > $1`, ['400 days'])).rows,
      [{ c: 1 }], "WHERE iv > '400 days'")
    // parameters straight back as results
    const e = await client.query({
      text: 'SELECT $1::jsonb, $2::json, $3::real, $4::time, $5::timetz, $6::interval',
      values: [DOC, { a: [1, { b: null }] }, 0.1, '04:05:06.789012', '23:59:59.999999-08', ivs[0]],
      rowMode: 'array'
    })
    checkEq(e.rows[0].slice(0, 5), [DOC, { a: [1, { b: null }] }, 0.1, '04:05:06.789012', '23:59:59.999999-08'],
      'parameters echoed')
    checkEq({ ...e.rows[0][5] }, { ...ivs[0] }, 'interval echoed')
  })

  await sc.step('enum as column, parameter and result, ORDER BY (text results)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${TE}`)
    await client.query(`DROP TYPE IF EXISTS ${MOOD}`)
    await client.query(`CREATE TYPE ${MOOD} AS ENUM ('sad', 'ok', 'happy')`)
    await client.query(`CREATE TABLE ${TE} (id serial PRIMARY KEY, mood ${MOOD}, n integer)`)
    for (const [mood, n] of [['happy', 5], ['sad', 1], ['ok', 2]]) {
      await client.query(`INSERT INTO ${TE} (mood, n) VALUES ($1, $2)`, [mood, n])
    }
    // an enum is a string both ways
    const r = await client.query({ text: `SELECT mood, n FROM ${TE} ORDER BY mood`, rowMode: 'array' })
    check(r.fields[0].dataTypeID > 16383, `enum oid ${r.fields[0].dataTypeID}`)
    checkEq(r.rows, [['sad', 1], ['ok', 2], ['happy', 5]], 'ORDER BY mood')
    const g = await client.query({
      text: `SELECT n FROM ${TE} WHERE mood > $1 ORDER BY mood DESC`, values: ['sad'], rowMode: 'array'
    })
    checkEq(g.rows, [[5], [2]], "WHERE mood > 'sad'")
    checkEq((await client.query(`SELECT $1::${MOOD} AS m`, ['ok'])).rows, [{ m: 'ok' }], 'parameter echoed')
    let err = null
    try {
      await client.query(`INSERT INTO ${TE} (mood) VALUES ($1)`, ['angry'])
    } catch (x) {
      err = x
    }
    check(err !== null, `no error for 'angry' in ${MOOD}`)
    checkEq(err.code, '22P02', 'code')
  })

  await sc.step('domain over integer, its check violation 23514 (text results)', async () => {
    await client.query(`DROP TABLE IF EXISTS ${TD}`)
    await client.query(`DROP DOMAIN IF EXISTS ${POS}`)
    await client.query(`CREATE DOMAIN ${POS} AS integer CHECK (VALUE > 0)`)
    await client.query(`CREATE TABLE ${TD} (id serial PRIMARY KEY, pos ${POS})`)
    for (const pos of [5, 1, 2147483647]) await client.query(`INSERT INTO ${TD} (pos) VALUES ($1)`, [pos])
    // a domain column is described as its base type (int4), so it is a number
    const r = await client.query({ text: `SELECT pos FROM ${TD} ORDER BY id`, rowMode: 'array' })
    checkEq(r.fields.map((f) => f.dataTypeID), [23], 'result type oids')
    checkEq(r.rows, [[5], [1], [2147483647]], 'rows')
    checkEq((await client.query(`SELECT pos FROM ${TD} WHERE pos = $1`, [1])).rows, [{ pos: 1 }], 'WHERE pos =')
    checkEq((await client.query(`SELECT $1::${POS} AS p`, [7])).rows, [{ p: 7 }], 'parameter echoed')
    for (const [sql, arg] of [[`INSERT INTO ${TD} (pos) VALUES ($1)`, 0], [`SELECT $1::${POS}`, -1]]) {
      let err = null
      try {
        await client.query(sql, [arg])
      } catch (x) {
        err = x
      }
      check(err !== null, `no error for ${arg} in ${POS}`)
      checkEq([err.code, err.constraint, err.dataType, err.schema], ['23514', `${POS}_check`, POS, 'public'],
        'code, constraint, dataType, schema')
    }
  })

  await client.end().catch(() => {})
  sc.finish()
}

main()
