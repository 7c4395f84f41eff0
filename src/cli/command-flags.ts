/**
 * The flags of every orbtest command, with the checks that turn their text into values. The table of commands
 * (commands.ts) shows them in --help and parses them; each command's run reads them typed by these specs.
 */
import { readFileSync } from 'node:fs'
import { DELIVERY_KINDS, EVENT_TYPES } from '../../conformance/client/orb/webhook-kit.js'
import type { ReporterName } from '../../conformance/human.js'
import { UsageError } from '../shared/usage-error.js'
import { parse, type FlagSpecs } from './flags.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Flags of every command that runs fakes. */
export const COMMON_FLAGS = {
  'rate-limit': {
    type: 'string',
    placeholder: 'on|off',
    parse: parse.oneOf('on', 'off'),
    default: 'on',
    help: "the specs' rate limits and throttles (Orbtile: 20 requests/s, burst 60; Orb: ORB-A03's windows); off for load tests"
  },
  'control-port': {
    type: 'string',
    placeholder: 'PORT',
    parse: parse.port,
    default: '8788',
    help: 'control server port on 127.0.0.1, which also serves the dashboard at /; 0 picks a free one'
  },
  clock: {
    type: 'string',
    placeholder: 'real|virtual',
    parse: parse.oneOf('real', 'virtual'),
    default: 'real',
    help: 'virtual time moves only through POST /control/clock/advance'
  },
  'log-level': {
    type: 'string',
    placeholder: 'LEVEL',
    parse: parse.oneOf(...LOG_LEVELS),
    default: 'warn',
    help: `request log to stderr: ${LOG_LEVELS.join(', ')}`
  },
  'ready-file': {
    type: 'string',
    placeholder: 'PATH',
    parse: parse.path,
    help: 'once everything listens, write where it listens here as JSON (removed on exit)'
  },
  help: { type: 'boolean', help: 'show this help' }
} as const satisfies FlagSpecs

/** Flags of the fake Orbtile. */
export const ORBTILE_FLAGS = {
  discovery: { type: 'string', placeholder: 'PATH', parse: parse.path, help: 'discovery file to write; else $ORBTILE_DISCOVERY, else ~/Library/Application Support/Orbtile/adapter-api.json' },
  socket: { type: 'string', placeholder: 'PATH', parse: parse.path, help: 'Unix socket to serve the Adapter API on; else $XDG_RUNTIME_DIR/orbtest/orbtile.sock or <tmp>/orbtest-<uid>/orbtile.sock' },
  api: { type: 'string', placeholder: 'on|off', parse: parse.oneOf('on', 'off'), default: 'on', help: 'the user\'s Adapter API switch at start; off means no socket and no discovery file until switched on' },
  'auto-allow': { type: 'boolean', help: 'allow every adapter at its first registration, as the user would (for CI)' },
  'lease-silence': { type: 'string', placeholder: 'SECONDS', parse: parse.seconds, default: '120', help: 'an adapter lease ends after this long without a request (OT-A08)' },
  'pid-check': { type: 'string', placeholder: 'real|off', parse: parse.oneOf('real', 'off'), default: 'real', help: 'a session\'s pid must be a live process of this user; off accepts any pid' },
  judge: { type: 'string', placeholder: 'FILE', parse: parse.path, help: 'judge the adapter client rules on every request the fake Orbtile receives: verdicts live at GET /control/judge, the report written to FILE at stop (TAP; .json, .xml for JUnit, .html for the timeline); exit 1 on a violation' }
} as const satisfies FlagSpecs

/** Flags of the fake Orb. */
export const ORB_FLAGS = {
  'orb-port': {
    type: 'string',
    placeholder: 'PORT',
    parse: parse.port,
    default: '8787',
    help: 'port of the fake Orb on 127.0.0.1; 0 picks a free one'
  },
  world: {
    type: 'string',
    placeholder: 'FILE',
    parse: parse.path,
    help: "the fake Orb's world (communities, apps, installs) as JSON; default: the demo world (fixtures/orb-world.json)"
  }
} as const satisfies FlagSpecs

/** Flags of `orbtest proxy orbtile`. */
export const PROXY_ORBTILE_FLAGS = {
  upstream: { type: 'string', placeholder: 'PATH', parse: parse.path, help: "the upstream app's discovery file; else $ORBTILE_DISCOVERY, else ~/Library/Application Support/Orbtile/adapter-api.json" },
  discovery: { type: 'string', placeholder: 'PATH', parse: parse.path, help: "the proxy's discovery file, for the adapter (ORBTILE_DISCOVERY); with a COMMAND and without this flag,\none in a private folder, named to COMMAND by ORBTILE_DISCOVERY" },
  judge: ORBTILE_FLAGS.judge,
  record: { type: 'string', placeholder: 'FILE', parse: parse.path, help: 'write every exchange to FILE (0600), tokens, proofs and signatures replaced by placeholders before\nanything is written; orbtest parity FILE replays it against a fake' },
  'strict-server': { type: 'boolean', help: 'a reply of the app that the spec does not allow (a server finding) fails the run too; else\nserver findings are reported and counted only' },
  'ready-file': COMMON_FLAGS['ready-file'],
  help: COMMON_FLAGS.help
} as const satisfies FlagSpecs

/** Flags of `orbtest proxy orb`. */
export const PROXY_ORB_FLAGS = {
  upstream: { type: 'string', placeholder: 'URL', parse: parse.url, help: "the Orb's URL (https://orb.example): where the bot's calls go on to" },
  listen: { type: 'string', placeholder: 'HOST:PORT', parse: parse.loopback, default: '127.0.0.1:8787', help: "where the proxy listens, on loopback only (the app's token passes through it); the bot's ORB_URL\nnames it; port 0 picks a free one" },
  judge: { type: 'string', placeholder: 'FILE', parse: parse.path, help: "judge the bot rules on the traffic and write the report to FILE at stop (.html, .json, .xml or TAP);\nneeds the app's token in ORB_TOKEN" },
  'webhook-to': { type: 'string', placeholder: 'URL', parse: parse.url, help: "the bot's webhook endpoint: the proxy is then the app's endpoint too, and hands each of the Orb's\ndeliveries (a POST to a path outside /api/) on to URL, and the bot's answer back" },
  record: PROXY_ORBTILE_FLAGS.record,
  'strict-server': { type: 'boolean', help: 'a reply of the Orb that the spec does not allow (a server finding) fails the run too; else\nserver findings are reported and counted only' },
  'ready-file': COMMON_FLAGS['ready-file'],
  help: COMMON_FLAGS.help
} as const satisfies FlagSpecs

/**
 * Flags of `orbtest parity`: where the report goes, and the fake's own flags, so that it is set up as the recorded
 * server was.
 */
export const PARITY_FLAGS = {
  json: { type: 'string', placeholder: 'FILE', parse: parse.path, help: 'write the report as JSON (every difference)' },
  html: { type: 'string', placeholder: 'FILE', parse: parse.path, help: 'write the report as an HTML page' },
  'auto-allow': ORBTILE_FLAGS['auto-allow'],
  'lease-silence': ORBTILE_FLAGS['lease-silence'],
  'pid-check': { ...ORBTILE_FLAGS['pid-check'], default: 'off', help: "a session's pid must be a live process of this user; off (the default here) accepts any pid: the\nrecorded adapter's processes are gone" },
  world: ORB_FLAGS.world,
  app: { type: 'string', placeholder: 'ID', help: "the fake Orb's app whose token replaces the recorded bot's (default: the world's first app)" },
  'rate-limit': COMMON_FLAGS['rate-limit'],
  help: COMMON_FLAGS.help
} as const satisfies FlagSpecs

/** The flags of the command that runs every fake. */
export const SERVE_FLAGS = { ...ORBTILE_FLAGS, ...ORB_FLAGS, ...COMMON_FLAGS }

/**
 * Reads an --expect-failures file: one id per line with the reason it fails (`OT-072 reason`), `#` starting a
 * comment. Ledger ids (with a case suffix such as `.b`) and orbtest's own client decisions (`OTC-03`) are taken.
 */
export function readExpectations (file: string): Map<string, string> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const map = new Map<string, string>()
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const match = /^((?:OTC?|ORB)-A?\d{2,3}(?:\.[a-z0-9]+)?)\s+(\S.*)$/.exec(line)
    if (match === null) throw new UsageError(`${file}:${n + 1}: write "OT-072 the reason it fails" (or an ORB- id)`)
    map.set(match[1]!, match[2]!)
  }
  return map
}

/** The control API's origin: `orbtest up` prints it as …/control, and the client adds that part itself. */
function controlUrl (raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined
  if (url?.protocol !== 'http:') throw new UsageError(`--control must be an http:// URL, not ${JSON.stringify(raw)}`)
  return raw.replace(/\/+$/, '').replace(/\/control$/, '')
}

function reporterName (raw: string): ReporterName {
  if (raw === 'tap' || raw === 'human') return raw
  throw new UsageError(`--reporter takes tap or human, not ${JSON.stringify(raw)}`)
}

/** The flags both conformance commands share, with their own words for each. */
const SEED = parse.integer(-(2 ** 31), 2 ** 31 - 1)
const EXPECT_FAILURES = { type: 'string', placeholder: 'FILE', parse: readExpectations } as const
const REPORTER = {
  type: 'string',
  placeholder: 'tap|human',
  parse: reporterName,
  help: 'TAP, or progress and a readable summary (default: human on a terminal, else TAP)'
} as const

/** `orbtest conformance --target …`: a run of a server suite. */
export const SERVER_FLAGS = {
  target: { type: 'string', placeholder: 'TARGET', help: 'what to test (required, except with --list)' },
  token: { type: 'string', placeholder: 'TOKEN', help: 'the discovery token, for unix: targets' },
  config: {
    type: 'string',
    placeholder: 'FILE',
    help: 'for an Orb without a control API: tokens, community, channels, webhook receiver address\n' +
      '(see conformance/server/orb/orb-target.example.json; "$NAME" values come from the\nenvironment)'
  },
  control: {
    type: 'string',
    placeholder: 'URL',
    parse: controlUrl,
    help: "the target's orbtest control API (printed by orbtest up); cases that play the user or\n" +
      "the community's members, and cases that need time (with a virtual clock), need it;\n" +
      'a fake started with --clock virtual needs it, or its throttles never lift (the run stops)'
  },
  'read-only': {
    type: 'boolean',
    help: 'skip the cases that change what the target holds (posts, command syncs, voice seats,\n' +
      'music); for an Orb shared with people'
  },
  list: { type: 'boolean', help: "list the cases (id, level, needs, title) and exit; with --target, only that suite's" },
  grep: {
    type: 'string',
    placeholder: 'PREFIX',
    multiple: true,
    help: 'run only cases whose id starts with PREFIX (repeatable)'
  },
  seed: {
    type: 'string', placeholder: 'N', parse: SEED, help: 'the seed every property starts from (default: random, printed)'
  },
  runs: {
    type: 'string', placeholder: 'N', parse: parse.integer(1, 100_000), default: '20', help: 'property runs per case'
  },
  path: {
    type: 'string', placeholder: 'P', help: "fast-check's replay path of one failing case (with its --seed, --runs and --grep)"
  },
  junit: { type: 'string', placeholder: 'FILE', help: 'also write JUnit XML' },
  json: { type: 'string', placeholder: 'FILE', help: 'also write a JSON index (every case, the exchanges of the failures)' },
  'expect-failures': {
    ...EXPECT_FAILURES, help: 'ids expected to fail, one per line: "OT-072 reason" (# starts a comment)'
  },
  strict: {
    type: 'boolean',
    help: "orbtest's own decisions (OT-A…, ORB-A…) fail the run too; without them they are\ninformational"
  },
  slow: {
    type: 'boolean',
    help: 'also run cases that take minutes in real time (lease silences, 600 s expiries, 4097\n' +
      "requests at 20/s); without it they are skipped unless the target's clock is virtual\n" +
      '(--control to a target started with --clock virtual), and cases that need time wait\n' +
      'seconds of real time at most'
  },
  reporter: REPORTER,
  help: { type: 'boolean', help: 'this help' }
} as const satisfies FlagSpecs

function replayPath (raw: string): string {
  if (!/^\d+(?::\d+)*$/.test(raw)) throw new UsageError(`--path takes fast-check's path, such as 3:0:1, not ${JSON.stringify(raw)}`)
  return raw
}

/** `orbtest conformance --client …`: a run of a client suite. */
export const CLIENT_FLAGS = {
  // Told of by the usage line and the Suites table.
  client: { type: 'string', placeholder: 'SUITE', help: 'the client suite: orbtile or orb', unlisted: true },
  scenarios: {
    type: 'string',
    placeholder: 'N',
    parse: parse.integer(0, 10_000),
    help: 'generated scenarios after the tours (default 8; 0 for the tours alone)'
  },
  tour: {
    type: 'string',
    placeholder: 'NAME',
    multiple: true,
    help: 'play only this tour (repeatable; "none" for no tour; a long one plays only when named)'
  },
  seed: {
    type: 'string', placeholder: 'N', parse: SEED, help: 'the seed the scenarios are generated from (default: random, printed)'
  },
  path: {
    type: 'string',
    placeholder: 'P',
    parse: replayPath,
    help: "replay the one generated scenario at fast-check's path P (with its --seed)"
  },
  jobs: {
    type: 'string',
    placeholder: 'N',
    parse: parse.integer(1, 64),
    help: 'scenarios played at once (default: all of them; each has its own fake and process)'
  },
  shrink: {
    type: 'string',
    placeholder: 'N',
    parse: parse.integer(0, 1000),
    help: 'scenarios fast-check may play to shrink a failure (default 8; 0 to skip)'
  },
  grep: {
    type: 'string',
    placeholder: 'PREFIX',
    multiple: true,
    help: 'report only checks whose id starts with PREFIX (repeatable)'
  },
  junit: { type: 'string', placeholder: 'FILE', help: 'also write JUnit XML' },
  json: {
    type: 'string',
    placeholder: 'FILE',
    help: 'also write JSON (every check and its rule; every scenario\'s findings and whole\n' +
      'journal, each entry a finding cites marked)'
  },
  html: { type: 'string', placeholder: 'FILE', help: 'also write one self-contained page: each scenario as a timeline' },
  'expect-failures': {
    ...EXPECT_FAILURES, help: 'ids expected to fail, one per line: "OT-027 reason" (# starts a comment)'
  },
  strict: {
    type: 'boolean',
    help: "non-strict findings fail the run too: SHOULDs, and findings that rest on orbtest's\n" +
      'decisions, windows or stand-ins (inconclusive ones never fail)'
  },
  reporter: REPORTER,
  webhook: {
    type: 'boolean', help: "(orb) the bot has an endpoint URL: Orb's events come to it, genuine and forged"
  },
  scopes: {
    type: 'string',
    placeholder: 'LIST',
    help: "(orb) the app's scopes, comma-separated (default: every scope)"
  },
  list: {
    type: 'boolean',
    help: 'list the checks (level, the ledger sentence, each clause and what exercises it, the\n' +
      'windows) and the tours, and exit'
  },
  help: { type: 'boolean', help: 'this help' }
} as const satisfies FlagSpecs

/** `orbtest summary`. */
export const SUMMARY_FLAGS = {
  github: {
    type: 'boolean',
    help: 'append the Markdown to $GITHUB_STEP_SUMMARY and write passed, failed, non-strict, inconclusive,\n' +
      'not-exercised, informational and verdict (pass or fail) to $GITHUB_OUTPUT, as a GitHub Actions step\ndoes'
  },
  out: { type: 'string', placeholder: 'FILE', help: 'write the Markdown to FILE (default: stdout, unless --github)' },
  help: { type: 'boolean', help: 'this help' }
} as const satisfies FlagSpecs

// The webhook tools word their value checks their own way ("is one of", "needs a whole number"); their defaults are
// applied where they are read, the help saying them in its own words.
function wholeNumber (raw: string, name: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} needs a whole number, not ${JSON.stringify(raw)}`)
  return Number(raw)
}

function choice<T extends string> (allowed: readonly T[]) {
  return (raw: string, name: string): T => {
    if (!(allowed as readonly string[]).includes(raw)) throw new UsageError(`--${name} is one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`)
    return raw as T
  }
}

/** `orbtest webhook sign`. */
export const SIGN_FLAGS = {
  token: {
    type: 'string', placeholder: 'TOKEN', help: "the app's token (its signing key is sha256(token), ORB-091); or ORB_TOKEN"
  },
  body: { type: 'string', placeholder: 'FILE', help: 'the raw body to sign, byte for byte (default: standard input)' },
  t: { type: 'string', placeholder: 'MS', help: 'the signing time, milliseconds since the epoch (default: now)', parse: wholeNumber },
  event: { type: 'string', placeholder: 'ID', help: "X-Orb-Event (default: the body's id)" },
  delivery: { type: 'string', placeholder: 'ID', help: 'X-Orb-Delivery (default: a new one)' },
  json: { type: 'boolean', help: 'print the headers as one JSON object' },
  help: { type: 'boolean', help: 'print this help' }
} as const satisfies FlagSpecs

/** `orbtest webhook send`. */
export const SEND_FLAGS = {
  token: { type: 'string', placeholder: 'TOKEN', help: "the app's token; or ORB_TOKEN" },
  type: {
    type: 'string',
    placeholder: 'TYPE',
    help: `the event to send: ${EVENT_TYPES.join(', ')}`,
    parse: choice(EVENT_TYPES)
  },
  forge: {
    type: 'string',
    placeholder: 'KIND',
    help: 'what to send: genuine, or a forgery (see --list)',
    parse: choice(Object.keys(DELIVERY_KINDS) as Array<keyof typeof DELIVERY_KINDS>)
  },
  body: { type: 'string', placeholder: 'FILE', help: 'send this event (a JSON object) instead of a sample of --type' },
  app: { type: 'string', placeholder: 'ID', help: 'the app id in the sample event (default: app_demo)' },
  timeout: {
    type: 'string', placeholder: 'MS', help: 'how long to wait for a reply (default: 10000)', parse: wholeNumber
  },
  list: { type: 'boolean', help: 'list the kinds of delivery and what a correct bot answers to each' },
  help: { type: 'boolean', help: 'print this help' }
} as const satisfies FlagSpecs
