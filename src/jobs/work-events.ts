import { payloadsFromRows } from '../events/event-codec';
import { asyncWorkOfRow } from './work-ledger';

/*
 * The news of a statement that writes a unit of work carries its row (src/events/change-news.ts): every process with
 * a job engine (every role) builds `async-work.updated` from that row by the ledger's one definition. Apart from
 * work-ledger.ts, which the event topics name for their payload type.
 */
payloadsFromRows('async-work.updated', asyncWorkOfRow);
