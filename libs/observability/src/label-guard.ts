/**
 * Caps the distinct values of one metric label (tool names, orgs): the first `max` seen are kept,
 * any later one is reported as `other`, so a tenant with thousands of tools cannot blow up the
 * time series a Prometheus scrapes.
 */
export class LabelGuard {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  value(label: string): string {
    if (this.seen.has(label)) return label;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(label);
    return label;
  }
}
