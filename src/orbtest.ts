import type { FastifyServerOptions } from 'fastify'
import { advanceClock, clockState, createClock, type Clock, type ClockMode, type ClockState } from './shared/clock.js'
import { startControlServer, type ControlServer } from './control/index.js'
import { startOrbtileMock, type OrbtileMock, type OrbtileMockOptions } from './orbtile-mock/index.js'
import type { OrbMock, OrbMockOptions } from './orb-mock/index.js'

export interface OrbtestOptions {
  /** Run the fake Orbtile (default true). */
  orbtile?: boolean | Omit<OrbtileMockOptions, 'clock' | 'clockMode' | 'logger'>
  /** Run the fake Orb (default true) on 127.0.0.1:8787 unless told otherwise. */
  orb?: boolean | Omit<OrbMockOptions, 'clock' | 'logger'>
  /** Control server port on 127.0.0.1; 0 picks a free one. Default 8788. */
  controlPort?: number
  clockMode?: ClockMode
  /** Where a virtual clock starts (epoch ms); default now. */
  clockStart?: number
  logger?: FastifyServerOptions['logger']
  /** `--judge`: the verdicts so far, served at `GET /control/judge`. */
  judge?: () => unknown
}

/** What `--ready-file` receives once every listener is up. Never a secret. */
export interface ReadyInfo {
  orbtile?: { discovery: string, socketPath: string, basePath: string }
  orb?: { url: string }
  control: { url: string }
}

/** Every fake of one `orbtest up`, sharing one clock, with the control server in front of them. */
export interface Orbtest {
  readonly clock: Clock
  readonly orbtile: OrbtileMock | undefined
  readonly orb: OrbMock | undefined
  readonly control: ControlServer
  ready(): ReadyInfo
  /** `POST /control/reset`: every fake back to a fresh start. */
  reset(): Promise<void>
  /** `GET /control/clock` */
  clockState(): ClockState
  /** `POST /control/clock/advance`: moves the shared virtual clock; a real one throws ClockNotVirtualError. */
  advance(ms: number): Promise<ClockState>
  close(): Promise<void>
}

/** The in-process twin of `orbtest up`. */
export async function startOrbtest (options: OrbtestOptions = {}): Promise<Orbtest> {
  const clock = createClock(options.clockMode ?? 'real', options.clockStart)
  const started: Array<{ close(): Promise<void> }> = []
  try {
    let orbtile: OrbtileMock | undefined
    if (options.orbtile !== false) {
      const own = typeof options.orbtile === 'object' ? options.orbtile : {}
      orbtile = await startOrbtileMock({ ...own, clock, logger: options.logger })
      started.push(orbtile)
    }
    let orb: OrbMock | undefined
    if (options.orb !== false) {
      const own = typeof options.orb === 'object' ? options.orb : {}
      // Loaded only when the fake Orb runs: `orbtest orbtile` starts faster without it.
      const { startOrbMock } = await import('./orb-mock/index.js')
      orb = await startOrbMock({ ...own, clock, logger: options.logger })
      started.push(orb)
    }
    const control = await startControlServer({
      clock,
      orbtile,
      orb,
      port: options.controlPort,
      logger: options.logger,
      ...(options.judge === undefined ? {} : { judge: options.judge }),
    })
    started.push(control)
    return {
      clock,
      orbtile,
      orb,
      control,
      ready: () => ({
        ...(orbtile === undefined
          ? {}
          : {
              orbtile: { discovery: orbtile.discoveryPath, socketPath: orbtile.socketPath, basePath: orbtile.basePath }
            }),
        ...(orb === undefined ? {} : { orb: { url: orb.url } }),
        control: { url: control.url }
      }),
      reset: async () => {
        await orbtile?.control.reset()
        orb?.control.reset()
      },
      clockState: () => clockState(clock),
      advance: (ms) => advanceClock(clock, ms),
      close: async () => {
        await Promise.allSettled(started.reverse().map((service) => service.close()))
        clock.dispose()
      }
    }
  } catch (err) {
    await Promise.allSettled(started.reverse().map((service) => service.close()))
    clock.dispose()
    throw err
  }
}
