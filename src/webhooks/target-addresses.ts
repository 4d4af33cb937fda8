// Which webhook targets production mode refuses: hosts that are, or resolve to, an address of this
// machine or of a private network (loopback, private, link-local, unique-local, carrier-grade NAT,
// multicast, reserved), also in the IPv6 forms that carry an IPv4 address (mapped, compatible,
// translated, NAT64, 6to4, Teredo), so that a hook cannot make sitebiz call into the network it runs in. The
// check runs when a hook is created and again when each attempt connects (the address checked is
// the address connected to: a name that resolved to a public address at creation and to a private
// one later, DNS rebinding, is refused then). Sandbox mode allows every target: local receivers
// are what integration builders test with.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Mode } from '../config.js';

const NON_PUBLIC_V4: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const NON_PUBLIC_V6: ReadonlyArray<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard'],
  ['100:0:0:1::', 64, 'dummy'],
  ['2001:2::', 48, 'benchmarking'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
  ['5f00::', 16, 'segment routing'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

/** One block list per kind of range, so a refusal can say what the address is. */
const RANGES: ReadonlyArray<{ list: BlockList; kind: string; family: 'ipv4' | 'ipv6' }> = [
  ...NON_PUBLIC_V4.map(([network, prefix, kind]) => ({ network, prefix, kind, family: 'ipv4' as const })),
  ...NON_PUBLIC_V6.map(([network, prefix, kind]) => ({ network, prefix, kind, family: 'ipv6' as const })),
].map(({ network, prefix, kind, family }) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, kind, family };
});

/** "a loopback address", "an unspecified address". */
const anAddress = (kind: string) => `${/^(?:[aeio]|u(?!ni))/i.test(kind) ? 'an' : 'a'} ${kind} address`;

const rangeKind = (address: string, family: 'ipv4' | 'ipv6') => RANGES.find((range) => range.family === family && range.list.check(address, family))?.kind;

/** The 16 bytes of an IPv6 address that isIP accepted (a zone, "%eth0", is dropped). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  // A dotted quad at the end is the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = tail === undefined ? groupsOf(head) : [...groupsOf(head), ...Array<string>(8 - groupsOf(head).length - groupsOf(tail).length).fill('0'), ...groupsOf(tail)];
  return groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 255];
  });
}

const ipv4Of = (bytes: readonly number[]) => bytes.join('.');
const startsWith = (bytes: readonly number[], prefix: readonly number[]) => prefix.every((byte, i) => bytes[i] === byte);
const ZEROS_80 = Array<number>(10).fill(0);

/**
 * The IPv4 address an IPv6 address stands for or leads to, by the form it is in, and whether the
 * form reaches public hosts at all. Each of these forms has been used to reach 127.0.0.1 past a
 * check that knew only ::ffff:a.b.c.d.
 */
function embeddedIpv4(bytes: readonly number[]): { /** with its article */ form: string; ipv4: string[]; routable: boolean } | undefined {
  // IPv4-mapped ::ffff:a.b.c.d: a socket connects to a.b.c.d itself.
  if (startsWith(bytes, [...ZEROS_80, 0xff, 0xff])) return { form: 'an IPv4-mapped', ipv4: [ipv4Of(bytes.slice(12))], routable: true };
  // IPv4-compatible ::a.b.c.d (deprecated by RFC 4291) and IPv4-translated ::ffff:0:a.b.c.d
  // (RFC 2765, dropped by RFC 6145): no public host has one.
  if (startsWith(bytes, [...ZEROS_80, 0, 0])) return { form: 'an IPv4-compatible', ipv4: [ipv4Of(bytes.slice(12))], routable: false };
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return { form: 'an IPv4-translated', ipv4: [ipv4Of(bytes.slice(12))], routable: false };
  // NAT64, the well-known prefix 64:ff9b::/96 (RFC 6052): a translator connects to a.b.c.d.
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...ZEROS_80.slice(0, 8)])) return { form: 'a NAT64', ipv4: [ipv4Of(bytes.slice(12))], routable: true };
  // Local-use NAT64 64:ff9b:1::/48 (RFC 8215): not globally reachable, so refused whole; where the
  // IPv4 address sits is the operator's choice (RFC 6052 allows six prefix lengths), so it is not named.
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 1])) return { form: 'a local-use NAT64', ipv4: [], routable: false };
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056): a relay tunnels to AA.BB.CC.DD.
  if (startsWith(bytes, [0x20, 0x02])) return { form: 'a 6to4', ipv4: [ipv4Of(bytes.slice(2, 6))], routable: true };
  // Teredo 2001:0::/32 (RFC 4380): the server's address in bits 32-63, the client's in the last 32
  // bits with every bit flipped; a relay sends to both (bubbles to the server, data to the client).
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return { form: 'a Teredo', ipv4: [ipv4Of(bytes.slice(4, 8)), ipv4Of(bytes.slice(12).map((b) => b ^ 255))], routable: true };
  return undefined;
}

/**
 * Why an IP address is not a public one ("a loopback address", "an IPv4-mapped address of
 * 127.0.0.1, a loopback address", ...), or undefined when it is.
 */
export function nonPublicReason(address: string): string | undefined {
  const version = isIP(address);
  if (version === 0) return 'not an IP address';
  if (version === 4) {
    const kind = rangeKind(address, 'ipv4');
    return kind ? anAddress(kind) : undefined;
  }
  const kind = rangeKind(address.replace(/%.*$/, ''), 'ipv6');
  if (kind) return anAddress(kind);
  const embedded = embeddedIpv4(ipv6Bytes(address));
  if (!embedded) return undefined;
  for (const ipv4 of embedded.ipv4) {
    const inner = rangeKind(ipv4, 'ipv4');
    if (inner) return `${embedded.form} address of ${ipv4}, ${anAddress(inner)}`;
  }
  return embedded.routable ? undefined : `${embedded.form} address (no public host has one)`;
}

export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

/** Every address the system resolver gives for a name (what a connection would pick from). */
export const systemLookup: Lookup = (hostname) =>
  new Promise((resolve, reject) => {
    const options: LookupAllOptions = { all: true, verbatim: true };
    dnsLookup(hostname, options, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/**
 * Why production mode refuses a target URL's host, or undefined when every address it is or
 * resolves to is public. A name that does not resolve is refused too (it cannot be checked).
 */
export async function refusedTargetReason(url: URL, lookup: Lookup = systemLookup): Promise<string | undefined> {
  // URL keeps IPv6 literals in brackets.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    const reason = nonPublicReason(host);
    return reason ? `${host} is ${reason}` : undefined;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch {
    return `${host} does not resolve`;
  }
  if (addresses.length === 0) return `${host} does not resolve`;
  for (const { address } of addresses) {
    const reason = nonPublicReason(address);
    if (reason) return `${host} resolves to ${address}, ${reason}`;
  }
  return undefined;
}

/** An attempt's target that production mode refuses; its message says why. */
export class RefusedTargetError extends Error {
  override name = 'RefusedTargetError';
  constructor(reason: string) {
    super(`refused: ${reason} (production mode delivers only to public addresses)`);
  }
}

/**
 * Why production mode refuses a URL whose host is an IP address, or undefined (also for a name:
 * connections to names go through connectLookup, connections to literals resolve nothing).
 */
export function refusedLiteralReason(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) === 0) return undefined;
  const reason = nonPublicReason(host);
  return reason ? `${host} is ${reason}` : undefined;
}

/**
 * The `lookup` a connection uses to resolve its host (http.request passes it to net.connect), so
 * that the addresses checked are the addresses connected to. With `guard`, a name with any
 * non-public address fails with a RefusedTargetError instead of connecting.
 */
export function connectLookup(resolve: Lookup, guard: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const addresses = family === 0 ? found : found.filter((a) => a.family === family);
        if (guard) {
          for (const { address } of found) {
            const reason = nonPublicReason(address);
            if (reason) return callback(new RefusedTargetError(`${hostname} resolves to ${address}, ${reason}`), '');
          }
        }
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** Which webhook targets this installation accepts: every one in sandbox mode, public ones in production. */
export interface WebhookTargetPolicy {
  /** Why the target is refused, or undefined when it is accepted. */
  refusal(url: URL): Promise<string | undefined>;
}

/** The policy of a mode; `lookup` resolves names (tests inject one: this machine may have no DNS). */
export function webhookTargetPolicy(mode: Mode, lookup: Lookup = systemLookup): WebhookTargetPolicy {
  if (mode === 'sandbox') return { refusal: async () => undefined };
  return { refusal: (url) => refusedTargetReason(url, lookup) };
}

// The engine hands writes the policy buildApp made from the configuration (WriteServices): creating
// a hook checks its target with it (src/domain/hooks.ts).
declare module '../jsonapi/resource.js' {
  interface WriteServices {
    webhookTargets: WebhookTargetPolicy;
  }
}
