/**
 * A call's current recovery mode: what may be done with it after a crash. The tool declares it, but
 * the catalog's rules decide what a declaration counts as, so no tool can talk its way into a retry:
 * an answer that is not a known mode, or that contradicts the tool (a mutating tool that calls
 * itself `replay_safe`, a `reconcile` tool without a probe), is `never_auto_retry`.
 */
import { RecoveryMode } from '@maka/events'
import type { Tool } from './Tool.js'

// -------------------------------------------------------------------------------------
// guards
// -------------------------------------------------------------------------------------

/**
 * True when the tool carries both functions of a reconcile probe.
 * @category guards
 */
export const hasReconcileProbe = (tool: Tool): boolean => {
  const probe: unknown = tool.reconcile
  return (
    typeof probe === 'object' &&
    probe !== null &&
    'basis' in probe &&
    typeof probe.basis === 'function' &&
    'probe' in probe &&
    typeof probe.probe === 'function'
  )
}

// -------------------------------------------------------------------------------------
// constructors
// -------------------------------------------------------------------------------------

/**
 * The catalog's rules applied to one declared answer. `mutates` counts as true unless it is `false`,
 * so a malformed flag errs toward caution.
 * @category constructors
 */
export const admittedMode = (tool: Tool, declared: unknown): RecoveryMode => {
  if (!RecoveryMode.is(declared)) return 'never_auto_retry'
  if (declared === 'replay_safe' && tool.mutates !== false) return 'never_auto_retry'
  if (declared === 'reconcile' && !hasReconcileProbe(tool)) return 'never_auto_retry'
  return declared
}

/**
 * The current mode of a call of `tool` with `args`: its `recovery` declaration applied to the args
 * (`never_auto_retry` when absent), after the catalog's rules. A declaration function that throws,
 * or answers anything but a `RecoveryMode`, gives `never_auto_retry`.
 * @category constructors
 */
export const recoveryModeOf = (tool: Tool, args: unknown): RecoveryMode => {
  const declaration = tool.recovery
  if (typeof declaration !== 'function') return admittedMode(tool, declaration ?? 'never_auto_retry')
  try {
    return admittedMode(tool, declaration(args))
  } catch {
    return 'never_auto_retry'
  }
}
