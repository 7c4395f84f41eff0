// A recording replayed against a server, and the report of where that server answered otherwise.
import { basename } from 'node:path'
import type { Recording } from '../../src/proxy/recording.js'
import { parityReport, type ParityReport } from './report.js'
import { replay, type ReplayAddress } from './replay.js'

/** The server a recording is replayed against. */
export interface ParityTarget {
  address: ReplayAddress
  /** Its credential, put where the recording's placeholders for the recorded server's stand. */
  credential: string
  /** The Host header to send instead of the recorded one (an Orb's address); the recorded one when unset. */
  host?: string
  /** What it is, in words, for the report. */
  against: string
}

export async function parity (file: string, recording: Recording, target: ParityTarget): Promise<ParityReport> {
  const replayed = await replay(recording, target.address, target.credential, target.host)
  return parityReport(recording.head.api, basename(file), target.against, replayed)
}
