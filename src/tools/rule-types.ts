/** The shape of a Prometheus rules file and of an area's alert fragment (alerts/rules/<area>.yml + runbook). */

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly keep_firing_for?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
  readonly labels?: Readonly<Record<string, string>>;
}

export type Rule = AlertingRule | RecordingRule;

export interface RuleGroup {
  readonly name: string;
  readonly interval?: string;
  readonly limit?: number;
  readonly rules: readonly Rule[];
}

export interface Fragment {
  /** File stem: alerts/rules/<area>.yml. */
  readonly area: string;
  readonly groups: readonly RuleGroup[];
  /** alerts/runbook/<area>.md, when present. */
  readonly runbook: string | undefined;
}
