import { AsyncLocalStorage } from 'node:async_hooks'

// Error statuses the spec leaves open are orbtest's decisions (OT-A01, ORB-A01, ORB-A02). Required cases hold a server
// to the spec only; decision cases and --strict runs hold it to the decisions too. The runner runs each case inside
// `withExactStatus`, and every suite's expectations read it: the setting belongs to the case being run (even with two
// runs in one process), not to this module.
const exact = new AsyncLocalStorage<boolean>()

/** Whether statuses (and other details) decided by orbtest are enforced in the case now running (outside one: yes). */
export function exactStatus (): boolean {
  return exact.getStore() ?? true
}

/** Runs `fn` (a case's body) with decided details enforced or not. */
export function withExactStatus<T> (value: boolean, fn: () => Promise<T>): Promise<T> {
  return exact.run(value, fn)
}
