/**
 * Every command of `orbtest`, one entry each: how it is named, its line in `orbtest --help`, its own --help, its flags
 * and what it runs. Each `run` loads its command's modules when it runs: --help and a flag mistake load no fake, no
 * suite, no fastify (ARCH-07).
 */
import { TargetError } from '../../conformance/server/core/errors.js'
import { StartupError } from '../shared/startup-error.js'
import { command, type AnyCommand } from './command.js'
import {
  CLIENT_FLAGS, COMMON_FLAGS, ORB_FLAGS, ORBTILE_FLAGS, PARITY_FLAGS, PROXY_ORB_FLAGS, PROXY_ORBTILE_FLAGS, SEND_FLAGS,
  SERVE_FLAGS,
  SERVER_FLAGS, SIGN_FLAGS, SUMMARY_FLAGS
} from './command-flags.js'

/** `orbtest --help`'s own words, around the table's lines. */
export const ORBTEST = {
  usage: 'orbtest <command> [flags]',
  help: 'Stateful fakes and conformance tests for the Orbtile Adapter Protocol and the Orb bot API.',
  footer: "Run 'orbtest <command> --help' for a command's flags. 'orbtest --version' prints the version.\n",
  /** The width of the first column of its list of commands. */
  column: 23
}

const up = command({
  name: 'up',
  summary: ['up', 'run every fake with the control server (npm start)'],
  usage: 'orbtest up [flags]',
  help: 'Runs every fake (the fake Orbtile and the fake Orb) with the control server. This is what `npm start` runs.',
  flags: SERVE_FLAGS,
  run: async ({ flags }) => await (await import('./serve.js')).serve({ orbtile: flags, orb: flags }, flags)
})

const orbtile = command({
  name: 'orbtile',
  summary: ['orbtile', 'run the fake Orbtile with the control server'],
  usage: 'orbtest orbtile [flags]',
  help: 'Runs the fake Orbtile alone (Adapter API v1.2 on a Unix socket, found through the discovery file), with the ' +
    'control server.',
  flags: { ...ORBTILE_FLAGS, ...COMMON_FLAGS },
  run: async ({ flags }) => await (await import('./serve.js')).serve({ orbtile: flags }, flags)
})

const orb = command({
  name: 'orb',
  summary: ['orb', 'run the fake Orb with the control server'],
  usage: 'orbtest orb [flags]',
  help: 'Runs the fake Orb alone (the Orb bot API on loopback HTTP, with a seeded world), with the control server.',
  flags: { ...ORB_FLAGS, ...COMMON_FLAGS },
  run: async ({ flags }) => await (await import('./serve.js')).serve({ orb: flags }, flags)
})

const serverConformance = command({
  name: 'conformance',
  summary: [
    'conformance --target T',
    "run the conformance suite against an Orbtile or an Orb (see 'orbtest conformance --help')"
  ],
  usage: 'orbtest conformance --target TARGET [flags]\n' +
    '       orbtest conformance --client SUITE [flags] -- COMMAND [ARGS…]   (see --client orbtile --help)',
  help: [
    'Runs property-based conformance cases against a server that claims to speak the Orbtile Adapter Protocol v1.2',
    '(orbtile, orbtile:PATH, unix:SOCKET targets) or the Orb bot API (http:// and https:// targets).',
    'TAP on stdout; exit 0 when every required case passes, 1 when one fails, 2 for a usage error or a target that',
    'cannot be reached.'
  ].join('\n'),
  tables: [{
    title: 'Targets',
    rows: [
      ['orbtile', 'the discovery file at its usual place ($ORBTILE_DISCOVERY, else under $HOME)'],
      ['orbtile:PATH', 'the discovery file at PATH (socketPath, basePath and token are read from it)'],
      ['unix:SOCKET', 'a Unix socket; give the token with --token (base path /a/v1)'],
      ['http(s)://HOST:PORT', "an Orb; with --control (orbtest's fake) the suite sets up apps of its own, otherwise\n" +
        '--config FILE names the apps, community and channels to use']
    ]
  }],
  column: 23,
  flags: SERVER_FLAGS,
  // A target that cannot be reached or used is not the run's failure: nothing was judged.
  refuses: (err) => err instanceof TargetError,
  run: async ({ flags }, out) => await (await import('./conformance.js')).judgeServer(flags, out)
})

const clientConformance = command({
  name: 'conformance',
  chosenBy: '--client',
  usage: 'orbtest conformance --client SUITE [flags] -- COMMAND [ARGS…]',
  help: [
    'Judges a client: for each scenario, orbtest starts a fresh fake, runs COMMAND against it, plays the scenario (the',
    'user, the app, the wire), stops COMMAND (SIGTERM, then SIGKILL after 2 s) and checks everything it did against',
    "the protocol's client rules. TAP on stdout; exit 0 when no required rule failed, 1 when one did, 2 for a usage",
    'error or a command that cannot be run.'
  ].join('\n'),
  tables: [{
    title: 'Suites',
    rows: [
      ['orbtile', 'an Orbtile adapter: COMMAND gets HOME and TMPDIR (fresh folders) and ORBTILE_DISCOVERY\n' +
        "(the discovery file, also at the spec's path under HOME), with orbtest's own environment"],
      ['orb', 'an Orb bot: COMMAND gets ORB_URL, ORB_TOKEN and ORB_APP_ID (an app made for it and\n' +
        'installed in the demo community), HOME and TMPDIR; with --webhook also PORT, and the\n' +
        "app's endpoint URL is http://127.0.0.1:PORT/orb/webhook"]
    ]
  }],
  column: 23,
  flags: CLIENT_FLAGS,
  runsCommand: true,
  run: async (input, out) => await (await import('./conformance.js')).judgeClient(input, out)
})

// The two webhook tools share their usage and their description: `orbtest webhook --help` shows them.
const WEBHOOK_USAGE = `orbtest webhook sign --token TOKEN [--body FILE] [--t MS] [--event ID] [--delivery ID] [--json]
       orbtest webhook send URL --token TOKEN [--type TYPE] [--forge KIND] [--body FILE] [--app ID] [--timeout MS]
       orbtest webhook send --list`

const WEBHOOK_HELP = [
  'sign prints the headers Orb sends with a body (ORB-091, ORB-092). send POSTs a genuine or forged delivery of an event',
  "to a bot's endpoint, prints what it sent and the reply, and says whether a correct bot answers so (exit 0) or not",
  '(exit 1; 2 for a usage mistake). The token is never printed.'
].join('\n')

/** A file the user named that is not there (`--body`): one line, exit 2. */
const isMissingFile = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT'

const webhookSign = command({
  name: 'webhook',
  verb: 'sign',
  summary: ['webhook sign|send', "sign a body as Orb does; send a genuine or forged delivery to a bot's endpoint"],
  usage: WEBHOOK_USAGE,
  help: WEBHOOK_HELP,
  column: 20,
  flags: SIGN_FLAGS,
  refuses: isMissingFile,
  run: async ({ flags }, out) => (await import('./webhook.js')).sign(flags, out)
})

const webhookSend = command({
  name: 'webhook',
  verb: 'send',
  usage: WEBHOOK_USAGE,
  help: WEBHOOK_HELP,
  column: 20,
  flags: SEND_FLAGS,
  operands: true,
  refuses: isMissingFile,
  run: async (input, out) => await (await import('./webhook.js')).send(input, out)
})

const proxyOrbtile = command({
  name: 'proxy',
  verb: 'orbtile',
  summary: ['proxy orbtile', 'stand between an adapter and a real Orbtile app, and judge the adapter live'],
  usage: 'orbtest proxy orbtile [--upstream PATH] [--discovery PATH] [--judge FILE] [--strict-server]\n' +
    '                             [--record FILE] [--ready-file PATH] [-- COMMAND [ARGS…]]',
  help: [
    'Relays an adapter\'s traffic to a real Orbtile app (or any server of the protocol), byte for byte: the proxy',
    'listens on a socket of its own (0600, in a private folder) and writes a discovery file that names it, with the',
    "app's token, for the adapter to find; it follows the app's discovery file as the app changes it. With --judge,",
    'the client rules are judged on every exchange, as `orbtest up --judge` does; rules that need a scenario (the',
    'user, the app) stay not exercised. With a COMMAND, the adapter is started with ORBTILE_DISCOVERY naming the',
    "proxy's file, and the proxy stops when it exits (or stops it, SIGTERM then SIGKILL, on Ctrl-C). With --record,",
    'every exchange is written to a file, secrets taken out, for `orbtest parity` to replay against a fake.',
    'Exit 0 when no required rule was broken, 1 when one was, 2 for a usage error or an app that is not there.'
  ].join('\n'),
  flags: PROXY_ORBTILE_FLAGS,
  runsCommand: true,
  // No app to stand in front of: nothing was judged.
  refuses: (err) => err instanceof StartupError && err.code === 'ORBTEST_UPSTREAM_MISSING',
  run: async (input) => await (await import('./proxy.js')).proxyOrbtile(input)
})

const proxyOrb = command({
  name: 'proxy',
  verb: 'orb',
  summary: ['proxy orb', 'stand between a bot and a real Orb, and judge the bot live'],
  usage: 'orbtest proxy orb --upstream URL [--listen HOST:PORT] [--webhook-to URL] [--judge FILE]\n' +
    '                         [--strict-server] [--record FILE] [--ready-file PATH] [-- COMMAND [ARGS…]]',
  help: [
    "Forwards a bot's calls to a real Orb (or any server of the bot API) and its replies back: each request as it came",
    'but for its Host, which names the Orb (TLS included), and the headers of one connection. Each reply of the Orb',
    "is read against the spec (its schema, the Error body, a 429's Retry-After): server findings, each with its",
    'ledger id. With --judge (the app\'s token in ORB_TOKEN), the bot rules are judged on every exchange; rules that',
    'need a scenario (the bot\'s process, a forged or repeated delivery) are left out, and those whose situation never',
    'arose stay not exercised. With a COMMAND, the bot is started with ORB_URL naming the proxy, and the proxy stops',
    "when it exits. With --webhook-to, the proxy is the app's endpoint too: the Orb's deliveries (a POST outside /api/",
    'with X-Orb-Signature, X-Orb-Event or X-Orb-Delivery) are checked (signature, headers, body) and handed on to the',
    'bot, whose answers are judged. With --record (ORB_TOKEN too), every exchange is written to a file, secrets taken',
    'out, for `orbtest parity` to replay against the fake Orb.',
    'Exit 0 when no required rule was broken, 1 when one was, 2 for a usage error.'
  ].join('\n'),
  flags: PROXY_ORB_FLAGS,
  runsCommand: true,
  run: async (input) => await (await import('./proxy.js')).proxyOrb(input)
})

const parity = command({
  name: 'parity',
  summary: ['parity RECORDING', 'replay a recording (proxy --record) against a fresh fake: where it answers otherwise'],
  usage: 'orbtest parity RECORDING [--json FILE] [--html FILE] [FAKE FLAGS]',
  help: [
    "Replays a recording's requests, in their order and with their overlap, against a fresh fake of the same API",
    'started with the FAKE FLAGS below (set it up as the recorded server was), and compares each reply with the',
    'recorded one: status, error code, body shape (keys and types, not values) and the headers the specs name. The',
    'tokens and ids the recorded server made are put back as the fake makes them, and an Orb long poll the',
    'recorded server answered early (a member\'s event, which is not replayed) is sent with its wait cut to that',
    'time. Each difference is one of behaviour, of the world (a thing or setting one server has and the other',
    'lacks), or one that follows an earlier difference. docs/proxy.md says how to read the report.'
  ].join('\n'),
  column: 26,
  flags: PARITY_FLAGS,
  operands: true,
  footer: 'Exit 0 when no difference of behaviour was found, 1 when one was, 2 for a usage error, a recording with no\n' +
    'exchange, or one whose every reply was cut (nothing to compare).\n',
  run: async (input, out) => await (await import('./parity.js')).parity(input, out)
})

const summary = command({
  name: 'summary',
  summary: ['summary REPORT.json', "a run's JSON report as Markdown (a CI job's summary page; --github for Actions)"],
  usage: 'orbtest summary REPORT.json [--github] [--out FILE]',
  help: [
    "Turns a run's JSON report (--json of 'orbtest conformance', server or client, or 'orbtest up --judge FILE.json')",
    'into Markdown for a person: the verdict, the counts, each failure with its id, Expected, Actual and the command',
    'that replays it, and a table of every id with its verdict. The report holds no token, and the Markdown escapes',
    'whatever text the report carries.'
  ].join('\n'),
  column: 11,
  flags: SUMMARY_FLAGS,
  operands: true,
  footer: 'Exit 0 when the run passed, 1 when a required rule failed, 2 when the report cannot be read.\n',
  run: async (input, out) => (await import('./summary.js')).summary(input, out)
})

/** In the order `orbtest --help` lists them. */
export const COMMANDS: readonly AnyCommand[] = [
  up, orbtile, orb, serverConformance, clientConformance, proxyOrbtile, proxyOrb, parity, webhookSign, webhookSend,
  summary
]
