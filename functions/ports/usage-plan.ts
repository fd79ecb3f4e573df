/**
 * The per-key throttle of caller keys (C26). In AWS the usage plan counts requests by the usage identifier the
 * authorizer returns (the SHA-256 of the presented key), which must be an API key of the plan: every live
 * secret's identifier is registered, and removed once the secret stops working.
 */
export interface CallerUsagePlan {
  /** Makes requests with this identifier count (and pass) in the usage plan. Repeating it is harmless. */
  register(usageIdentifier: string): Promise<void>;
  /** Removes identifiers of secrets that no longer work; unknown ones are ignored. */
  remove(usageIdentifiers: readonly string[]): Promise<void>;
}
