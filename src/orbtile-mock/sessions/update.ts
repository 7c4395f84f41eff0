import { errors, type OrbtileError } from '../errors.js'
import {
  compareKeys, formatField, orderKey, schemaError, schemaFault, stripUnknown, type FieldPath
} from '../validation.js'

/** A session's `approval` (OT-120..130). */
export interface ApprovalRequest {
  id: string
  toolName: string
  commandSummary: string
}

/** A session's `question` (OT-120..130). */
export interface QuestionRequest {
  id: string
  questions: Array<{
    text: string, header?: string, multiSelect?: boolean, options: Array<{ label: string, description?: string }>
  }>
}

/** A valid SessionUpdate: unknown keys dropped, `project` cleaned. Absent keys keep, `null` clears (OT-092). */
export interface SessionPatch {
  title?: string
  activity?: string
  cwd?: string | null
  project?: string | null
  model?: string | null
  toolLabel?: string | null
  toolKind?: string | null
  message?: { id: string, text: string } | null
  statusDetail?: string | null
  subagentCount?: number
  host?: string
  openURL?: string | null
  pid?: number | null
  background?: boolean
  liveText?: boolean
  ttlSeconds?: number
  approval?: ApprovalRequest | null
  question?: QuestionRequest | null
}

/** OT-100: the tool kinds Orbtile knows; any other counts as none, with a warning. */
export const KNOWN_TOOL_KINDS: ReadonlySet<string> = new Set([
  'shell', 'edit', 'read', 'web', 'delegate', 'plan', 'integration', 'other'
])

/**
 * OT-097, OT-A24: the display text of `project`: whitespace runs (newlines too) become one space, C0/C1 controls and
 * format characters (bidi marks among them) go, and the ends are trimmed.
 */
export function cleanProject (text: string): string {
  return text
    .replace(/\s+/gu, ' ')
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/ {2,}/g, ' ')
    .trim()
}

/**
 * Reads one SessionUpdate (OT-089..111): unknown keys dropped and reported (`unknown-field: <path>`), `project`
 * cleaned before the schema counts it (OT-A24), then the spec's schema. `prefix` places fields inside a batch
 * (`sessions[2]`). Throws the first invalid_field. Rules that need the session or the registration are checked
 * when the patch is applied.
 */
export function readSessionUpdate (raw: unknown, prefix: FieldPath = []): { patch: SessionPatch, warnings: string[] } {
  const { value, unknown } = stripUnknown('SessionUpdate', raw)
  const body = value as Record<string, unknown>
  if (typeof body.project === 'string') body.project = cleanProject(body.project)
  const invalid = schemaError('SessionUpdate', body, prefix)
  if (invalid !== undefined) throw invalid
  const patch = body as SessionPatch
  const warnings = unknown.map((path) => `unknown-field: ${formatField([...prefix, ...path.split('.')])}`)
  if (typeof patch.toolKind === 'string' && !KNOWN_TOOL_KINDS.has(patch.toolKind)) {
    warnings.push(`tool-kind: unknown ${JSON.stringify(patch.toolKind)} treated as none`)
  }
  return { patch, warnings }
}

/** A valid SessionBatch: its items (each still a raw SessionUpdate plus `id`), their ids, and its warnings. */
export interface BatchRead {
  items: Array<Record<string, unknown> & { id: string }>
  ids: Set<string>
  /** `unknown-field: <path>` for each key dropped outside the items (the items report theirs when read). */
  warnings: string[]
}

/**
 * Reads a `PUT /adapters/{id}/sessions` body (OT-114..119, OT-A19, OT-A25): unknown keys dropped, each item's
 * `project` cleaned (OT-A24), then the spec's schema and the rule that no id is listed twice; of the faults, the
 * first in the body's order answers. Each item is read as a SessionUpdate (readSessionUpdate) when applied.
 */
export function readSessionBatch (raw: unknown): BatchRead {
  const { value, unknown } = stripUnknown('SessionBatch', raw)
  const body = value as { sessions?: Array<Record<string, unknown>> }
  const listed = Array.isArray(body.sessions) ? body.sessions : []
  for (const item of listed) {
    if (item !== null && typeof item === 'object' && typeof item.project === 'string') {
      item.project = cleanProject(item.project)
    }
  }
  // OT-A25: a duplicate id and a schema fault are ranked by where they stand in the body.
  const faults: Array<{ at: number[], error: OrbtileError }> = []
  const fault = schemaFault('SessionBatch', body)
  if (fault !== undefined) faults.push({ at: orderKey(body, fault.path), error: fault.error })
  const ids = new Set<string>()
  for (const [i, item] of listed.entries()) {
    const id = (item as { id?: unknown } | null)?.id
    if (typeof id !== 'string') continue
    if (ids.has(id)) {
      const error = errors.invalidField(`sessions[${i}].id`, `session ${id} is listed twice`)
      faults.push({ at: orderKey(body, ['sessions', i, 'id']), error })
      break
    }
    ids.add(id)
  }
  faults.sort((a, b) => compareKeys(a.at, b.at))
  if (faults[0] !== undefined) throw faults[0].error
  return {
    items: body.sessions as BatchRead['items'],
    ids,
    warnings: unknown.map((path) => `unknown-field: ${path}`)
  }
}

/** OT-102, OT-A24: keep the last 4096 UTF-8 bytes of `text`, cut so that no code point is split. */
export function keepLastBytes (text: string, limit = 4096): string {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= limit) return text
  let start = bytes.length - limit
  // Skip continuation bytes (10xxxxxx) to land on the first complete code point.
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++
  return bytes.subarray(start).toString('utf8')
}
