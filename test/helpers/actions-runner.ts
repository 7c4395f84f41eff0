// A composite action's steps played as GitHub's runner plays them, for the action's tests: `if:` conditions with
// the status functions, `${{ }}` expressions in `run`, `env` and `with`, each `run:` step in bash with GITHUB_ENV,
// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY as files, outputs and environment carried to the later steps and actions.
// A `uses:` step is recorded with its inputs, not run: the artifact upload is GitHub's own action.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'

interface StepDef {
  name?: string
  id?: string
  if?: string
  run?: string
  shell?: string
  uses?: string
  env?: Record<string, string>
  with?: Record<string, unknown>
}
interface ActionDef {
  inputs?: Record<string, { default?: string }>
  outputs?: Record<string, { value: string }>
  runs: { using: string, steps: StepDef[] }
}

export interface StepRun {
  name: string
  id?: string
  outcome: 'success' | 'failure' | 'skipped'
  uses?: string
  with?: Record<string, string>
  log: string
}

/** One job: its environment (what GITHUB_ENV added), its summary page, whether a step has failed. */
export class Job {
  /** The runner's own files (GITHUB_ENV and the like), inside the workspace, so that they go with it. */
  readonly temp: string
  readonly env: Record<string, string> = {}
  summary = ''
  failed = false
  #files = 0

  constructor (readonly workspace: string, readonly base: Record<string, string | undefined> = process.env) {
    this.temp = mkdtempSync(join(workspace, 'runner-'))
  }

  /** A fresh file for a step's GITHUB_ENV, GITHUB_OUTPUT or GITHUB_STEP_SUMMARY. */
  file (kind: string): string {
    const path = join(this.temp, `${kind}-${++this.#files}`)
    writeFileSync(path, '')
    return path
  }

  /** Runs a shell step of the job itself (the author's own `run:`), with the job's environment. */
  async run (script: string): Promise<StepRun> {
    return (await this.#bash('user step', script, {}, undefined)).run
  }

  /** Plays a composite action (the folder holding its action.yml) with the given inputs; resolves to its outputs. */
  async action (dir: string, given: Record<string, string>):
  Promise<{ steps: StepRun[], outputs: Record<string, string> }> {
    const def = parse(readFileSync(join(dir, 'action.yml'), 'utf8')) as ActionDef
    if (def.runs.using !== 'composite') throw new Error('not a composite action')
    const inputs = actionInputs(def, given)
    const steps: Record<string, { outputs: Record<string, string>, outcome: string }> = {}
    const runs: StepRun[] = []
    let actionFailed = false
    // What `${{ }}` sees, read afresh for each step (the env steps before wrote, whether one failed) and at the end.
    const context = (): Context => ({
      inputs,
      steps,
      env: this.#environment(),
      runner: { temp: this.temp },
      github: { action_path: dir, workspace: this.workspace },
      failed: actionFailed || this.failed
    })
    for (const step of def.runs.steps) {
      const played = await this.#step(step, context(), dir)
      runs.push(played.run)
      if (step.id !== undefined && played.outputs !== undefined) {
        steps[step.id] = { outputs: played.outputs, outcome: played.run.outcome }
      }
      if (played.run.outcome === 'failure') actionFailed = true
    }
    const outputs: Record<string, string> = {}
    const end = context()
    for (const [k, v] of Object.entries(def.outputs ?? {})) outputs[k] = substitute(v.value, end)
    if (actionFailed) this.failed = true
    return { steps: runs, outputs }
  }

  /**
   * One step of a composite action: skipped by its `if:`, recorded with its inputs (`uses:`), or run in bash. The
   * outputs a later step reads through `steps.<id>`; a `uses:` step has none here.
   */
  async #step (step: StepDef, ctx: Context, dir: string):
  Promise<{ run: StepRun, outputs?: Record<string, string> }> {
    const name = step.name ?? step.uses ?? step.run?.split('\n')[0] ?? '?'
    if (!condition(step.if ?? '', ctx)) {
      const run: StepRun = { name, ...(step.id === undefined ? {} : { id: step.id }), outcome: 'skipped', log: '' }
      return { run, outputs: {} }
    }
    if (step.uses !== undefined) {
      return { run: { name, outcome: 'success', uses: step.uses, with: substituteEach(step.with, ctx), log: '' } }
    }
    if (step.shell !== 'bash') throw new Error(`step ${name}: only shell: bash is played here`)
    return await this.#bash(name, substitute(step.run ?? '', ctx), substituteEach(step.env, ctx), dir, step.id)
  }

  #environment (): Record<string, string> {
    const out: Record<string, string> = {}
    for (const [k, v] of Object.entries(this.base)) if (v !== undefined) out[k] = v
    return { ...out, ...this.env }
  }

  /** A `run:` step in bash as the runner starts it; a failing step of the job's own fails the job. */
  async #bash (name: string, script: string, env: Record<string, string>, actionPath: string | undefined, id?: string):
  Promise<{ run: StepRun, outputs: Record<string, string> }> {
    const files = { env: this.file('env'), output: this.file('output'), summary: this.file('summary') }
    const path = this.file('step.sh')
    writeFileSync(path, script)
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', path], {
      cwd: this.workspace,
      env: {
        ...this.#environment(),
        ...env,
        GITHUB_ACTIONS: 'true',
        GITHUB_WORKSPACE: this.workspace,
        RUNNER_TEMP: this.temp,
        GITHUB_ENV: files.env,
        GITHUB_OUTPUT: files.output,
        GITHUB_STEP_SUMMARY: files.summary,
        ...(actionPath === undefined ? {} : { GITHUB_ACTION_PATH: actionPath })
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let log = ''
    child.stdout.on('data', (chunk: Buffer) => { log += chunk.toString('utf8') })
    child.stderr.on('data', (chunk: Buffer) => { log += chunk.toString('utf8') })
    const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)))
    Object.assign(this.env, keyValues(readFileSync(files.env, 'utf8')))
    const summary = readFileSync(files.summary, 'utf8')
    this.summary += summary
    const run: StepRun = { name, ...(id === undefined ? {} : { id }), outcome: code === 0 ? 'success' : 'failure', log }
    if (code !== 0 && actionPath === undefined) this.failed = true
    return { run, outputs: keyValues(readFileSync(files.output, 'utf8')) }
  }
}

/** The action's inputs: those given, else their defaults; an input the action does not declare is an error. */
function actionInputs (def: ActionDef, given: Record<string, string>): Record<string, string> {
  const inputs: Record<string, string> = {}
  for (const [k, v] of Object.entries(def.inputs ?? {})) inputs[k] = given[k] ?? v.default ?? ''
  for (const k of Object.keys(given)) if (!(k in inputs)) throw new Error(`the action has no input ${k}`)
  return inputs
}

/** A step's `with:` or `env:`, each value with its `${{ }}` replaced. */
function substituteEach (values: Record<string, unknown> | undefined, ctx: Context): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(values ?? {})) out[k] = substitute(String(v), ctx)
  return out
}

/** The `name=value` and `name<<DELIMITER` lines of a GITHUB_ENV or GITHUB_OUTPUT file. */
function keyValues (text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const heredoc = line.match(/^([^=<]+)<<(.+)$/)
    if (heredoc !== null) {
      const body: string[] = []
      while (++i < lines.length && lines[i] !== heredoc[2]) body.push(lines[i]!)
      out[heredoc[1]!] = body.join('\n')
      continue
    }
    const eq = line.indexOf('=')
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1)
  }
  return out
}

interface Context {
  inputs: Record<string, string>
  steps: Record<string, { outputs: Record<string, string>, outcome: string }>
  env: Record<string, string>
  runner: Record<string, string>
  github: Record<string, string>
  /** A step before this one (of this action, or of the job) failed. */
  failed: boolean
}

/** `${{ expr }}` in a string, each replaced by its value as text. */
function substitute (text: string, ctx: Context): string {
  return text.replace(/\$\{\{(.*?)\}\}/g, (_, expr: string) => asText(evaluate(expr, ctx)))
}

const asText = (v: unknown): string => (v === undefined || v === null ? '' : String(v))

/** An `if:`: with no status function in it, GitHub reads it as `success() && (…)`. */
function condition (expr: string, ctx: Context): boolean {
  const inner = expr.trim().replace(/^\$\{\{(.*)\}\}$/s, '$1').trim()
  if (inner === '') return !ctx.failed
  const value = evaluate(inner, ctx)
  const usesStatus = /\b(always|success|failure|cancelled)\(\)/.test(inner)
  return usesStatus ? truthy(value) : !ctx.failed && truthy(value)
}

const truthy = (v: unknown): boolean => v !== '' && v !== false && v !== 0 && v !== null && v !== undefined

/** GitHub's expression language, as much of it as an action here uses: literals, contexts, ! == != && || ( ). */
function evaluate (source: string, ctx: Context): unknown {
  const tokens = source.match(/'(?:[^']|'')*'|&&|\|\||==|!=|[!()]|[A-Za-z_][\w.-]*\(\)|[A-Za-z_][\w.-]*|\d+/g) ?? []
  let i = 0
  const peek = (): string | undefined => tokens[i]
  const primary = (): unknown => {
    const t = tokens[i++]
    if (t === undefined) throw new Error(`expression ends early: ${source}`)
    if (t === '(') {
      const v = or()
      if (tokens[i++] !== ')') throw new Error(`missing ) in ${source}`)
      return v
    }
    if (t === '!') return !truthy(primary())
    if (t.startsWith("'")) return t.slice(1, -1).replace(/''/g, "'")
    if (/^\d+$/.test(t)) return Number(t)
    if (t === 'true' || t === 'false') return t === 'true'
    if (t === 'always()') return true
    if (t === 'success()') return !ctx.failed
    if (t === 'failure()') return ctx.failed
    if (t === 'cancelled()') return false
    const [head, ...rest] = t.split('.')
    let value: unknown = (ctx as unknown as Record<string, unknown>)[head!]
    for (const key of rest) value = (value as Record<string, unknown> | undefined)?.[key]
    return value
  }
  const compare = (): unknown => {
    let left = primary()
    while (peek() === '==' || peek() === '!=') {
      const op = tokens[i++]
      const right = primary()
      const same = asText(left).toLowerCase() === asText(right).toLowerCase()
      left = op === '==' ? same : !same
    }
    return left
  }
  // `a && b` is b when a is truthy, else a; `a || b` is a when a is truthy, else b (both evaluated here: no side
  // effects in an expression).
  const chain = (op: '&&' | '||', operand: () => unknown) => (): unknown => {
    let left = operand()
    while (peek() === op) {
      i++
      const right = operand()
      left = truthy(left) === (op === '&&') ? right : left
    }
    return left
  }
  const and = chain('&&', compare)
  const or = chain('||', and)
  const value = or()
  if (i !== tokens.length) throw new Error(`cannot read ${source}`)
  return value
}
