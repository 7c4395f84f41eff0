import { isUtf8 } from 'node:buffer'

/** Why a request body is not a JSON object. */
export type JsonBodyFault = 'empty' | 'utf8' | 'syntax' | 'duplicate-key' | 'not-object'

/** The parsed object, or why the body is not one. */
export type JsonBodyResult =
  | { ok: true, value: Record<string, unknown>, text: string }
  | { ok: false, fault: JsonBodyFault, detail: string }

/**
 * Parses a request body that must be one JSON object (OT-154, OT-A05): strict UTF-8, valid JSON, no duplicate keys
 * at any depth, and an object at the top. Never throws.
 */
export function parseJsonObject (bytes: Buffer): JsonBodyResult {
  if (bytes.length === 0) return { ok: false, fault: 'empty', detail: 'the body is empty; send a JSON object' }
  // A native check, then a plain decode: Buffer#toString alone would turn bad bytes into U+FFFD silently.
  if (!isUtf8(bytes)) return { ok: false, fault: 'utf8', detail: 'the body is not valid UTF-8' }
  const text = bytes.toString('utf8')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { ok: false, fault: 'syntax', detail: `the body is not valid JSON: ${(err as Error).message}` }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, fault: 'not-object', detail: `the body must be a JSON object, not ${describe(value)}` }
  }
  const duplicate = findDuplicateKey(text)
  if (duplicate !== undefined) {
    return { ok: false, fault: 'duplicate-key', detail: `the body repeats the key ${JSON.stringify(duplicate)}` }
  }
  return { ok: true, value: value as Record<string, unknown>, text }
}

function describe (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

/**
 * Returns the first key that an object in `text` repeats, if any. `text` must already be valid JSON: the scan
 * only tracks strings, nesting and whether the next string in an object is a key. Keys compare by their decoded
 * value (`"a"` and `"\u0061"` are the same key).
 */
export function findDuplicateKey (text: string): string | undefined {
  // One frame per open container: a Set of keys for objects, null for arrays.
  const stack: Array<Set<string> | null> = []
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22 /* " */) {
      const end = endOfString(text, i)
      const top = stack[stack.length - 1]
      if (expectKey && top) {
        const key = JSON.parse(text.slice(i, end + 1)) as string
        if (top.has(key)) return key
        top.add(key)
      }
      expectKey = false
      i = end
    } else if (c === 0x7b /* { */) {
      stack.push(new Set())
      expectKey = true
    } else if (c === 0x5b /* [ */) {
      stack.push(null)
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop()
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] != null
    }
  }
  return undefined
}

// Where the string that opens at `start` closes: the index of its closing quote.
function endOfString (text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x5c /* \ */) i++
    else if (c === 0x22) return i
  }
  return text.length - 1
}
