// Each deliberate fault of the Node reference adapter fails the check named for it: proof that the client checks bite.
import { rmSync } from 'node:fs'
import t from 'tap'
import { CHECKS } from '../conformance/orbtile-client/checks/index.js'
import { NODE_ADAPTER, pool, run, SEED } from './helpers/client-run.js'

/**
 * Each fault of the Node reference adapter (its --fault switch), the tour that exercises it, and the check it must
 * fail. A required check fails the run; a SHOULD is non-strict and a decision informational (both fail with --strict).
 */
const FAULTS: ReadonlyArray<{ fault: string; tour: string; id: string }> = [
  { fault: 'no-host', tour: 'basic', id: 'OT-011' },
  { fault: 'origin', tour: 'basic', id: 'OT-014' },
  { fault: 'info-no-content-type', tour: 'basic', id: 'OT-012' },
  { fault: 'batch-no-adapter-token', tour: 'basic', id: 'OT-019' },
  { fault: 'ignore-retry-after', tour: 'wire', id: 'OT-027' },
  { fault: 'flood', tour: 'basic', id: 'OT-027' },
  { fault: 'two-polls', tour: 'basic', id: 'OT-134' },
  { fault: 'ack-on-receipt', tour: 'decisions', id: 'OT-139' },
  { fault: 'apply-expired', tour: 'decisions', id: 'OT-147' },
  { fault: 'apply-bad-picks', tour: 'decisions', id: 'OT-148' },
  { fault: 'reuse-request-id', tour: 'decisions', id: 'OT-128' },
  { fault: 'missed-heartbeat', tour: 'heartbeat', id: 'OT-113' },
  { fault: 'hardcoded-socket', tour: 'basic', id: 'OT-002' },
  { fault: 'stale-discovery', tour: 'app', id: 'OT-005' },
  { fault: 'log-token', tour: 'basic', id: 'OT-022' },
  { fault: 'token-file', tour: 'basic', id: 'OT-022' },
  { fault: 'crash-on-unknown-field', tour: 'wire', id: 'OT-008' },
  { fault: 'icon-dropped', tour: 'app', id: 'OT-064' },
  { fault: 'cursor-past', tour: 'decisions', id: 'OT-138' },
  { fault: 'ack-decreases', tour: 'decisions', id: 'OT-138' },
  { fault: 'hue-205', tour: 'basic', id: 'OT-074' },
  { fault: 'trust-impostor', tour: 'impostor', id: 'OT-039' },
  { fault: 'unknown-palette-key', tour: 'basic', id: 'OT-A10' },
  { fault: 'crash', tour: 'basic', id: 'OTC-03' },
  { fault: 'garbage', tour: 'basic', id: 'OTC-02' },
  { fault: 'connections', tour: 'basic', id: 'OTC-04' },
  { fault: 'ignore-sigterm', tour: 'basic', id: 'OTC-05' }
]

const LEVEL_VERDICT = { required: 'fail', should: 'non-strict', decision: 'informational', info: 'informational' }

t.test('CLIENT-03 each deliberate fault of the Node adapter fails the check named for it', async (t) => {
  const results = await pool(
    FAULTS,
    6,
    async (f) =>
      await run(
        ['--seed', String(SEED), '--tour', f.tour, '--scenarios', '0'],
        [process.execPath, NODE_ADAPTER, '--fault', f.fault]
      )
  )
  for (const [i, f] of FAULTS.entries()) {
    const r = results[i]!
    const level = CHECKS.find((c) => c.id === f.id)!.level
    const c = r.json.checks.find((x) => x.id === f.id)!
    t.equal(
      c.verdict,
      LEVEL_VERDICT[level],
      `${f.fault}: ${f.id} is ${LEVEL_VERDICT[level]} (${c.reason ?? 'no reason'})`
    )
    t.ok(c.violationCount > 0, `${f.fault}: a violation is recorded`)
    t.equal(r.code, level === 'required' ? 1 : 0, `${f.fault}: exit ${level === 'required' ? 1 : 0}`)
    rmSync(r.dir, { recursive: true, force: true })
  }
  t.same(
    [...new Set(FAULTS.map((f) => f.fault))].length,
    FAULTS.length,
    `${FAULTS.length} distinct faults across ${new Set(FAULTS.map((f) => f.id)).size} checks`
  )
})
