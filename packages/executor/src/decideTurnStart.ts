/**
 * The first rows of a normal turn, decided as data: the `created` header and the initial user
 * event. Time, ids and the provider's identity arrive as inputs, so the decision is pure; the
 * performer writes them in the contract's order.
 */
import {
  type AbsolutePath,
  type AgentRun,
  type IsoTimestamp,
  NonEmptyString,
  type PermissionMode,
  type RowStamp,
  type RunId,
  type RuntimeEvent,
  type SessionId,
  makeInitialUserEvent,
  withProtocolMarker,
  makeNonEmptyStringUnsafe,
} from '@maka/events'

/**
 * The model a run is recorded against; the endpoint lets a resume build the same provider.
 * @category models
 */
export interface ProviderIdentity {
  readonly providerId: NonEmptyString
  readonly modelId: NonEmptyString
  readonly providerBaseUrl?: NonEmptyString
}

/**
 * The provider port's identity, branded once where it enters a run. A local model has no endpoint,
 * and an empty one is not recorded. An empty provider or model id is not checked here: the store's
 * header check refuses it (`store_failed`, nothing of the run written), as it always did.
 * @category constructors
 */
export const providerIdentityOf = (provider: {
  readonly providerId: string
  readonly modelId: string
  readonly baseUrl?: string | undefined
}): ProviderIdentity => ({
  providerId: makeNonEmptyStringUnsafe(provider.providerId),
  modelId: makeNonEmptyStringUnsafe(provider.modelId),
  ...(NonEmptyString.is(provider.baseUrl) ? { providerBaseUrl: provider.baseUrl } : {}),
})

/**
 * What a normal turn's start is decided from.
 * @category models
 */
export interface TurnStartInput {
  readonly sessionId: SessionId
  readonly runId: RunId
  readonly turnId: NonEmptyString
  readonly invocationId: NonEmptyString
  readonly cwd: AbsolutePath
  /** The workspace's identity when the host could read it (whatever the resume flag). */
  readonly workspaceIdentity?: NonEmptyString | undefined
  readonly provider: ProviderIdentity
  /** How the run authorises tool calls that change the workspace; recorded in its header. */
  readonly permissionMode?: PermissionMode
  readonly prompt: string
  readonly createdAt: IsoTimestamp
  /** The stamp of the run's first row. */
  readonly stamp: RowStamp
  /** The run writes the tool journal: its first row carries the protocol marker. */
  readonly protocol?: boolean
}

/**
 * The writes that open a normal turn.
 * @category models
 */
export interface TurnStart {
  readonly header: AgentRun
  readonly initialUser: RuntimeEvent
}

/**
 * Decides the header and the initial user event of a normal turn.
 * @category constructors
 */
export const decideTurnStart = (input: TurnStartInput): TurnStart => {
  const header: AgentRun = {
    runId: input.runId,
    sessionId: input.sessionId,
    turnId: input.turnId,
    invocationId: input.invocationId,
    status: 'created',
    cwd: input.cwd,
    ...input.provider,
    createdAt: input.createdAt,
    updatedAt: input.createdAt,
    ...(input.workspaceIdentity === undefined ? {} : { workspaceIdentity: input.workspaceIdentity }),
    ...(input.permissionMode === undefined ? {} : { permissionMode: input.permissionMode }),
  }
  const initialUser = makeInitialUserEvent(header, input.stamp, input.prompt)
  return { header, initialUser: input.protocol === true ? withProtocolMarker(initialUser) : initialUser }
}
