import { ORB_ERRORS } from '../../src/orb-mock/errors.js'
import { ORBTILE_ERRORS } from '../../src/orbtile-mock/errors.js'
import { CONTROL_ERRORS } from '../../src/shared/control-error.js'

/** The markers docs/errors.md keeps its generated tables between. */
export const BEGIN = '<!-- errors: generated from the registries by scripts/errors-doc.ts -->'
export const END = '<!-- errors: end -->'

const cell = (text: string): string => text.replace(/\|/g, '\\|')

/** The three tables of docs/errors.md, as the registries hold them today. */
export function errorTables (): string {
  const orbtile = ORBTILE_ERRORS.map((e) => `| \`${e.code}\` | ${e.status} | ${cell(e.when)} |`)
  const orb = Object.entries(ORB_ERRORS).map(([name, e]) => `| ${e.status} | \`${name}\` | ${cell(e.when)} |`)
  const control = Object.entries(CONTROL_ERRORS).map(([code, e]) => `| \`${code}\` | ${e.status} | ${cell(e.when)} |`)
  return [
    '## Orbtile Adapter Protocol (the fake Orbtile)',
    '',
    'Body: `{"error":{"code","message","field?"}}` (OT-149). Registry: `ORBTILE_ERRORS` in `src/orbtile-mock/errors.ts`;',
    'statuses: OT-A01\'s table in `src/spec/orbtile.ts`.',
    '',
    '| code | status | when it fires |',
    '| --- | --- | --- |',
    ...orbtile,
    '',
    '## Orb bot API (the fake Orb)',
    '',
    'Body: `{"error":{"message","code"}}` where `code` is the status itself (ORB-101, ORB-A01). Registry: `ORB_ERRORS`',
    'in `src/orb-mock/errors.ts` (the names are the registry\'s own; the wire carries only the status).',
    '',
    '| status | name | when it fires |',
    '| --- | --- | --- |',
    ...orb,
    '',
    '## Control API (the control server)',
    '',
    'Body: `{"error":{"code","message"}}`. Registry: `CONTROL_ERRORS` in `src/shared/control-error.ts`; the control',
    'OpenAPI document\'s `Error` schema lists the same codes.',
    '',
    '| code | status | when it fires |',
    '| --- | --- | --- |',
    ...control,
    ''
  ].join('\n')
}
