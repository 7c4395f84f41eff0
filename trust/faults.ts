/**
 * The reference faults: each deliberate fault of a reference client (its `--fault` switch), the tour that makes its
 * situation arise, and the clause or clauses of the client rules it must break. Every clause the client suites
 * judge has at least one (test/client-checks.test.ts holds it), so that every verdict is shown to bite.
 */
export interface ReferenceFault {
  /** The reference client it is a fault of (trust/clients.ts). */
  client: 'adapter-node' | 'bot-events' | 'bot-webhook'
  fault: string
  tour: string
  /** `OT-147.withdrawn`: the check's id, a dot, the clause's key. */
  clauses: readonly string[]
  /** A long tour (played only when named, and by the campaign only with --long). */
  long?: true
}

const adapter = (fault: string, tour: string, ...clauses: string[]): ReferenceFault =>
  ({ client: 'adapter-node', fault, tour, clauses })
const events = (fault: string, tour: string, ...clauses: string[]): ReferenceFault =>
  ({ client: 'bot-events', fault, tour, clauses })
const webhook = (fault: string, tour: string, ...clauses: string[]): ReferenceFault =>
  ({ client: 'bot-webhook', fault, tour, clauses })

export const FAULTS: readonly ReferenceFault[] = [
  adapter('garbage', 'basic', 'OT-002.http'),
  adapter('hardcoded-socket', 'basic', 'OT-002.reach'),
  adapter('stale-discovery', 'app', 'OT-005.reread', 'OT-002.moved'),
  adapter('no-base-path', 'basic', 'OT-003.target'),
  adapter('absolute-target', 'basic', 'OT-003.absolute-form'),
  adapter('crash-on-unknown-field', 'unknown-fields', 'OT-008.up'),
  adapter('freeze-on-unknown-field', 'unknown-fields', 'OT-008.same'),
  adapter('no-host', 'basic', 'OT-011.host'),
  adapter('host-port', 'basic', 'OT-011.port'),
  adapter('info-no-content-type', 'basic', 'OT-012.type'),
  adapter('content-type-parameter', 'basic', 'OT-012.parameter'),
  adapter('wrong-bearer', 'basic', 'OT-013.bearer'),
  adapter('origin', 'basic', 'OT-014.origin'),
  adapter('batch-no-adapter-token', 'heartbeat', 'OT-019.token'),
  adapter('log-token', 'basic', 'OT-022.secret'),
  adapter('token-file', 'basic', 'OT-022.secret'),
  // Flooding and polling twice need the adapter registered and running: tour:basic's 3 s can end first on a loaded
  // machine (seen: 2.5 s from the registration's reply to the first session), tour:heartbeat's 16 s cannot.
  adapter('flood', 'heartbeat', 'OT-027.rate'),
  adapter('ignore-retry-after', 'wire', 'OT-027.backoff'),
  adapter('short-nonce', 'basic', 'OT-039.nonce'),
  adapter('fixed-nonce', 'app', 'OT-039.fresh'),
  adapter('trust-impostor', 'impostor', 'OT-039.impostor'),
  adapter('wait-for-keypad', 'heartbeat', 'OT-058.working'),
  adapter('icon-dropped', 'app', 'OT-064.again'),
  adapter('hue-205', 'basic', 'OT-074.hue'),
  adapter('attention-hue', 'basic', 'OT-081.calm', 'OT-081.arc'),
  adapter('missed-heartbeat', 'heartbeat', 'OT-113.gap'),
  adapter('pending-id-elsewhere', 'decisions', 'OT-125.elsewhere'),
  adapter('reuse-request-id', 'decisions', 'OT-128.reuse'),
  adapter('two-polls', 'heartbeat', 'OT-134.one'),
  adapter('ack-decreases', 'decisions', 'OT-138.bounds'),
  adapter('cursor-past', 'decisions', 'OT-138.after'),
  adapter('keep-cursor', 'app', 'OT-138.lease'),
  adapter('ack-on-receipt', 'decisions', 'OT-139.receipt'),
  adapter('apply-expired', 'decisions', 'OT-147.expired'),
  adapter('apply-to-current', 'withdrawn', 'OT-147.withdrawn', 'OT-148.stale'),
  adapter('no-ack-stale', 'decisions', 'OT-147.ack', 'OT-148.ack'),
  adapter('apply-bad-picks', 'decisions', 'OT-148.picks'),
  adapter('unknown-palette-key', 'basic', 'OT-A10.closed'),
  adapter('ignore-api-minor', 'older-app', 'OT-A28.minor'),
  adapter('crash', 'basic', 'OTC-03.up'),
  adapter('connections', 'basic', 'OTC-04.connections'),
  adapter('ignore-sigterm', 'basic', 'OTC-05.exit'),
  adapter('invalid-body', 'decisions', 'OTC-06.schema'),

  events('no-version', 'basic', 'ORB-001.base'),
  events('unknown-operation', 'basic', 'ORB-001.operation'),
  events('no-auth', 'basic', 'ORB-002.header'),
  events('token-in-query', 'basic', 'ORB-002.secret'),
  events('flood', 'basic', 'ORB-032.rate'),
  events('everyone', 'basic', 'ORB-032.everyone'),
  events('post-elsewhere', 'basic', 'ORB-032.channel'),
  events('card', 'basic', 'ORB-032.card'),
  events('crash-on-null-body', 'encrypted', 'ORB-036.crash'),
  events('crash-on-null-body', 'basic', 'ORB-036.exit'),
  events('empty-on-null', 'basic', 'ORB-036.empty'),
  events('refetch', 'basic', 'ORB-048.next'),
  events('after-not-next', 'basic', 'ORB-048.past'),
  events('no-dedup', 'repeat', 'ORB-048.twice'),
  events('not-idempotent', 'repeat', 'ORB-048.restart-twice'),
  events('cursor-before-handling', 'restart', 'ORB-048.skip'),
  events('piecemeal-commands', 'basic', 'ORB-065.delete'),
  events('changing-commands', 'basic', 'ORB-065.whole'),
  events('late-respond', 'basic', 'ORB-071.answer'),
  events('no-respond', 'basic', 'ORB-071.unanswered'),
  events('no-fallback', 'late', 'ORB-071.fallback'),
  { ...events('silent-seat', 'voice', 'ORB-077.gap'), long: true },
  { ...events('no-speaking', 'voice', 'ORB-077.speaking'), long: true },
  events('null-as-false', 'passport', 'ORB-088.null'),
  events('ignore-retry-after', 'throttle', 'ORB-100.wait'),
  events('exit-early', 'basic', 'OBC-06.up'),
  events('ignore-sigterm', 'basic', 'OBC-06.exit'),

  webhook('crash-on-null-body', 'encrypted', 'ORB-036.crash'),
  webhook('no-signature-check', 'attack', 'ORB-095.act'),
  webhook('parsed-body', 'attack', 'ORB-095.act'),
  webhook('no-tolerance', 'attack', 'ORB-095.act'),
  webhook('accept-unsigned', 'attack', 'ORB-095.act'),
  webhook('blind-acts', 'attack', 'ORB-095.timed', 'ORB-096.timed'),
  webhook('ok-to-forgeries', 'attack', 'ORB-095.refuse'),
  webhook('acts-on-duplicates', 'attack', 'ORB-096.act'),
  webhook('first-v1-only', 'deliveries', 'ORB-097.notice'),
  webhook('late-notice', 'deliveries', 'ORB-097.notice'),
  webhook('no-notice', 'deliveries', 'ORB-097.notice'),
  webhook('notice-on-mention', 'deliveries', 'ORB-097.only')
]
