// The group a timed part registers its tests on (test/_timed.test.ts enters it before it imports the part): the
// parts' runs start when their group begins, one group after another.
import type { Test } from 'tap'

let current: Test | undefined

export function enter (t: Test): void {
  current = t
}

export function group (): Test {
  if (current === undefined) throw new Error('a timed part is imported by test/_timed.test.ts, in its group')
  return current
}
