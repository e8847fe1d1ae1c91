/**
 * The `alerts` array of GET /pools/default: the alerts Couchbase itself raised and nobody has dismissed in its web
 * console yet (disk nearly full, auto-failover performed or not possible, node time out of sync…). An entry is a
 * message string (3.x answers) or an object with `msg` and `serverTime` (7.x); the answer names no kind, so the
 * kind comes from the message, matched against the formats ns_server writes them in
 * (src/menelaus_web_alerts_srv.erl `errors/1`, and src/auto_failover.erl for auto-failover). The kinds are a
 * fixed list, `other` for any message none of them matches, so the `kind` label stays bounded whatever a
 * future version writes. The message text itself never becomes a label: it goes, redacted and shortened, to the
 * landing page only.
 */

/** Each kind, with the start (or the distinctive part) of the message ns_server writes for it. */
const KIND_PATTERNS: ReadonlyArray<readonly [kind: string, pattern: RegExp]> = [
  ['disk_nearly_full', /^Approaching full disk warning\b/],
  ['metadata_overhead', /^Metadata overhead warning\b/],
  ['bucket_out_of_memory', /^Hard out-of-memory error\b/],
  ['write_commit_failed', /^Write Commit Failure\b/],
  ['audit_write_failed', /^Audit Write Failure\b/],
  ['index_ram_nearly_full', /^Warning: approaching max index RAM\b/],
  ['cas_drift', /^Remote or replica mutation received for bucket .* ahead of local clock/s],
  ['communication_issue', /^Warning: Node .* is having issues communicating with following nodes/s],
  ['time_out_of_sync', /^The time on node .* is not synchronized/s],
  ['disk_usage_analyzer_stuck', /^Disk usage worker is stuck\b/],
  ['certificate_expired', /certificate .*\bhas expired\.?$/is],
  ['certificate_expires_soon', /certificate .*\bwill expire at\b/is],
  ['memory_threshold', /^(CRITICAL|Warning|Notice): On node .* memory use is .* of total available memory/s],
  ['ip_changed', /^IP address seems to have changed\b/],
  ['auto_failover_performed', /\b(was|were) automatically failed over\b/],
  ['auto_failover_not_possible', /^Could not auto(matically fail over|-failover)\b/],
];

/** Every value of the `kind` label, in the order of the docs: the known kinds, then `other`. */
export const CLUSTER_ALERT_KINDS: readonly string[] = [...KIND_PATTERNS.map(([k]) => k), 'other'];

/** The kind of one alert message; `other` when none of the known formats matches. */
export function clusterAlertKind(message: string): string {
  for (const [kind, pattern] of KIND_PATTERNS) if (pattern.test(message)) return kind;
  return 'other';
}

/** The message of one entry of the array (a string, or an object's `msg`); undefined for anything else. */
export function clusterAlertMessage(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  const msg = (entry as { msg?: unknown } | null | undefined)?.msg;
  return typeof msg === 'string' ? msg : undefined;
}
