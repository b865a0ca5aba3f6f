/**
 * The session read model as the CLI prints it: `@maka/executor`'s catalog reads (over
 * `@maka/planner`'s session queries) with each ledger timeline narrated by `eventSummary`. The rules
 * — which run is latest, what "interrupted" means, the lineage tree — live in the planner.
 */
import type * as E from 'fp-ts/lib/Either.js'
import type { SessionRecord } from '@maka/events'
import {
  type RunDetail as CatalogRunDetail,
  type SessionDetail as CatalogSessionDetail,
  loadSessionDetail as loadCatalogDetail,
} from '@maka/executor'
import type { StorePorts } from '@maka/stores'
import { type EventSummary, makeEventNarrator } from './eventSummary.js'

/**
 * One run of `maka show`.
 * @category models
 */
export type RunDetail = CatalogRunDetail<EventSummary>

/**
 * A session of `maka show`.
 * @category models
 */
export type SessionDetail = CatalogSessionDetail<EventSummary>

/**
 * A session's runs as a lineage tree, each ledger narrated as a timeline.
 * @category constructors
 */
export const loadSessionDetail = (
  stores: StorePorts,
  session: SessionRecord,
): Promise<E.Either<string, SessionDetail>> =>
  loadCatalogDetail(stores, session, () => {
    const narrator = makeEventNarrator()
    return (event) => narrator.summarize(event)
  })
