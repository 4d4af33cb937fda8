// Which webhook targets production mode refuses: hosts that are, or resolve to, an address of this
// machine or of a private network (loopback, private, link-local, unique-local, carrier-grade NAT,
// multicast, reserved), so that a hook cannot make sitebiz call into the network it runs in. The
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
  ['2001:db8::', 32, 'documentation'],
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

/** The IPv4 address an IPv6 address carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const mapped = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why an IP address is not a public one (`loopback`, `private`, ...), or undefined when it is. */
export function nonPublicKind(address: string): string | undefined {
  const version = isIP(address);
  if (version === 0) return 'not an IP address';
  const v4 = version === 6 ? embeddedIpv4(address) : address;
  const [checked, family] = v4 !== undefined ? [v4, 'ipv4'] : [address, 'ipv6'];
  return RANGES.find((range) => range.family === family && range.list.check(checked, family))?.kind;
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
    const kind = nonPublicKind(host);
    return kind ? `${host} is a ${kind} address` : undefined;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host);
  } catch {
    return `${host} does not resolve`;
  }
  if (addresses.length === 0) return `${host} does not resolve`;
  for (const { address } of addresses) {
    const kind = nonPublicKind(address);
    if (kind) return `${host} resolves to ${address}, a ${kind} address`;
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
  const kind = nonPublicKind(host);
  return kind ? `${host} is a ${kind} address` : undefined;
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
            const kind = nonPublicKind(address);
            if (kind) return callback(new RefusedTargetError(`${hostname} resolves to ${address}, a ${kind} address`), '');
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
