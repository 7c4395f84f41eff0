import { join } from 'node:path'

/**
 * The clean clients the trust campaign judges, none of which may ever fail: the reference clients of `examples/`
 * (which follow orbtest's decisions too, and are judged with --strict) and clients written outside the project's
 * habits, from the spec and the docs alone (trust/clients/, judged as a newcomer runs them).
 */
export interface CleanClient {
  name: string
  /** The client suite and its flags. */
  suite: readonly string[]
  /** Programs it needs on the PATH: without one, the client is skipped and the campaign says so. */
  needs: readonly string[]
  /** A command that builds it into `out` (run once, in the repository's root), when it needs building. */
  build?: (root: string, out: string) => string[]
  command: (root: string, out: string) => string[]
  /** A reference client follows orbtest's decisions as well: it is judged with --strict. */
  reference: boolean
}

const ORBTILE = ['orbtile']
const ORB = ['orb']
const WEBHOOK = ['orb', '--webhook']

export const CLIENTS: readonly CleanClient[] = [
  {
    name: 'adapter-node',
    suite: ORBTILE,
    needs: [],
    command: (root) => [process.execPath, join(root, 'examples', 'orbtile-adapter-node', 'adapter.mjs')],
    reference: true
  },
  {
    name: 'adapter-python-ref',
    suite: ORBTILE,
    needs: ['python3'],
    command: (root) => ['python3', join(root, 'examples', 'orbtile-adapter-python', 'adapter.py')],
    reference: true
  },
  {
    name: 'adapter-sh',
    suite: ORBTILE,
    needs: ['bash', 'curl', 'jq'],
    command: (root) => ['bash', join(root, 'examples', 'orbtile-adapter-sh', 'adapter.sh')],
    reference: true
  },
  {
    name: 'adapter-sh-poll',
    suite: ORBTILE,
    needs: ['bash', 'curl', 'jq'],
    command: (root) => ['bash', join(root, 'examples', 'orbtile-adapter-sh', 'adapter.sh'), '--poll'],
    reference: true
  },
  {
    name: 'adapter-rust',
    suite: ORBTILE,
    needs: ['cargo'],
    build: (root, out) => ['cargo', 'build', '--offline', '--quiet', '--manifest-path',
      join(root, 'trust', 'clients', 'adapter-rust', 'Cargo.toml'), '--target-dir', out],
    command: (_root, out) => [join(out, 'debug', 'orbtile-adapter-rust')],
    reference: false
  },
  {
    name: 'adapter-python',
    suite: ORBTILE,
    needs: ['python3'],
    command: (root) => ['python3', join(root, 'trust', 'clients', 'adapter-python', 'adapter.py')],
    reference: false
  },
  {
    name: 'bot-events',
    suite: ORB,
    needs: [],
    command: (root) => [process.execPath, join(root, 'examples', 'orb-bot-events', 'bot.mjs')],
    reference: true
  },
  {
    name: 'bot-webhook',
    suite: WEBHOOK,
    needs: [],
    command: (root) => [process.execPath, join(root, 'examples', 'orb-bot-webhook', 'bot.mjs')],
    reference: true
  },
  {
    name: 'bot-java',
    suite: ORB,
    needs: ['javac', 'java'],
    build: (root, out) => ['javac', '-d', out, join(root, 'trust', 'clients', 'bot-java', 'Bot.java')],
    command: (_root, out) => ['java', '-cp', out, 'Bot'],
    reference: false
  },
  {
    name: 'bot-python',
    suite: WEBHOOK,
    needs: ['python3'],
    command: (root) => ['python3', join(root, 'trust', 'clients', 'bot-python', 'bot.py')],
    reference: false
  }
]

/** The reference client a fault belongs to. */
export function clientNamed (name: string): CleanClient {
  const client = CLIENTS.find((c) => c.name === name)
  if (client === undefined) throw new Error(`no clean client ${name}`)
  return client
}
