import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** One allow-list entry, parsed. */
export interface AllowedRange {
  readonly cidr: string;
  readonly network: IpAddress;
  readonly prefixLength: number;
}

/** An allow-list entry is not a CIDR (`a.b.c.d/n` or `ipv6/n`, address in standard notation). */
export class EgressPolicyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EgressPolicyError';
  }
}

/** IANA's global unicast allocation for IPv6 (2000::/3): IPv6 outside it is never public unicast. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

const PREFIX_PATTERN = /^(?:0|[1-9]\d{0,2})$/;

/**
 * Parses an address in strict standard notation only: dotted-quad decimal IPv4 or IPv6 without a zone id.
 * Shorthand, octal or hex IPv4 forms (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`) and zone ids
 * (`fe80::1%eth0`) are `undefined`, i.e. never allowed.
 */
export const parseStrictAddress = (address: string): IpAddress | undefined => {
  const version = isIP(address);
  if (version === 0 || address.includes('%')) return undefined;
  if (version === 4 && !ipaddr.IPv4.isValidFourPartDecimal(address)) return undefined;
  try {
    return ipaddr.parse(address);
  } catch {
    return undefined;
  }
};

/** Parses allow-list CIDRs; throws `EgressPolicyError` on the first entry that is not a CIDR. */
export const parseAllowedCidrs = (cidrs: readonly string[]): readonly AllowedRange[] =>
  cidrs.map((cidr) => {
    const slash = cidr.lastIndexOf('/');
    const network = slash > 0 ? parseStrictAddress(cidr.slice(0, slash)) : undefined;
    const prefix = cidr.slice(slash + 1);
    const prefixLength = Number(prefix);
    const maxPrefixLength = network instanceof ipaddr.IPv6 ? 128 : 32;
    if (network === undefined || !PREFIX_PATTERN.test(prefix) || prefixLength > maxPrefixLength) {
      throw new EgressPolicyError(`allowed CIDR ${JSON.stringify(cidr)} is not a valid IPv4 or IPv6 CIDR`);
    }
    return { cidr, network, prefixLength };
  });

const inRange = (address: IpAddress, range: AllowedRange): boolean =>
  address.kind() === range.network.kind() && address.match(range.network, range.prefixLength);

/** `isAddressAllowed` over pre-parsed allow-list ranges (the client parses its policy once). */
export const isParsedAddressAllowed = (address: string, allowed: readonly AllowedRange[]): boolean => {
  const parsed = parseStrictAddress(address);
  if (parsed === undefined) return false;
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) {
    // Judged as its IPv4 address, and only against IPv4 allow-list entries: never as public unicast.
    const ipv4 = parsed.toIPv4Address();
    return allowed.some((range) => inRange(ipv4, range));
  }
  if (allowed.some((range) => inRange(parsed, range))) return true;
  if (parsed.range() !== 'unicast') return false;
  return parsed instanceof ipaddr.IPv4 || parsed.match(IPV6_GLOBAL_UNICAST);
};

/** Whether `address` is inside one of `allowedCidrs` (an allow-list entry only: never as public unicast). */
export const isInsideAllowedCidrs = (address: string, allowedCidrs: readonly string[]): boolean => {
  const parsed = parseStrictAddress(address);
  if (parsed === undefined) return false;
  const target =
    parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  return parseAllowedCidrs(allowedCidrs).some((range) => inRange(target, range));
};

/**
 * Whether a webhook may connect to `address` (C17). True only for
 * - a public unicast address: ipaddr.js range `unicast` (so no loopback, private, link-local incl.
 *   169.254.169.254 and fd00:ec2::254, carrier-grade NAT, unique local, IPv4-mapped, RFC 6145, NAT64
 *   64:ff9b::/96, 6to4, Teredo, multicast, unspecified, broadcast, reserved, benchmarking, …) and, for IPv6,
 *   inside 2000::/3 (which also refuses IPv4-compatible `::a.b.c.d` and other unassigned space), or
 * - an address inside one of `allowedCidrs`.
 *
 * An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is allowed only when its IPv4 address is inside an IPv4
 * allow-list entry. Anything that is not an address in strict standard notation (see `parseStrictAddress`) is
 * refused. Throws `EgressPolicyError` when an allow-list entry is not a CIDR.
 */
export const isAddressAllowed = (address: string, allowedCidrs: readonly string[]): boolean =>
  isParsedAddressAllowed(address, parseAllowedCidrs(allowedCidrs));
