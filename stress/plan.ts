// Which request a run sends at each index: a pure function of the seed and the index, so that a run replays
// exactly, whole (--seed) or one request at a time (--only).
import fc from 'fast-check'
import type { Draft } from './draft.js'
import { controlDraft, orbDraft } from './gen-http.js'
import { orbtileDraft } from './gen-orbtile.js'
import { mutationArbitrary } from './mutate.js'
import { rawArbitrary, type RawPlan } from './raw.js'
import type { ServerName } from './targets.js'

/** The two lanes: whole requests on kept-alive connections, and raw scenarios on fresh ones. */
export type Lane = 'structured' | 'raw'

/** How a run mixes its requests. */
export interface Mix {
  servers: readonly ServerName[]
  /** The share of indices that are raw scenarios. */
  rawShare: number
  /** The share of whole requests that are mutated. */
  mutatedShare: number
}

/** A 32-bit mix of a seed, an index and a salt (murmur3's finaliser): the same numbers give the same value. */
export function hash32 (seed: number, index: number, salt: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** The lane of an index. */
export function laneOf (seed: number, index: number, mix: Mix): Lane {
  return hash32(seed, index, 1) / 2 ** 32 < mix.rawShare ? 'raw' : 'structured'
}

/** The generators of one run: what each index of each lane is. */
export class Planner {
  readonly seed: number
  readonly mix: Mix
  readonly #structured: fc.Arbitrary<Draft>
  readonly #raw: fc.Arbitrary<RawPlan>

  constructor (seed: number, mix: Mix, where: { basePath: string, receiverUrl: string }) {
    this.seed = seed
    this.mix = mix
    const valid: Record<ServerName, fc.Arbitrary<Draft>> = {
      orbtile: orbtileDraft(where.basePath),
      orb: orbDraft(),
      control: controlDraft(where.receiverUrl)
    }
    const mutated = (server: ServerName): fc.Arbitrary<Draft> =>
      fc.tuple(valid[server], mutationArbitrary).map(([draft, mutation]) => ({ ...draft, mutation }))
    const weight = Math.round(mix.mutatedShare * 100)
    const any = (server: ServerName): fc.Arbitrary<Draft> => fc.oneof(
      { weight: 100 - weight, arbitrary: valid[server] },
      { weight, arbitrary: mutated(server) }
    )
    this.#structured = fc.constantFrom(...mix.servers).chain(any)
    this.#raw = rawArbitrary(mix.servers, any,
      (server) => valid[server].filter((draft) => draft.body !== undefined && draft.holdMs === undefined))
  }

  /** The lane of an index. */
  lane (index: number): Lane {
    return laneOf(this.seed, index, this.mix)
  }

  /** The whole request at a structured index. */
  structured (index: number): Draft {
    return fc.sample(this.#structured, { seed: hash32(this.seed, index, 2) | 0, numRuns: 1 })[0]!
  }

  /** The raw scenario at a raw index. */
  raw (index: number): RawPlan {
    return fc.sample(this.#raw, { seed: hash32(this.seed, index, 3) | 0, numRuns: 1 })[0]!
  }
}

/** Hands out the indices of one lane in order, until the count, the list or the time runs out. */
export function laneCursor (planner: Planner, lane: Lane, total: number, only: readonly number[] | undefined,
  deadline: number): () => number | undefined {
  const indices = only?.filter((i) => planner.lane(i) === lane)
  let at = 0
  let next = 0
  return () => {
    if (Date.now() >= deadline) return undefined
    if (indices !== undefined) return indices[at++]
    while (next < total && planner.lane(next) !== lane) next++
    return next < total ? next++ : undefined
  }
}
