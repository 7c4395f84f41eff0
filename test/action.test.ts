// The GitHub Action (action.yml, stop/action.yml) played step by step as a runner plays it
// (test/helpers/actions-runner.ts): judge mode on the reference adapter and bots, passing and with a fault, and
// service mode with the traffic judged. The runs start at once; the clients mostly wait.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse } from 'yaml'
import { Job } from './helpers/actions-runner.js'
import { EVENTS_BOT, NODE_ADAPTER, WEBHOOK_BOT } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

const root = ROOT

/** A job in a workspace of its own, with a HOME of its own (the discovery file's default place is under it). */
function newJob (): Job {
  const workspace = mkdtempSync(join(tmpdir(), 'orbtest-action-'))
  return new Job(workspace, { ...process.env, HOME: workspace, TMPDIR: workspace })
}

type Played = Awaited<ReturnType<Job['action']>>

async function judge (inputs: Record<string, string>): Promise<{ job: Job, result: Played }> {
  const job = newJob()
  const result = await job.action(root, inputs)
  return { job, result }
}

const adapterPass = judge({ client: `node ${NODE_ADAPTER}`, flags: '--tour basic --scenarios 0 --seed 7' })
const adapterFault = judge({
  client: `node ${NODE_ADAPTER}`,
  args: '--fault origin',
  flags: '--tour basic --scenarios 0'
})
const botPass = judge({ client: `node ${EVENTS_BOT}`, suite: 'orb', flags: '--tour basic --scenarios 0' })
const webhookFault = judge({
  client: `node ${WEBHOOK_BOT}`,
  args: '--fault crash-on-null-body',
  suite: 'orb-webhook',
  flags: '--tour encrypted --scenarios 0',
  'report-dir': 'reports/bot',
  artifact: 'bot-report'
})

/** Service mode: fakes started and judged, the author's own step driving the adapter for a while, then stop. */
async function service (fault: string | undefined): Promise<{ job: Job, stop: Played, token: string }> {
  const job = newJob()
  await job.action(root, { start: 'true', judge: 'true', flags: '--orb-port 0 --control-port 0' })
  const { token } = JSON.parse(readFileSync(job.env.ORBTILE_DISCOVERY!, 'utf8')) as { token: string }
  // The clean adapter runs until it has made its sessions, and a second more (30 s at most: a fixed 4 s was once too
  // short on a loaded machine, and only one check had been exercised); the faulty one, refused from its first
  // request, for 4 s.
  const until = fault === undefined ? "grep -q 'sessions s1 and s2 created' adapter.log" : 'false'
  await job.run(`node ${NODE_ADAPTER}${fault === undefined ? '' : ` --fault ${fault}`} 2> adapter.log & pid=$!
    for i in $(seq ${fault === undefined ? 300 : 40}); do ${until} && { sleep 1; break; }; sleep 0.1; done
    kill -TERM $pid 2>/dev/null || true; wait $pid || true`)
  const stop = await job.action(join(root, 'stop'), { 'job-status': job.failed ? 'failure' : 'success' })
  return { job, stop, token }
}
const servicePass = service(undefined)
const serviceFault = service('origin')

const step = (r: Played, name: string) => r.steps.find((s) => s.name === name)!

t.test('ACT-01 judge mode on the Node reference adapter: reports in the folder, outputs, a summary, a green step', async (t) => {
  const { job, result } = await adapterPass
  const judged = step(result, 'Judge the client')
  t.equal(judged.outcome, 'success', 'the judge step passes')
  t.equal(job.failed, false, 'the job has not failed')
  t.equal(result.outputs.verdict, 'pass', 'verdict output')
  t.equal(result.outputs.failed, '0', 'no failure counted')
  t.ok(Number(result.outputs.passed) > 5, `passed output (${result.outputs.passed})`)
  const dir = join(job.workspace, result.outputs['report-dir']!)
  for (const f of ['junit.xml', 'report.json', 'report.html', 'report.tap']) {
    t.ok(existsSync(join(dir, f)), `${f} written`)
  }
  const heading = /^## orbtest: Orbtile Adapter Protocol v1\.2: client conformance \(orbtest\): ✅ passed/m
  t.match(job.summary, heading, 'the summary leads with the verdict')
  const row = /\| OT-011 \| ✅ pass \| every request carries Host: localhost \|/
  t.match(job.summary, row, 'a table of ids with verdicts')
  const upload = step(result, 'Upload the report')
  t.equal(upload.uses, 'actions/upload-artifact@v4', 'the report folder is uploaded')
  t.same([upload.with?.name, upload.with?.path], ['orbtest-orbtile', 'orbtest-report'], 'by its default name')
  t.equal(step(result, 'Start the fakes').outcome, 'skipped', 'judge mode starts no fakes')
  rmSync(job.workspace, { recursive: true, force: true })
})

t.test('ACT-02 judge mode with a fault: the step fails, the summary gives the failure, Expected, Actual and the replay', async (t) => {
  const { job, result } = await adapterFault
  t.equal(step(result, 'Judge the client').outcome, 'failure', 'the judge step fails')
  t.equal(job.failed, true, 'and with it the job')
  t.equal(result.outputs.verdict, 'fail', 'verdict output')
  t.equal(result.outputs.failed, '1', 'one required check failed')
  t.match(job.summary, /❌ failed/, 'the summary says failed')
  t.match(job.summary, /#### OT-014: no request carries an Origin header/, 'the failure by its id')
  t.match(job.summary, /- \*\*Expected:\*\* `no Origin header`/, 'Expected')
  t.match(job.summary, /- \*\*Actual:\*\* `Origin: http:\/\/localhost`/, 'Actual')
  t.match(job.summary, /- \*\*Replay:\*\* `npx orbtest conformance --client orbtile --tour basic --scenarios 0 -- node \S+adapter\.mjs --fault origin`/, 'the command that replays it')
  t.equal(step(result, 'Upload the report').outcome, 'success', 'the report is uploaded all the same')
  rmSync(job.workspace, { recursive: true, force: true })
})

t.test('ACT-03 judge mode on the reference bots: the events bot passes, a webhook bot fault fails', async (t) => {
  const pass = await botPass
  t.equal(step(pass.result, 'Judge the client').outcome, 'success', 'events bot: the step passes')
  t.equal(pass.result.outputs.verdict, 'pass', 'events bot: verdict pass')
  const suite = /Orb bot API: client conformance of a bot that fetches its events/
  t.match(pass.job.summary, suite, 'events bot: its suite named')
  const fault = await webhookFault
  t.equal(step(fault.result, 'Judge the client').outcome, 'failure', 'webhook fault: the step fails')
  t.match(fault.job.summary, /#### ORB-036:/, 'webhook fault: ORB-036 in the summary')
  const replay = /--client orb --webhook --tour encrypted --scenarios 0 -- node \S+bot\.mjs --fault crash-on-null-body/
  t.match(fault.job.summary, replay, 'webhook fault: a replay with --webhook')
  const upload = step(fault.result, 'Upload the report')
  t.same([upload.with?.name, upload.with?.path], ['bot-report', 'reports/bot'], 'artifact and folder as named')
  t.ok(existsSync(join(fault.job.workspace, 'reports', 'bot', 'report.html')), 'the HTML report is in that folder')
  for (const j of [pass.job, fault.job]) rmSync(j.workspace, { recursive: true, force: true })
})

t.test('ACT-04 service mode: the fakes start, their addresses are exported, and the stop action judges the traffic', async (t) => {
  const { job, stop, token } = await servicePass
  for (const name of ['ORBTILE_DISCOVERY', 'ORB_URL', 'ORB_TOKEN', 'ORB_APP_ID', 'ORBTEST_CONTROL_URL']) {
    t.ok((job.env[name] ?? '') !== '', `${name} exported`)
  }
  t.match(job.env.ORB_URL, /^http:\/\/127\.0\.0\.1:\d+$/, 'ORB_URL is the fake Orb on loopback')
  t.equal(job.env.ORB_APP_ID, 'app_demo', 'the demo app')
  t.equal(job.env.ORB_TOKEN_APP_DEMO, job.env.ORB_TOKEN, 'each demo app\'s token by its id')
  t.match(job.env.ORB_TOKEN_APP_LITE, /^orb_lite_/, 'the lite app\'s too')
  t.equal(step(stop, 'Stop the fakes').outcome, 'success', 'the stop step passes')
  t.equal(stop.outputs.verdict, 'pass', 'the traffic held the rules')
  const verdicts = /client rules judged on live traffic \(orbtest up --judge\): ✅ passed/
  t.match(job.summary, verdicts, 'the verdicts are on the summary')
  t.ok(Number(stop.outputs.passed) > 3, `checks passed (${stop.outputs.passed})`)
  t.ok(existsSync(join(job.workspace, 'orbtest-report', 'judge.json')), 'the verdicts are kept in the report folder')
  t.equal(step(stop, "Upload the verdicts and the fakes' log").outcome, 'success', 'and uploaded')
  const kept = ['orbtest-up.log', 'judge.json']
    .map((f) => readFileSync(join(job.workspace, 'orbtest-report', f), 'utf8'))
  t.ok(token.length === 43 && ![...kept, job.summary].some((text) => text.includes(token)), 'no discovery token kept')
  rmSync(job.workspace, { recursive: true, force: true })
})

t.test('ACT-05 service mode with a fault in the traffic: the stop step fails and names the rule', async (t) => {
  const { job, stop } = await serviceFault
  t.equal(step(stop, 'Stop the fakes').outcome, 'failure', 'the stop step fails')
  t.equal(job.failed, true, 'and the job')
  t.equal(stop.outputs.verdict, 'fail', 'verdict fail')
  t.match(job.summary, /#### OT-014: no request carries an Origin header/, 'the broken rule in the summary')
  t.equal(step(stop, "Upload the verdicts and the fakes' log").outcome, 'success', 'verdicts and log uploaded')
  rmSync(job.workspace, { recursive: true, force: true })
})

t.test('ACT-06 the stop action with no fakes started fails with a message, not a hang', async (t) => {
  const job = newJob()
  const stop = await job.action(join(root, 'stop'), {})
  const s = step(stop, 'Stop the fakes')
  t.equal(s.outcome, 'failure', 'it fails')
  t.match(s.log, /no fakes to stop: start them first/, 'saying why')
  rmSync(job.workspace, { recursive: true, force: true })
})

t.test('ACT-07 the project dogfoods its action: each reference client on Node 20, 22 and 24, with inputs that exist', async (t) => {
  const read = (file: string): any => parse(readFileSync(join(root, file), 'utf8'))
  const action = read('action.yml')
  const stop = read('stop/action.yml')
  const job = read('.github/workflows/ci.yml').jobs.action
  t.same(job.strategy.matrix.node, [20, 22, 24], 'three Node versions')
  const steps = job.steps as Array<{ uses?: string, with?: Record<string, unknown> }>
  const uses = steps.filter((s) => s.uses?.startsWith('./'))
  const suites = uses.filter((s) => s.uses === './' && s.with?.client !== undefined)
    .map((s) => s.with?.suite ?? 'orbtile')
  t.same([...new Set(suites)].sort(), ['orb', 'orb-webhook', 'orbtile'], 'judge mode on an adapter, bots of both kinds')
  t.ok(uses.some((s) => s.uses === './' && s.with?.start === true && s.with?.judge === true), 'service mode, judged')
  t.ok(uses.some((s) => s.uses === './stop'), 'and the stop action')
  for (const s of uses) {
    const declared = Object.keys((s.uses === './stop' ? stop : action).inputs)
    t.same(Object.keys(s.with ?? {}).filter((k) => !declared.includes(k)), [], `${s.uses} is given only inputs it has`)
  }
  for (const [name, def] of [['action.yml', action], ['stop/action.yml', stop]] as const) {
    const text = readFileSync(join(root, name), 'utf8')
    const named = [...text.matchAll(/inputs\.([\w-]+)/g)].map((m) => m[1]!)
    t.same(named.filter((n) => !(n in def.inputs)), [], `${name} reads only inputs it declares`)
  }
})
