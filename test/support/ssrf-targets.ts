import type { Resolver } from '../../functions/adapters/http/guarded-http-client';
import type { WebhookNetworkError } from '../../functions/ports/webhook-http';

/** Ports of the canary listeners on 127.0.0.1 and [::1]: every hostile target points at one of them. */
export interface CanaryPorts {
  readonly ipv4: number;
  readonly ipv6: number;
}

/** One DNS answer of the stub resolver. */
export interface StubAnswer {
  readonly address: string;
  readonly family: 4 | 6;
}

/** A URL an SSRF guard must refuse without connecting. */
export interface HostileTarget {
  readonly name: string;
  readonly url: string;
  /** What the guard must answer under `{ allowHttp: true, allowedCidrs: [] }`. */
  readonly expected: Extract<WebhookNetworkError, 'address_not_allowed' | 'scheme_not_allowed' | 'other'>;
  /**
   * Stub DNS for the URL's host name: one answer list per lookup, the last one repeating. Names not listed
   * here do not resolve (ENOTFOUND).
   */
  readonly dns?: { readonly hostname: string; readonly answers: readonly (readonly StubAnswer[])[] };
  /** Resolve the name once before `post`: the pre-check a rebinding attacker answers with a public address. */
  readonly preResolve?: boolean;
}

/** A public address that must never be reached by the tests: only handed out as a first (pre-check) answer. */
const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:4700:4700::1111';

const v4 = (address: string): StubAnswer => ({ address, family: 4 });
const v6 = (address: string): StubAnswer => ({ address, family: 6 });

/**
 * The hostile fixture list (C17): numeric IPv4 forms WHATWG normalises (decimal, octal, hex, short), IPv6
 * literals embedding IPv4 (mapped, NAT64, 6to4, Teredo, SIIT, compatible), link-local and metadata addresses,
 * CGNAT, ULA, multicast, unspecified, broadcast, private and reserved ranges, names resolving to such addresses
 * (alone or next to a public one), rebinding names, malformed DNS answers, non-http schemes and userinfo.
 */
export const hostileTargets = (ports: CanaryPorts): readonly HostileTarget[] => {
  const p4 = ports.ipv4;
  const p6 = ports.ipv6;
  const literal = (name: string, host: string, port = p4): HostileTarget => ({
    name,
    url: `http://${host}:${port}/webhooks/v1/catalog`,
    expected: 'address_not_allowed',
  });
  const named = (
    name: string,
    hostname: string,
    answers: readonly (readonly StubAnswer[])[],
    options: { readonly port?: number; readonly preResolve?: boolean } = {},
  ): HostileTarget => ({
    name,
    url: `http://${hostname}:${options.port ?? p4}/webhooks/v1/catalog`,
    expected: 'address_not_allowed',
    dns: { hostname, answers },
    ...(options.preResolve === true ? { preResolve: true } : {}),
  });
  const scheme = (name: string, url: string): HostileTarget => ({
    name,
    url,
    expected: 'scheme_not_allowed',
  });
  const other = (name: string, url: string): HostileTarget => ({ name, url, expected: 'other' });

  return [
    // Loopback, IPv4 in every notation WHATWG accepts.
    literal('loopback dotted decimal', '127.0.0.1'),
    literal('loopback short form 127.1', '127.1'),
    literal('loopback short form 127.0.1', '127.0.1'),
    literal('loopback decimal 2130706433', '2130706433'),
    literal('loopback hex 0x7f000001', '0x7f000001'),
    literal('loopback hex first octet 0x7f.0.0.1', '0x7f.0.0.1'),
    literal('loopback hex short 0x7f.1', '0x7f.1'),
    literal('loopback hex every octet', '0x7F.0x00.0x00.0x01'),
    literal('loopback octal 0177.0.0.1', '0177.0.0.1'),
    literal('loopback octal short 0177.1', '0177.1'),
    literal('loopback octal 017700000001', '017700000001'),
    literal('loopback octal with leading zeros', '0000177.0.0.01'),
    literal('loopback trailing dot', '127.0.0.1.'),
    literal('loopback percent-encoded', '%31%32%37.0.0.1'),
    literal('loopback fullwidth digits', '１２７．０．０．１'),
    literal('loopback 127.0.0.2', '127.0.0.2'),
    literal('loopback top of 127/8', '127.255.255.254'),
    // Unspecified (connects to the local host on Linux).
    literal('unspecified 0.0.0.0', '0.0.0.0'),
    literal('unspecified 0', '0'),
    literal('unspecified hex 0x0', '0x0'),
    literal('unspecified octal 00000', '00000'),
    literal('unspecified IPv6 [::]', '[::]', p6),
    literal('unspecified IPv6 long form', '[0:0:0:0:0:0:0:0]', p6),
    // Loopback IPv6 and IPv6 forms embedding 127.0.0.1.
    literal('IPv6 loopback [::1]', '[::1]', p6),
    literal('IPv6 loopback long form', '[0:0:0:0:0:0:0:1]', p6),
    literal('IPv6 loopback zero-padded', '[0000:0000:0000:0000:0000:0000:0000:0001]', p6),
    literal('IPv4-mapped [::ffff:127.0.0.1]', '[::ffff:127.0.0.1]'),
    literal('IPv4-mapped hex [::ffff:7f00:1]', '[::ffff:7f00:1]'),
    literal('IPv4-mapped long form', '[0:0:0:0:0:ffff:127.0.0.1]'),
    literal('IPv4-mapped upper-case', '[::FFFF:7F00:0001]'),
    literal('IPv4-mapped unspecified', '[::ffff:0.0.0.0]'),
    literal('IPv4-compatible (deprecated) [::127.0.0.1]', '[::127.0.0.1]'),
    literal('SIIT rfc6145 [::ffff:0:7f00:1]', '[::ffff:0:7f00:1]'),
    literal('NAT64 [64:ff9b::7f00:1]', '[64:ff9b::7f00:1]'),
    literal('NAT64 dotted [64:ff9b::127.0.0.1]', '[64:ff9b::127.0.0.1]'),
    literal('NAT64 local-use [64:ff9b:1::7f00:1]', '[64:ff9b:1::7f00:1]'),
    literal('6to4 [2002:7f00:1::]', '[2002:7f00:1::]'),
    literal('6to4 [2002:7f00:0001::1]', '[2002:7f00:0001::1]'),
    literal('Teredo with client 127.0.0.1', '[2001:0:4136:e378:8000:63bf:80ff:fffe]'),
    literal('Teredo [2001::1]', '[2001::1]'),
    // Link-local and cloud metadata.
    literal('metadata 169.254.169.254', '169.254.169.254'),
    literal('metadata decimal 2852039166', '2852039166'),
    literal('metadata hex 0xa9fea9fe', '0xa9fea9fe'),
    literal('metadata octal 0251.0376.0251.0376', '0251.0376.0251.0376'),
    literal('metadata short 169.254.43518', '169.254.43518'),
    literal('ECS task metadata 169.254.170.2', '169.254.170.2'),
    literal('link-local 169.254.0.1', '169.254.0.1'),
    literal('link-local 169.254.255.254', '169.254.255.254'),
    literal('metadata IPv6 [fd00:ec2::254]', '[fd00:ec2::254]', p6),
    literal('metadata IPv4-mapped [::ffff:169.254.169.254]', '[::ffff:169.254.169.254]'),
    literal('metadata IPv4-mapped hex [::ffff:a9fe:a9fe]', '[::ffff:a9fe:a9fe]'),
    literal('metadata NAT64 [64:ff9b::a9fe:a9fe]', '[64:ff9b::a9fe:a9fe]'),
    literal('metadata 6to4 [2002:a9fe:a9fe::]', '[2002:a9fe:a9fe::]'),
    literal('IPv6 link-local [fe80::1]', '[fe80::1]', p6),
    literal('IPv6 link-local [fe80::a9fe:a9fe]', '[fe80::a9fe:a9fe]', p6),
    literal('IPv6 link-local top [febf::1]', '[febf::1]', p6),
    // Carrier-grade NAT 100.64.0.0/10.
    literal('CGNAT 100.64.0.1', '100.64.0.1'),
    literal('CGNAT 100.100.100.200 (Alibaba metadata)', '100.100.100.200'),
    literal('CGNAT 100.127.255.254', '100.127.255.254'),
    // Unique local fc00::/7 and deprecated site-local.
    literal('ULA [fc00::1]', '[fc00::1]', p6),
    literal('ULA [fd12:3456:789a::1]', '[fd12:3456:789a::1]', p6),
    literal('ULA [fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]', '[fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]', p6),
    literal('site-local [fec0::1]', '[fec0::1]', p6),
    // Multicast and broadcast.
    literal('multicast 224.0.0.1', '224.0.0.1'),
    literal('multicast 239.255.255.250', '239.255.255.250'),
    literal('IPv6 multicast [ff02::1]', '[ff02::1]', p6),
    literal('IPv6 multicast [ff05::2]', '[ff05::2]', p6),
    literal('broadcast 255.255.255.255', '255.255.255.255'),
    literal('broadcast decimal 4294967295', '4294967295'),
    // RFC 1918.
    literal('private 10.0.0.1', '10.0.0.1'),
    literal('private 10.255.255.254', '10.255.255.254'),
    literal('private octal 012.0.0.1', '012.0.0.1'),
    literal('private decimal 167772161', '167772161'),
    literal('private 172.16.0.1', '172.16.0.1'),
    literal('private 172.31.255.254', '172.31.255.254'),
    literal('private 192.168.0.1', '192.168.0.1'),
    literal('private hex 0xc0a80001', '0xc0a80001'),
    literal('private 192.168.255.254', '192.168.255.254'),
    literal('private IPv4-mapped [::ffff:10.0.0.1]', '[::ffff:10.0.0.1]'),
    literal('private IPv4-mapped [::ffff:192.168.0.1]', '[::ffff:192.168.0.1]'),
    // Benchmarking, documentation and other reserved ranges.
    literal('benchmarking 198.18.0.1', '198.18.0.1'),
    literal('benchmarking 198.19.255.254', '198.19.255.254'),
    literal('IETF protocol assignments 192.0.0.1', '192.0.0.1'),
    literal('TEST-NET-1 192.0.2.1', '192.0.2.1'),
    literal('TEST-NET-2 198.51.100.1', '198.51.100.1'),
    literal('TEST-NET-3 203.0.113.1', '203.0.113.1'),
    literal('class E 240.0.0.1', '240.0.0.1'),
    literal('IPv6 documentation [2001:db8::1]', '[2001:db8::1]', p6),
    literal('IPv6 benchmarking [2001:2::1]', '[2001:2::1]', p6),
    literal('IPv6 discard [100::1]', '[100::1]', p6),
    literal('IPv6 outside 2000::/3 [4000::1]', '[4000::1]', p6),
    literal('public IPv4 in IPv4-mapped form [::ffff:8.8.8.8]', '[::ffff:8.8.8.8]'),
    // WHATWG special-scheme spellings that still mean http://127.0.0.1.
    { name: 'upper-case scheme', url: `HTTP://127.0.0.1:${p4}/`, expected: 'address_not_allowed' },
    { name: 'scheme without slashes', url: `http:127.0.0.1:${p4}/`, expected: 'address_not_allowed' },
    {
      name: 'backslashes after the scheme',
      url: `http:\\\\127.0.0.1:${p4}/`,
      expected: 'address_not_allowed',
    },
    {
      name: 'tab and newline in the host',
      url: `http://12\t7.0.0\n.1:${p4}/`,
      expected: 'address_not_allowed',
    },
    // Names resolving to addresses that are not public unicast (stub DNS).
    named('localhost', 'localhost', [[v4('127.0.0.1'), v6('::1')]]),
    named('localhost with trailing dot', 'localhost.', [[v4('127.0.0.1')]]),
    named('name → 127.0.0.1', 'loopback.attacker.test', [[v4('127.0.0.1')]]),
    named('name → ::1', 'loopback6.attacker.test', [[v6('::1')]], { port: p6 }),
    named('nip.io style name → 127.0.0.1', '127.0.0.1.nip.io', [[v4('127.0.0.1')]]),
    named('name → 169.254.169.254', 'metadata.attacker.test', [[v4('169.254.169.254')]]),
    named('name → fd00:ec2::254', 'metadata6.attacker.test', [[v6('fd00:ec2::254')]]),
    named('name → 10.1.2.3', 'private10.attacker.test', [[v4('10.1.2.3')]]),
    named('name → 172.20.0.5', 'private172.attacker.test', [[v4('172.20.0.5')]]),
    named('name → 192.168.10.10', 'private192.attacker.test', [[v4('192.168.10.10')]]),
    named('name → CGNAT 100.64.1.1', 'cgnat.attacker.test', [[v4('100.64.1.1')]]),
    named('name → ULA fd00::1', 'ula.attacker.test', [[v6('fd00::1')]]),
    named('name → fe80::1', 'linklocal6.attacker.test', [[v6('fe80::1')]]),
    named('name → ::ffff:127.0.0.1', 'mapped.attacker.test', [[v6('::ffff:127.0.0.1')]]),
    named('name → NAT64 64:ff9b::7f00:1', 'nat64.attacker.test', [[v6('64:ff9b::7f00:1')]]),
    named('name → 0.0.0.0', 'unspecified.attacker.test', [[v4('0.0.0.0')]]),
    named('name → ::', 'unspecified6.attacker.test', [[v6('::')]], { port: p6 }),
    named('name → multicast 224.0.0.1', 'multicast.attacker.test', [[v4('224.0.0.1')]]),
    named('name → broadcast', 'broadcast.attacker.test', [[v4('255.255.255.255')]]),
    named('name → 198.18.0.1', 'bench.attacker.test', [[v4('198.18.0.1')]]),
    // One public and one private answer: refused as a whole, no other address picked.
    named('name → public, then 127.0.0.1', 'mixed.attacker.test', [[v4(PUBLIC_V4), v4('127.0.0.1')]]),
    named('name → 10.0.0.1, then public', 'mixed2.attacker.test', [[v4('10.0.0.1'), v4(PUBLIC_V4)]]),
    named('name → public IPv6 and ::1', 'mixed6.attacker.test', [[v6(PUBLIC_V6), v6('::1')]]),
    named('name → public IPv4 and fd00:ec2::254', 'mixed46.attacker.test', [
      [v4(PUBLIC_V4), v6('fd00:ec2::254')],
    ]),
    // DNS rebinding: the pre-check sees a public address, the connect-time lookup 127.0.0.1.
    named('rebinding public → 127.0.0.1', 'rebind.attacker.test', [[v4(PUBLIC_V4)], [v4('127.0.0.1')]], {
      preResolve: true,
    }),
    named('rebinding public → ::1', 'rebind6.attacker.test', [[v6(PUBLIC_V6)], [v6('::1')]], {
      port: p6,
      preResolve: true,
    }),
    named(
      'rebinding public → 169.254.169.254',
      'rebind-metadata.attacker.test',
      [[v4(PUBLIC_V4)], [v4('169.254.169.254')]],
      { preResolve: true },
    ),
    // Answers a hostile resolver might give that are not addresses in standard notation.
    named('answer in short form 127.1', 'short-answer.attacker.test', [[v4('127.1')]]),
    named('answer in hex 0x7f000001', 'hex-answer.attacker.test', [[v4('0x7f000001')]]),
    named('answer in decimal 2130706433', 'decimal-answer.attacker.test', [[v4('2130706433')]]),
    named('answer with a zone id fe80::1%lo', 'zone-answer.attacker.test', [[v6('fe80::1%lo')]]),
    named('answer ::1 labelled family 4', 'mislabelled.attacker.test', [[v4('::1')]], { port: p6 }),
    named('answer that is a host name', 'cname-answer.attacker.test', [[v4('localhost')]]),
    // Schemes other than http(s).
    scheme('file URL', 'file:///etc/passwd'),
    scheme('ftp', `ftp://127.0.0.1:${p4}/`),
    scheme('gopher', `gopher://127.0.0.1:${p4}/_POST%20/`),
    scheme('dict', `dict://127.0.0.1:${p4}/info`),
    scheme('ldap', `ldap://127.0.0.1:${p4}/`),
    scheme('ws', `ws://127.0.0.1:${p4}/`),
    scheme('wss', `wss://127.0.0.1:${p4}/`),
    scheme('data URL', 'data:text/plain,hello'),
    scheme('javascript URL', 'javascript:alert(1)'),
    scheme('blob URL', `blob:http://127.0.0.1:${p4}/x`),
    scheme('non-special scheme with an IPv4 host', `x-http://127.0.0.1:${p4}/`),
    // Userinfo: refused ('other') whatever the host.
    other('userinfo user:password@', `http://user:password@127.0.0.1:${p4}/`),
    other('userinfo that looks like a public host', `http://partner.example@127.0.0.1:${p4}/`),
    other('userinfo hiding the loopback address', `http://127.0.0.1:${p4}@partner.example/`),
    // Not URLs at all.
    other('zone id in an IPv6 literal', `http://[fe80::1%25lo]:${p6}/`),
    other('relative URL', '/webhooks/v1/catalog'),
    other('invalid IPv4 (octet > 255)', `http://127.0.0.256:${p4}/`),
  ];
};

/** The https variant of a target: same host and port, `https:` scheme; `undefined` for non-http targets. */
export const httpsVariant = (target: HostileTarget): HostileTarget | undefined =>
  /^http:/i.test(target.url) ? { ...target, url: target.url.replace(/^http:/i, 'https:') } : undefined;

/** A stub resolver serving one target's DNS answers in order (the last list repeats), counting lookups. */
export const stubResolver = (
  target: HostileTarget,
): { readonly resolve: Resolver; lookups: () => number } => {
  let lookups = 0;
  const resolve: Resolver = async (hostname) => {
    if (target.dns === undefined || hostname !== target.dns.hostname) {
      throw Object.assign(new Error(`stub DNS: ${hostname} not found`), { code: 'ENOTFOUND' });
    }
    const { answers } = target.dns;
    const answer = answers[Math.min(lookups, answers.length - 1)] ?? [];
    lookups += 1;
    return answer;
  };
  return { resolve, lookups: () => lookups };
};
