// postgres.js (the `postgres` package) with its defaults: every query a named
// prepared statement, types fetched at connect, against the server named by
// PGHOST/PGPORT/PGUSER/PGDATABASE. Checked by hand, not in CI.
'use strict'

const postgres = require('postgres')
const { Readable } = require('node:stream')
const { pipeline } = require('node:stream/promises')
const { Scenario, check, checkEq } = require('../steps')

const T = 'drv_postgresjs'
const ROWS = [
  { n: 42, big: 9000000000n, name: "O'Hara ✓", flag: true, score: 0.1 + 0.2, day: new Date(2024, 1, 29), at: new Date(2024, 0, 2, 3, 4, 5, 678), at_tz: new Date(Date.UTC(2024, 0, 2, 1, 4, 5, 678)) },
  { n: -7, big: -1n, name: 'beta', flag: false, score: -1.5e300, day: new Date(1999, 11, 31), at: new Date(1999, 11, 31, 23, 59, 59), at_tz: new Date(Date.UTC(2000, 0, 1)) }
]
const COLS = Object.keys(ROWS[0])

function expected (row) {
  const out = {}
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'bigint' ? v.toString() : v
  return out
}

class Rollback extends Error {}

async function main () {
  const sc = new Scenario('postgres.js')
  const sql = postgres({ onnotice: () => {} })
  const ids = []

  await sc.step('connect', async () => {
    checkEq((await sql`SELECT 1 AS one`)[0].one, 1)
  })

  await sc.step('create table (DROP IF EXISTS, SERIAL key, eight column types)', async () => {
    await sql`DROP TABLE IF EXISTS ${sql(T)}`
    await sql`CREATE TABLE ${sql(T)} (
      id serial PRIMARY KEY,
      n integer, big bigint, name text UNIQUE, flag boolean,
      score double precision, day date, at timestamp, at_tz timestamptz)`
  })

  await sc.step('insert objects of every type (sql(row) helper), RETURNING id', async () => {
    for (const row of ROWS) {
      const [{ id }] = await sql`INSERT INTO ${sql(T)} ${sql(row, COLS)} RETURNING id`
      ids.push(id)
    }
    const many = [1, 2, 3].map((i) => ({ n: i, name: `many${i}`, day: new Date(2020, 0, i) }))
    await sql`INSERT INTO ${sql(T)} ${sql(many, 'n', 'name', 'day')}`
  })

  await sc.step('select with parameters, values round-trip', async () => {
    for (let k = 0; k < ids.length; k++) {
      const [row] = await sql`SELECT ${sql(COLS)} FROM ${sql(T)} WHERE id = ${ids[k]}`
      checkEq({ ...row }, expected(ROWS[k]), `row ${ids[k]}`)
    }
    const [{ count }] = await sql`SELECT count(*) FROM ${sql(T)}
      WHERE day >= ${new Date(2024, 0, 1)} AND flag = ${true} AND at < ${new Date(2025, 0, 1)}
        AND at_tz > ${new Date(Date.UTC(2023, 11, 31))}`
    checkEq(count, '1', 'filtered count')
  })

  await sc.step('update with parameters', async () => {
    const newTz = new Date(Date.UTC(2030, 5, 1, 12))
    const r = await sql`UPDATE ${sql(T)} SET score = ${2.5}, at_tz = ${newTz}, big = big + ${1}
      WHERE name = ${'beta'}`
    checkEq(r.count, 1, 'count')
    const [row] = await sql`SELECT score, at_tz, big FROM ${sql(T)} WHERE name = ${'beta'}`
    checkEq({ ...row }, { score: 2.5, at_tz: newTz, big: '0' })
  })

  await sc.step('delete with parameters', async () => {
    checkEq((await sql`DELETE FROM ${sql(T)} WHERE name LIKE ${'many%'}`).count, 3, 'count')
  })

  await sc.step('transaction rolled back (sql.begin); savepoint (sql.savepoint) rolled back', async () => {
    await sql.begin(async (tx) => {
      await tx`INSERT INTO ${sql(T)} (name) VALUES (${'gone'})`
      throw new Rollback()
    }).catch((e) => { if (!(e instanceof Rollback)) throw e })
    await sql.begin(async (tx) => {
      await tx`INSERT INTO ${sql(T)} (name) VALUES (${'kept'})`
      await tx.savepoint(async (sp) => {
        await sp`INSERT INTO ${sql(T)} (name) VALUES (${'undone'})`
        throw new Rollback()
      }).catch((e) => { if (!(e instanceof Rollback)) throw e })
    })
    const names = (await sql`SELECT name FROM ${sql(T)}`).map((r) => r.name)
    check(!names.includes('gone') && !names.includes('undone'), `rolled back rows visible: ${names}`)
    check(names.includes('kept'), 'committed row missing')
  })

  await sc.step('unique violation caught, constraint name reported', async () => {
    let err = null
    try {
      await sql`INSERT INTO ${sql(T)} (name) VALUES (${'beta'})`
    } catch (e) {
      err = e
    }
    check(err !== null, 'no error for a duplicate key')
    checkEq(err.code, '23505', 'code')
    checkEq(err.constraint_name, `${T}_name_key`, 'constraint_name')
    checkEq(err.table_name, T, 'table_name')
    checkEq((await sql`SELECT 2 AS two`)[0].two, 2)
  })

  await sc.step('prepared statement reused 10 times in a transaction, ROLLBACK, reused', async () => {
    await sql.begin(async (tx) => {
      for (let i = 0; i < 10; i++) {
        checkEq((await tx`SELECT name, day FROM ${sql(T)} WHERE id = ${ids[0]}`)[0].name, ROWS[0].name)
      }
      throw new Rollback()
    }).catch((e) => { if (!(e instanceof Rollback)) throw e })
    for (let i = 0; i < 10; i++) {
      checkEq((await sql`SELECT name, day FROM ${sql(T)} WHERE id = ${ids[1]}`)[0].name, 'beta')
    }
  })

  await sc.step('COPY FROM STDIN (.writable()) and TO STDOUT (.readable())', async () => {
    const lines = []
    for (let i = 0; i < 5; i++) {
      lines.push(`${100 + i}\t${1e12 + i}\tcopy${i}\t${i % 2 === 0}\t${i / 4}\t2021-03-0${i + 1}\t2021-03-0${i + 1} 08:30:00\t2021-03-0${i + 1} 08:30:00+00\n`)
    }
    lines.push('\\N\t\\N\tcopynull\t\\N\t\\N\t\\N\t\\N\t\\N\n')
    const w = await sql`COPY ${sql(T)} (${sql(COLS)}) FROM STDIN`.writable()
    await pipeline(Readable.from(lines), w)
    const r = await sql`COPY ${sql(T)} (name, n) TO STDOUT`.readable()
    const chunks = []
    for await (const chunk of r) chunks.push(chunk)
    const got = Buffer.concat(chunks).toString().split('\n').filter((l) => l.startsWith('copy')).sort()
    checkEq(got, ['copy0\t100', 'copy1\t101', 'copy2\t102', 'copy3\t103', 'copy4\t104', 'copynull\t\\N'])
  })

  await sc.step('REPEATABLE READ, snapshot kept, update of a changed row fails with 40001', async () => {
    const other = postgres({ onnotice: () => {} })
    try {
      let err = null
      await sql.begin('isolation level repeatable read', async (a) => {
        const q = () => a`SELECT n FROM ${sql(T)} WHERE id = ${ids[0]}`
        const before = (await q())[0].n
        await other`UPDATE ${sql(T)} SET n = n + 100 WHERE id = ${ids[0]}`
        checkEq((await q())[0].n, before, "A's second read")
        try {
          await a`UPDATE ${sql(T)} SET n = 0 WHERE id = ${ids[0]}`
        } catch (e) {
          err = e
        }
        throw new Rollback()
      }).catch((e) => { if (!(e instanceof Rollback)) throw e })
      check(err !== null, "A's update of a row B changed succeeded")
      checkEq(err.code, '40001', 'code')
    } finally {
      await other.end()
    }
  })

  await sql.end({ timeout: 5 }).catch(() => {})
  sc.finish()
}

main()
