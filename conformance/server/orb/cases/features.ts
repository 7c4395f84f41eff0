import type { OrbFault } from '../../../../src/orb-mock/faults.js'
import { commandCases } from './features/commands.js'
import { commandUseCases } from './features/commands-use.js'
import { musicCases } from './features/music.js'
import { passportCases } from './features/passport.js'
import type { Case } from './features/features-support.js'
import { voiceCases } from './features/voice.js'

/*
 * Commands (ORB-055..064, ORB-A15), voice (ORB-073..080, ORB-A16, ORB-A08's voice rows), the room player (ORB-081..084,
 * ORB-A17) and passport checks (ORB-085..089, ORB-A18). Details only orbtest's decisions fix are held where
 * `exactStatus` is on: in decision cases, and in every case of a --strict run.
 */

export const featuresCases: Case[] = [
  ...commandCases,
  ...commandUseCases,
  ...voiceCases,
  ...musicCases,
  ...passportCases
]

/** Which cases each fault of the fake Orb must make fail. */
export const featuresFaults: Partial<Record<OrbFault, string[]>> = {
  'sync-merges': ['ORB-056', 'ORB-056.model'],
  'holds-ignores-minimum': ['ORB-087'],
  'seat-never-dropped': ['ORB-076'],
  'music-scope-unchecked': ['ORB-084'],
  // Waiting out a Retry-After one second short meets a 429 again.
  'retry-after-early': ['ORB-060']
}
