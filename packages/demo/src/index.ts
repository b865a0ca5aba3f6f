/**
 * @maka/demo — the narrated crash drill behind `maka demo`: a scripted turn in a child process is
 * SIGKILLed at a crash point, then recovered, planned, continued (or parked) and its lineage read,
 * each step judged against the contract. The host starts the child, builds the runtime and renders
 * the steps; the scenario and its judgements are here.
 */
export {
  type DemoChildMessage,
  type DemoChildSpec,
  type DemoCrashPoint,
  type DemoDetail,
  type DemoHost,
  type DemoOptions,
  type DemoReport,
  type DemoRuntimeChoice,
  type DemoStepOutcome,
  type Lineage,
  type LineageRun,
  DEMO_PROMPT,
  runDemo,
} from './runDemo.js'
