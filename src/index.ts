/** orbtest's in-process API: start the fakes, drive them, stop them. */
export { startOrbtest, type Orbtest, type OrbtestOptions, type ReadyInfo } from './orbtest.js'
export {
  startOrbtileMock,
  type OrbtileMock,
  type OrbtileMockOptions,
  type OrbtileControl,
  type OrbtileState,
  type ApiSwitch
} from './orbtile-mock/index.js'
export { startControlServer, type ControlServer, type ControlServerOptions } from './control/index.js'
export {
  createClock,
  RealClock,
  VirtualClock,
  ClockNotVirtualError,
  type Clock,
  type ClockState
} from './shared/clock.js'
export { StartupError } from './shared/startup-error.js'
