/**
 * The sampling of a simulated 7.0+ node's own Prometheus, shared by the native model (native.ts) and the service
 * statistics (services.ts) without either importing the other.
 */

/** Seconds between two scrapes of a node's Prometheus. */
export const SCRAPE_SECONDS = 10;
/** Seconds of history a node's Prometheus holds before the simulator started. */
export const HISTORY_SECONDS = 600;
