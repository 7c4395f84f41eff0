import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import type { OrbFault } from '../src/orb-mock/faults.js'
import { TargetError } from '../conformance/index.js'
import { conformance } from '../src/cli/main.js'
import { ORB_CASES } from '../conformance/server/orb/index.js'
import { UsageError } from '../src/shared/usage-error.js'
import { DEMO } from './helpers/orb.js'
import { scratch, type Teardown } from './helpers/fake.js'

/** A writable that keeps what the CLI prints. */
function capture (): NodeJS.WritableStream & { text: () => string } {
  let text = ''
  return Object.assign(
    new Writable({
      write (chunk, _enc, done) {
        text += chunk
        done()
      }
    }),
    { text: () => text }
  )
}

async function fakeOrb (
  t: Teardown,
  faults: OrbFault[] = []
): Promise<{ url: string; control: string; state: () => Promise<any> }> {
  const fakes = await startOrbtest({ orbtile: false, orb: { port: 0, faults }, controlPort: 0, clockMode: 'virtual' })
  t.teardown(() => fakes.close())
  return { url: fakes.orb!.url, control: fakes.control.url, state: async () => fakes.orb!.control.state() }
}

t.test(
  "ORB-003 conformance cli: an Orb target with --control: TAP, JUnit and JSON; the suite's own apps are gone afterwards; no token printed",
  async (t) => {
    const dir = scratch(t)
    const orb = await fakeOrb(t)
    const out = capture()
    const code = await conformance(
      [
        '--target',
        orb.url,
        '--control',
        `${orb.control}/control`,
        '--grep',
        'ORB-003',
        '--grep',
        'ORB-010',
        '--seed',
        '7',
        '--junit',
        join(dir, 'j.xml'),
        '--json',
        join(dir, 'r.json')
      ],
      out
    )
    t.equal(code, 0, out.text())
    t.match(
      out.text(),
      new RegExp(
        '^TAP version 14\\n# orbtest conformance: Orb bot API \\(orb-bots-v1\\) at http://127\\.0\\.0\\.1:\\d+; seed 7;.*\\n' +
          '1\\.\\.2\\nok 1 - ORB-003 .*\\nok 2 - ORB-010 '
      )
    )
    t.notMatch(out.text(), /orb_[A-Za-z0-9_-]{20,}/, 'no app token is printed')
    t.match(
      readFileSync(join(dir, 'j.xml'), 'utf8'),
      /<testsuite name="orbtest conformance: Orb" tests="2" failures="0" skipped="0"/
    )
    const json = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'))
    t.equal(json.suite, 'orb')
    t.same(
      json.cases.map((c: { id: string; verdict: string }) => [c.id, c.verdict]),
      [
        ['ORB-003', 'pass'],
        ['ORB-010', 'pass']
      ]
    )
    const state = await orb.state()
    t.same(
      state.apps.map((a: { id: string }) => a.id).filter((id: string) => id.startsWith('app_orbtest_')),
      [],
      'the apps the suite made are deleted'
    )
  }
)

t.test(
  'ORB-003 conformance cli: an Orb target with --config (tokens from the environment), no control API',
  async (t) => {
    const dir = scratch(t)
    const orb = await fakeOrb(t)
    const config = join(dir, 'orb-target.json')
    writeFileSync(
      config,
      JSON.stringify({
        tokens: { full: '$ORBTEST_T_FULL', few: DEMO.lite },
        community: 'srv_orbit',
        otherCommunity: 'srv_quiet',
        channels: { text: 'ch_general', readOnly: 'ch_news', voice: 'ch_lounge', outsideAllowList: 'ch_staff' }
      })
    )
    process.env.ORBTEST_T_FULL = DEMO.token
    t.teardown(() => {
      delete process.env.ORBTEST_T_FULL
    })
    const out = capture()
    t.equal(
      await conformance(
        ['--target', orb.url, '--config', config, '--grep', 'ORB-003', '--grep', 'ORB-016', '--seed', '3'],
        out
      ),
      0,
      out.text()
    )
    t.match(out.text(), /no control API/)
    t.notMatch(out.text(), DEMO.token)
    writeFileSync(
      join(dir, 'bad.json'),
      JSON.stringify({ tokens: {}, community: 'srv_orbit', channels: { text: 'ch_general' } })
    )
    await t.rejects(
      conformance(['--target', orb.url, '--config', join(dir, 'bad.json')], capture()),
      /bad\.json\/tokens: must have required property 'full'/
    )
    writeFileSync(
      join(dir, 'env.json'),
      JSON.stringify({ tokens: { full: '$ORBTEST_T_UNSET' }, community: 'srv_orbit', channels: { text: 'ch_general' } })
    )
    await t.rejects(
      conformance(['--target', orb.url, '--config', join(dir, 'env.json')], capture()),
      /reads \$ORBTEST_T_UNSET from the environment, which does not set it/
    )
    writeFileSync(
      join(dir, 'stale.json'),
      JSON.stringify({ tokens: { full: 'orb_stale' }, community: 'srv_orbit', channels: { text: 'ch_general' } })
    )
    await t.rejects(
      conformance(['--target', orb.url, '--config', join(dir, 'stale.json')], capture()),
      TargetError,
      'a token the Orb refuses is a target error'
    )
  }
)

t.test(
  'ORB-016 ORB-026 conformance cli: a failing Orb case exits 1 with expected, actual and a curl of the failing request; no token in TAP, JUnit or JSON',
  async (t) => {
    const dir = scratch(t)
    const orb = await fakeOrb(t, ['sha3-manifest', 'everyone-allowed'])
    const out = capture()
    t.equal(
      await conformance(
        [
          '--target',
          orb.url,
          '--control',
          orb.control,
          '--grep',
          'ORB-016',
          '--grep',
          'ORB-026',
          '--seed',
          '3',
          '--json',
          join(dir, 'r.json'),
          '--junit',
          join(dir, 'j.xml')
        ],
        out
      ),
      1
    )
    const json = readFileSync(join(dir, 'r.json'), 'utf8')
    const failed = JSON.parse(json).cases.find((c: { id: string }) => c.id === 'ORB-026')
    t.equal(failed.verdict, 'fail')
    t.ok(failed.exchanges.length > 0, 'the failure keeps its exchanges')
    t.match(
      failed.exchanges[0].headers.authorization,
      'Bearer $ORB_TOKEN',
      'the token is a shell variable in the exchanges'
    )
    t.match(failed.curl, /"authorization: Bearer \$ORB_TOKEN"/)
    for (const text of [out.text(), json, readFileSync(join(dir, 'j.xml'), 'utf8')]) {
      t.notMatch(text, /orb_[A-Za-z0-9_-]{32}/, 'no app token anywhere in the reports')
    }
    t.match(
      out.text(),
      /not ok 1 - ORB-016 .*\n {2}---\n {2}message: ".*keccak256.*"\n {2}expected: "0x[0-9a-f]{64}"\n {2}actual: ".*"\n {2}curl: "curl -sS -i -X GET .*http:\/\/127\.0\.0\.1:\d+\/api\/orb\/directory'"/
    )
  }
)

t.test(
  'ORB-A04 conformance cli: --read-only skips every case that writes; --list shows each suite; usage and target errors',
  async (t) => {
    const orb = await fakeOrb(t)
    const writer = ORB_CASES.find((c) => c.writes === true)
    if (writer !== undefined) {
      const out = capture()
      t.equal(
        await conformance(
          ['--target', orb.url, '--control', orb.control, '--grep', writer.id, '--read-only', '--seed', '1'],
          out
        ),
        0
      )
      t.match(out.text(), new RegExp(`ok 1 - ${writer.id.replace('.', '\\.')} .* # SKIP changes what the target holds`))
    } else {
      t.fail('no Orb case is marked as writing')
    }
    const orbList = capture()
    t.equal(await conformance(['--list', '--target', 'http://127.0.0.1:1'], orbList), 0)
    t.ok(
      orbList
        .text()
        .split('\n')
        .filter(Boolean)
        .every((line) => line.startsWith('ORB-')),
      'an Orb target lists Orb cases'
    )
    const all = capture()
    t.equal(await conformance(['--list'], all), 0)
    t.match(all.text(), /^OT-001 /m)
    t.match(all.text(), /^ORB-003 /m)
    await t.rejects(
      conformance(['--target', orb.url], capture()),
      UsageError,
      'an Orb target needs --config or --control'
    )
    await t.rejects(
      conformance(['--target', `${orb.url}/api`, '--control', orb.control], capture()),
      UsageError,
      'an Orb target is an origin'
    )
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    await t.rejects(
      conformance(['--target', `http://127.0.0.1:${port}`, '--control', orb.control], capture()),
      /cannot be reached: ECONNREFUSED/,
      'an Orb that cannot be reached, with the reason'
    )
    await t.rejects(
      conformance(['--target', orb.url, '--control', orb.control, '--grep', 'ORB-999'], capture()),
      /selects no case/
    )
  }
)
