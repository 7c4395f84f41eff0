import { randomBytes } from 'node:crypto'
import type { ControlClient } from '../core/control.js'
import type { SuiteTransport } from '../core/runner.js'
import { clockWait } from '../core/suite.js'
import { WebhookReceiver } from './receiver.js'
import { discoverTarget, releaseTarget, type OrbTarget } from './target.js'
import { OrbBotClient, orbCurlFor } from './transport.js'

/** A prepared Orb run: its target, the webhook receiver, the transport the runner uses, and what ends it. */
export interface OrbRun {
  target: OrbTarget
  receiver: WebhookReceiver
  transport: SuiteTransport<OrbBotClient>
  /** Deletes the suite's own apps (with control) and stops the receiver. */
  close(): Promise<void>
}

/**
 * Sets an Orb run up: the target from `--config`, or, with orbtest's control API, apps of the suite's own in a
 * community it picks; then the webhook receiver. Throttled requests are waited out on the target's clock (a virtual
 * one is advanced).
 */
export async function prepareOrbRun (options: {
  url: string
  control?: ControlClient
  config?: OrbTarget
}): Promise<OrbRun> {
  const { control } = options
  const url = options.url.replace(/\/+$/, '')
  const target =
    options.config !== undefined
      ? options.config
      : control !== undefined
        ? await discoverTarget(control, url, randomBytes(3).toString('hex'))
        : undefined
  if (target === undefined) throw new Error("an Orb target needs --config FILE, or --control URL for orbtest's fake")
  let receiver: WebhookReceiver
  try {
    receiver = await WebhookReceiver.start(target.webhook.host, target.webhook.port, target.webhook.url)
  } catch (err) {
    await releaseTarget(control, target)
    throw err
  }
  const virtual = control !== undefined && await control.virtualClock()
  const wait = clockWait(control, virtual)
  return {
    target,
    receiver,
    transport: {
      client: () => new OrbBotClient(target, wait, receiver),
      curl: (exchange) => orbCurlFor(exchange, target)
    },
    close: async () => {
      await releaseTarget(control, target)
      await receiver.close()
    }
  }
}
