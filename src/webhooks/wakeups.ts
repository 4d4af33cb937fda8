// How a committed write wakes the delivery workers without waiting for their poll: in its own
// process through announceDeliveriesQueued (called after the commit), in other processes sharing
// a PostgreSQL database through NOTIFY on DELIVERY_CHANNEL (which PostgreSQL sends at commit).
// Processes sharing a SQLite file find the work at their next poll.

/** The PostgreSQL notification channel of queued deliveries. */
export const DELIVERY_CHANNEL = 'sitebiz_webhook_deliveries';

const listeners = new Set<() => void>();

/** Calls `listener` whenever deliveries were queued by a commit of this process; returns the unsubscribe. */
export function onDeliveriesQueued(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function announceDeliveriesQueued(): void {
  for (const listener of listeners) listener();
}
