import type { CaseResult } from './server/core/case.js'

/** The TAP 14 plan line and header. */
export function tapHeader (total: number, about: string): string {
  return `TAP version 14\n# ${about}\n1..${total}\n`
}

/** One case as a TAP test point, with a YAML block for what a person needs to act on a failure. */
export function tapLine (result: CaseResult, index: number, runs = 20): string {
  const name = `${result.id} ${result.title}`
  let line: string
  switch (result.verdict) {
    case 'pass':
      line = `ok ${index} - ${name}`
      break
    case 'skip':
      line = `ok ${index} - ${name} # SKIP ${result.reason ?? ''}`
      break
    case 'informational':
      line = `not ok ${index} - ${name} # TODO informational: a decision of orbtest's (OT-A…), enforced only with --strict`
      break
    default:
      line = result.expectedFailure === undefined ? `not ok ${index} - ${name}` : `not ok ${index} - ${name} # TODO expected failure: ${result.expectedFailure}`
  }
  if (result.verdict === 'pass' || result.verdict === 'skip') return `${line}\n`
  const yaml = ['  ---', `  message: ${yamlString(result.reason ?? '')}`]
  if (result.expected !== undefined) yaml.push(`  expected: ${yamlString(result.expected)}`)
  if (result.actual !== undefined) yaml.push(`  actual: ${yamlString(result.actual)}`)
  if (result.replay !== undefined) yaml.push(`  replay: "${caseReplayFlags(result.id, result.replay, runs)}"`)
  if (result.curl !== undefined) yaml.push(`  curl: ${yamlString(result.curl)}`)
  yaml.push('  ...')
  return `${line}\n${yaml.join('\n')}\n`
}

/** The closing summary lines. */
export function tapSummary (results: readonly CaseResult[], ms: number, requests: number): string {
  const count = (verdict: CaseResult['verdict']): number => results.filter((r) => r.verdict === verdict).length
  const expected = results.filter((r) => r.verdict === 'fail' && r.expectedFailure !== undefined).length
  return `# pass ${count('pass')}  fail ${count('fail') - expected}  expected failures ${expected}  skip ${count('skip')}  informational ${count('informational')}\n# ${results.length} cases, ${requests} requests, ${(ms / 1000).toFixed(1)} s\n`
}

/** JUnit XML, one testsuite; informational and expected failures are not failures there either. */
export function junitXml (results: readonly CaseResult[], suite: string, ms: number): string {
  const failures = results.filter((r) => r.verdict === 'fail' && r.expectedFailure === undefined).length
  const skipped = results.filter((r) => r.verdict === 'skip').length
  const cases = results.map((r) => {
    const name = xml(`${r.id} ${r.title}`)
    const open = `    <testcase classname="${xml(suite)}" name="${name}" time="${(r.ms / 1000).toFixed(3)}"`
    if (r.verdict === 'pass') return `${open}/>`
    if (r.verdict === 'skip') return `${open}>\n      <skipped message="${xml(r.reason ?? '')}"/>\n    </testcase>`
    const detail = [`expected: ${r.expected ?? ''}`, `actual: ${r.actual ?? ''}`, r.replay === undefined ? '' : `replay: --seed ${r.replay.seed} --grep ${r.id}`, r.curl === undefined ? '' : `curl: ${r.curl}`].filter((l) => l !== '').join('\n')
    if (r.verdict === 'informational' || r.expectedFailure !== undefined) {
      return `${open}>\n      <system-out>${xml(`${r.verdict === 'informational' ? 'informational' : `expected failure: ${r.expectedFailure}`}: ${r.reason ?? ''}\n${detail}`)}</system-out>\n    </testcase>`
    }
    return `${open}>\n      <failure message="${xml(r.reason ?? '')}">${xml(detail)}</failure>\n    </testcase>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="${xml(suite)}" tests="${results.length}" failures="${failures}" skipped="${skipped}" time="${(ms / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`
}

/** The JSON index: every case with its verdict, and its exchanges for the failures. */
export function jsonIndex (results: readonly CaseResult[], about: Record<string, unknown>): string {
  return `${JSON.stringify({
    ...about,
    cases: results.map((r) => ({
      id: r.id,
      title: r.title,
      level: r.level,
      verdict: r.verdict,
      ms: r.ms,
      ...(r.reason === undefined ? {} : { reason: r.reason }),
      ...(r.expected === undefined ? {} : { expected: r.expected }),
      ...(r.actual === undefined ? {} : { actual: r.actual }),
      ...(r.replay === undefined ? {} : { replay: r.replay }),
      ...(r.curl === undefined ? {} : { curl: r.curl }),
      ...(r.expectedFailure === undefined ? {} : { expectedFailure: r.expectedFailure }),
      notes: r.notes,
      requests: r.exchanges.length,
      ...(r.verdict === 'pass' || r.verdict === 'skip' ? {} : { exchanges: r.exchanges })
    }))
  }, null, 2)}\n`
}

/** The flags that replay one failing property: its seed and path, with the run's property runs, that case alone. */
export function caseReplayFlags (id: string, replay: { seed: number, path: string }, runs: number): string {
  return `--seed ${replay.seed} --runs ${runs} --grep ${id} --path ${replay.path}`
}

function yamlString (text: string): string {
  return JSON.stringify(text)
}

/** Text made safe for XML 1.0: markup escaped, and the characters XML cannot carry written as \\uXXXX. */
export function xml (text: string): string {
  return (
    text
      .replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
      // XML 1.0 cannot carry most control characters at all.
      .replace(
        new RegExp(
          '[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\ufffe\\uffff]' +
          // a lone surrogate, either half
          '|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]',
          'g'
        ),
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
      )
  )
}
