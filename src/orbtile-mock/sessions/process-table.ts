import { readFileSync } from 'node:fs'

/** OT-108, OT-A16: answers whether a pid is a live process of the user the fake runs as. */
export type ProcessCheck = (pid: number) => boolean

/**
 * The real process table. On Linux the owner comes from `/proc/<pid>/status`; elsewhere a signal-0 probe
 * (which succeeds for the user's own processes, and for every process when running as root).
 */
export const realProcessCheck: ProcessCheck = (pid) => {
  const uid = process.getuid?.()
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const owner = /^Uid:\s+(\d+)/m.exec(status)?.[1]
    // /proc also answers for thread ids; a process is a thread group leader (Tgid = Pid).
    const group = /^Tgid:\s+(\d+)/m.exec(status)?.[1]
    return owner !== undefined && group === String(pid) && (uid === undefined || Number(owner) === uid)
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT' && process.platform === 'linux') return false
  }
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** `--pid-check off`: every pid passes, for adapters tested away from the processes they name. */
export const anyProcess: ProcessCheck = () => true
