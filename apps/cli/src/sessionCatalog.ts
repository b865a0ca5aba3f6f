/**
 * The session read model as the CLI prints it: `@maka/sessions`' session outline with each ledger
 * timeline narrated by `eventSummary`. The rules — which run is latest, what "interrupted" means, the
 * lineage tree — live in `@maka/sessions` (the run order in `@maka/planner`, shared with "latest").
 */
import type * as E from 'fp-ts/lib/Either.js'
import type { SessionRecord } from '@maka/events'
import { type SessionOutline as CatalogSessionOutline, loadSessionOutline as loadCatalogOutline } from '@maka/sessions'
import type { StorePorts } from '@maka/stores'
import { type EventSummary, makeEventNarrator } from './eventSummary.js'

/**
 * A session of `maka show`.
 * @category models
 */
export type SessionOutline = CatalogSessionOutline<EventSummary>

/**
 * A session's runs as a lineage tree, each ledger timeline narrated as it streams.
 * @category constructors
 */
export const loadSessionOutline = (
  stores: StorePorts,
  session: SessionRecord,
): Promise<E.Either<string, SessionOutline>> =>
  loadCatalogOutline(stores, session, () => {
    const narrator = makeEventNarrator()
    return (event) => narrator.summarize(event)
  })
