// Step reporting shared by the JavaScript driver scenarios (the same output
// as steps.py): PASS/FAIL per step, a closing "N passed, N failed" line, and
// exit status 1 if any step failed. A failed step does not stop the run.
// A step's title has no ": " in it (scripts/drivers.sh reads up to it).
'use strict'

const util = require('node:util')

class Scenario {
  constructor (name) {
    this.name = name
    this.passed = 0
    this.failed = 0
    this.onFailure = []
    const host = process.env.PGHOST || '(default host)'
    const port = process.env.PGPORT || '(default port)'
    console.log(`== ${name} (host=${host} port=${port})`)
  }

  async step (title, fn, timeoutMs = 30000) {
    let timer
    const timeout = new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000}s`)), timeoutMs)
    })
    try {
      await Promise.race([fn(), timeout])
      this.passed++
      console.log(`PASS ${title}`)
    } catch (e) {
      this.failed++
      const code = e && e.code ? ` [${e.code}]` : ''
      const name = e && e.constructor ? e.constructor.name : 'Error'
      const msg = e && e.message ? e.message.split('\n')[0] : util.inspect(e)
      console.log(`FAIL ${title}: ${name}${code}: ${msg}`)
      if (process.env.DRIVERS_VERBOSE) console.log(e)
      for (const cleanup of this.onFailure) {
        try { await cleanup() } catch (_) {}
      }
    } finally {
      clearTimeout(timer)
    }
  }

  finish () {
    console.log(`${this.name}: ${this.passed} passed, ${this.failed} failed`)
    process.exit(this.failed ? 1 : 0)
  }
}

function check (cond, what) {
  if (!cond) throw new Error(what)
}

function checkEq (got, want, what = 'value') {
  const g = util.inspect(got, { depth: 4 })
  const w = util.inspect(want, { depth: 4 })
  if (!util.isDeepStrictEqual(got, want)) throw new Error(`${what}: got ${g}, want ${w}`)
}

// An error nobody awaited (a driver's background failure) ends the run as a failure.
process.on('unhandledRejection', (e) => {
  console.log(`FAIL unhandled error in the driver: ${e && e.code ? `[${e.code}] ` : ''}${e && e.message ? e.message.split('\n')[0] : e}`)
  console.log('unhandled error: the scenario stopped')
  process.exit(1)
})

module.exports = { Scenario, check, checkEq }
