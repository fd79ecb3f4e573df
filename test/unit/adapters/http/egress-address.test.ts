import { describe, expect, it } from 'vitest';
import { parseStrictAddress } from '../../../../functions/adapters/http/egress-address';
import { EgressPolicyError, isAddressAllowed } from '../../../../functions/adapters/http/guarded-http-client';

const LOCAL_STACK_CIDRS = ['127.0.0.0/8', '::1/128'];

/** Addresses that are not public unicast, by the range they belong to. */
const REFUSED: Readonly<Record<string, readonly string[]>> = {
  'loopback 127/8': ['127.0.0.1', '127.0.0.2', '127.255.255.254'],
  'loopback ::1': ['::1', '0:0:0:0:0:0:0:1'],
  'unspecified 0.0.0.0/8 and ::': ['0.0.0.0', '0.1.2.3', '::'],
  'private 10/8': ['10.0.0.0', '10.0.0.1', '10.255.255.255'],
  'private 172.16/12': ['172.16.0.1', '172.20.10.10', '172.31.255.254'],
  'private 192.168/16': ['192.168.0.1', '192.168.255.254'],
  'link-local 169.254/16 (metadata)': ['169.254.169.254', '169.254.170.2', '169.254.0.1'],
  'link-local fe80::/10': ['fe80::1', 'fe80::a9fe:a9fe', 'febf:ffff::1'],
  'metadata fd00:ec2::254 (ULA)': ['fd00:ec2::254'],
  'carrier-grade NAT 100.64/10': ['100.64.0.1', '100.100.100.200', '100.127.255.254'],
  'unique local fc00::/7': ['fc00::1', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'IPv4-mapped ::ffff:0:0/96': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:8.8.8.8'],
  'RFC 6145 ::ffff:0:0:0/96': ['::ffff:0:7f00:1', '::ffff:0:808:808'],
  'NAT64 64:ff9b::/96 and 64:ff9b:1::/48': ['64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::1'],
  '6to4 2002::/16': ['2002:7f00:1::', '2002:808:808::1'],
  'Teredo 2001::/32': ['2001::1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
  'multicast 224/4 and ff00::/8': ['224.0.0.1', '239.255.255.250', 'ff02::1', 'ff05::2'],
  'broadcast 255.255.255.255': ['255.255.255.255'],
  'benchmarking 198.18/15 and 2001:2::/48': ['198.18.0.1', '198.19.255.254', '2001:2::1'],
  'reserved and documentation': [
    '192.0.0.1',
    '192.0.2.1',
    '198.51.100.1',
    '203.0.113.1',
    '240.0.0.1',
    '2001:db8::1',
    '3fff::1',
  ],
  'IPv6 outside 2000::/3': ['::7f00:1', '::8.8.8.8', '100::1', '4000::1', 'fec0::1'],
};

const PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2001:4860:4860::8888'];

describe('isAddressAllowed', () => {
  for (const [range, addresses] of Object.entries(REFUSED)) {
    it(`refuses ${range}`, () => {
      for (const address of addresses) expect(isAddressAllowed(address, []), address).toBe(false);
    });
  }

  it('allows public unicast IPv4 and IPv6', () => {
    for (const address of PUBLIC) expect(isAddressAllowed(address, []), address).toBe(true);
  });

  it('allows what an IPv4 allow-list entry covers, and nothing next to it', () => {
    expect(isAddressAllowed('127.0.0.1', LOCAL_STACK_CIDRS)).toBe(true);
    expect(isAddressAllowed('127.255.255.254', LOCAL_STACK_CIDRS)).toBe(true);
    expect(isAddressAllowed('10.1.2.3', ['10.1.2.0/24'])).toBe(true);
    expect(isAddressAllowed('10.1.3.1', ['10.1.2.0/24'])).toBe(false);
    expect(isAddressAllowed('192.168.0.10', ['192.168.0.10/32'])).toBe(true);
    expect(isAddressAllowed('192.168.0.11', ['192.168.0.10/32'])).toBe(false);
    expect(isAddressAllowed('169.254.169.254', LOCAL_STACK_CIDRS)).toBe(false);
  });

  it('allows what an IPv6 allow-list entry covers, and nothing next to it', () => {
    expect(isAddressAllowed('::1', LOCAL_STACK_CIDRS)).toBe(true);
    expect(isAddressAllowed('fd12:3456::1', ['fd12:3456::/32'])).toBe(true);
    expect(isAddressAllowed('fd12:3457::1', ['fd12:3456::/32'])).toBe(false);
    expect(isAddressAllowed('fe80::1', LOCAL_STACK_CIDRS)).toBe(false);
  });

  it('never matches an IPv4 entry against IPv6 or the other way round', () => {
    expect(isAddressAllowed('::7f00:1', ['127.0.0.0/8'])).toBe(false);
    expect(isAddressAllowed('127.0.0.1', ['::/0'])).toBe(false);
  });

  it('judges IPv4-mapped IPv6 as its IPv4 address only when an IPv4 entry allows it', () => {
    expect(isAddressAllowed('::ffff:127.0.0.1', LOCAL_STACK_CIDRS)).toBe(true);
    expect(isAddressAllowed('::ffff:7f00:1', LOCAL_STACK_CIDRS)).toBe(true);
    expect(isAddressAllowed('::ffff:127.0.0.1', ['::1/128'])).toBe(false);
    expect(isAddressAllowed('::ffff:127.0.0.1', ['::ffff:0:0/96'])).toBe(false);
    expect(isAddressAllowed('::ffff:10.0.0.1', LOCAL_STACK_CIDRS)).toBe(false);
    expect(isAddressAllowed('::ffff:8.8.8.8', [])).toBe(false);
    expect(isAddressAllowed('::ffff:8.8.8.8', ['8.8.8.0/24'])).toBe(true);
  });

  it('refuses anything that is not an address in standard notation', () => {
    for (const address of [
      '127.1',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '2130706433',
      '010.0.0.1',
      '8.8.8',
      '8.8.8.8.8',
      'fe80::1%lo',
      '2606:4700:4700::1111%eth0',
      '[::1]',
      'localhost',
      '',
      ' 8.8.8.8',
    ]) {
      expect(isAddressAllowed(address, []), address).toBe(false);
      expect(isAddressAllowed(address, ['0.0.0.0/0', '::/0']), address).toBe(false);
    }
  });

  it('throws EgressPolicyError for allow-list entries that are not CIDRs', () => {
    for (const cidr of [
      '127.0.0.1',
      '127.1/8',
      '0x7f.0.0.0/8',
      '10.0.0.0/33',
      '10.0.0.0/-1',
      '10.0.0.0/08',
      '::1/129',
      'fe80::/10%lo',
      'localhost/8',
      '/8',
      '',
    ]) {
      expect(() => isAddressAllowed('8.8.8.8', [cidr]), cidr).toThrow(EgressPolicyError);
    }
  });
});

describe('parseStrictAddress', () => {
  it('parses dotted-quad IPv4 and IPv6 only', () => {
    expect(parseStrictAddress('8.8.8.8')?.toString()).toBe('8.8.8.8');
    expect(parseStrictAddress('2606:4700:4700:0:0:0:0:1111')?.toString()).toBe('2606:4700:4700::1111');
    expect(parseStrictAddress('127.1')).toBeUndefined();
    expect(parseStrictAddress('fe80::1%1')).toBeUndefined();
  });
});
