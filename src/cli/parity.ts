// `orbtest parity RECORDING`: a recording replayed against a fresh fake of its API, started with the fake's own flags.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ParityTarget } from '../../conformance/parity/run.js'
import { readRecording } from '../proxy/recording.js'
import { UsageError } from '../shared/usage-error.js'
import type { CommandInput, Outcome } from './command.js'
import type { PARITY_FLAGS } from './command-flags.js'

type ParityFlags = CommandInput<typeof PARITY_FLAGS>['flags']

/** A fake started for the replay, and how to stop it. */
interface Fake {
  target: ParityTarget
  close(): Promise<void>
}

export async function parity (input: CommandInput<typeof PARITY_FLAGS>, out: NodeJS.WritableStream): Promise<Outcome> {
  const { flags, operands } = input
  if (operands.length !== 1) throw new UsageError('give one recording, for example: orbtest parity session.jsonl')
  const recording = readRecording(operands[0]!)
  if (recording.exchanges.length === 0) throw new UsageError(`${operands[0]!} holds no exchange: there is nothing to replay`)
  const misplaced = recording.head.api === 'orbtile' ? (['world', 'app'] as const) : (['auto-allow'] as const)
  for (const f of misplaced) {
    if (flags[f] !== undefined) {
      throw new UsageError(`--${f} is a flag of the other API's fake; this is a recording of ${recording.head.api}`)
    }
  }
  const [{ parity: run }, report] = await Promise.all([
    import('../../conformance/parity/run.js'), import('../../conformance/parity/report.js')
  ])
  const fake = recording.head.api === 'orbtile' ? await orbtileFake(flags) : await orbFake(flags)
  let result
  try {
    result = await run(operands[0]!, recording, fake.target)
  } finally {
    await fake.close()
  }
  if (flags.json !== undefined) writeFileSync(flags.json, `${JSON.stringify(result, null, 2)}\n`)
  if (flags.html !== undefined) writeFileSync(flags.html, report.parityHtml(result))
  out.write(report.parityText(result))
  if (result.compared === 0) {
    out.write('nothing was compared: every reply in the recording was cut before it came whole\n')
    return 'refused'
  }
  return report.parityHeld(result) ? 'ok' : 'failed'
}

/** A fresh fake Orbtile on a socket in a private folder of its own, its API on. */
async function orbtileFake (flags: ParityFlags): Promise<Fake> {
  const { startOrbtest } = await import('../orbtest.js')
  const folder = mkdtempSync(join(tmpdir(), 'orbtest-parity-'))
  try {
    const fakes = await startOrbtest({
      orbtile: {
        discoveryPath: join(folder, 'adapter-api.json'),
        socketPath: join(folder, 'orbtile.sock'),
        rateLimit: flags['rate-limit'],
        autoAllow: flags['auto-allow'] === true,
        leaseSilenceMs: flags['lease-silence'] * 1000,
        pidCheck: flags['pid-check']
      },
      orb: false,
      controlPort: 0
    })
    const fake = fakes.orbtile!
    return {
      target: {
        address: { socketPath: fake.socketPath },
        credential: fake.token,
        against: `a fresh fake Orbtile${flagWords(flags)}`
      },
      close: async () => {
        await fakes.close()
        rmSync(folder, { recursive: true, force: true })
      }
    }
  } catch (err) {
    rmSync(folder, { recursive: true, force: true })
    throw err
  }
}

/** A fresh fake Orb on a free loopback port, with the world asked for; the app whose token stands in for the bot's. */
async function orbFake (flags: ParityFlags): Promise<Fake> {
  const { startOrbtest } = await import('../orbtest.js')
  const fakes = await startOrbtest({
    orbtile: false,
    orb: { port: 0, world: flags.world, rateLimit: flags['rate-limit'] },
    controlPort: 0
  })
  const fake = fakes.orb!
  const apps = [...fake.store.apps.values()]
  const app = flags.app === undefined ? apps[0] : apps.find((a) => a.id === flags.app)
  if (app === undefined) {
    await fakes.close()
    const has = apps.map((a) => a.id).join(', ')
    throw new UsageError(flags.app === undefined
      ? 'the world has no app'
      : `the world has no app ${flags.app} (it has ${has})`)
  }
  return {
    target: {
      address: { host: '127.0.0.1', port: fake.port },
      credential: app.token,
      host: `127.0.0.1:${fake.port}`,
      against: `a fresh fake Orb as app ${app.id}${flagWords(flags)}`
    },
    close: async () => { await fakes.close() }
  }
}

/** The fake's flags that differ from its defaults, for the report's words. */
function flagWords (flags: ParityFlags): string {
  const words = [
    flags['auto-allow'] === true ? '--auto-allow' : '',
    flags['rate-limit'] === 'off' ? '--rate-limit off' : '',
    flags.world === undefined ? '' : `--world ${flags.world}`
  ].filter((w) => w !== '')
  return words.length === 0 ? '' : ` (${words.join(' ')})`
}
