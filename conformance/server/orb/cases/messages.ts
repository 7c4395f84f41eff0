import type { OrbFault } from '../../../../src/orb-mock/faults.js'
import type { ConformanceCase } from '../../core/case.js'
import type { OrbBotClient } from '../transport.js'
import { decisionCases } from './messages/decisions.js'
import { deletingCases } from './messages/deleting.js'
import { pagingCases } from './messages/paging.js'
import { postingCases } from './messages/posting.js'
import { readingCases } from './messages/reading.js'
import { refusedPostCases } from './messages/refused-posts.js'
import { throttleCases } from './messages/throttles.js'

/*
 * Messages (ORB-023..042; decisions ORB-A02, ORB-A03, ORB-A20, ORB-A21): posting, reading, deleting and the post
 * throttles. Every post a case makes is deleted when the case ends; refused posts leave nothing to clean. Members'
 * messages (control only) cannot be deleted by anyone through the API: cases post them only where no existing one
 * will do. The cases live in messages/, one file per sub-area; this is their order in a run.
 */

export const messagesCases: Array<ConformanceCase<OrbBotClient>> = [
  ...postingCases,
  ...refusedPostCases,
  ...throttleCases,
  ...pagingCases,
  ...readingCases,
  ...deletingCases,
  ...decisionCases
]

/** Which cases each fault of the fake Orb must make fail. */
export const messagesFaults: Partial<Record<OrbFault, string[]>> = {
  'everyone-allowed': ['ORB-026', 'ORB-A02'],
  'retry-after-early': ['ORB-031', 'ORB-031.app', 'ORB-A03'],
  'paging-includes-before': ['ORB-034.model', 'ORB-033']
}
