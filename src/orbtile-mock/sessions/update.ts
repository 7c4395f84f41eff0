import { formatField, schemaError, stripUnknown, type FieldPath } from '../validation.js'

export interface ApprovalRequest {
  id: string
  toolName: string
  commandSummary: string
}

export interface QuestionRequest {
  id: string
  questions: Array<{ text: string, header?: string, multiSelect?: boolean, options: Array<{ label: string, description?: string }> }>
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
export const KNOWN_TOOL_KINDS: ReadonlySet<string> = new Set(['shell', 'edit', 'read', 'web', 'delegate', 'plan', 'integration', 'other'])

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

/** OT-102, OT-A24: keep the last 4096 UTF-8 bytes of `text`, cut so that no code point is split. */
export function keepLastBytes (text: string, limit = 4096): string {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= limit) return text
  let start = bytes.length - limit
  // Skip continuation bytes (10xxxxxx) to land on the first complete code point.
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++
  return bytes.subarray(start).toString('utf8')
}
