import { isForbiddenAddress, urlRefusal } from '../../src/webhook/webhook.rules';

/**
 * Which addresses a delivery may reach outside WEBHOOK_ALLOW_PRIVATE_TARGETS (docs/webhooks.md, "Safety"): every
 * address a receiver's name resolves to is judged at each send, and a URL naming an address when it is saved.
 */

const FORBIDDEN: Record<string, string[]> = {
  'IPv4 loopback 127/8': ['127.0.0.1', '127.255.255.254'],
  'private 10/8, 172.16/12, 192.168/16': ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255'],
  'link-local 169.254/16 and the metadata address': ['169.254.0.1', '169.254.169.254'],
  'CGNAT 100.64/10': ['100.64.0.0', '100.64.0.1', '100.127.255.255'],
  'this network 0/8': ['0.0.0.0', '0.1.2.3'],
  'multicast, reserved and broadcast': ['224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255'],
  'documentation and benchmarking ranges': ['192.0.2.1', '198.51.100.1', '203.0.113.1', '198.18.0.1'],
  'IPv6 loopback and unspecified': ['::1', '0:0:0:0:0:0:0:1', '::'],
  'IPv6 unique local fc00::/7': ['fc00::1', 'fd00::1', 'fd00:ec2::254', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  'IPv6 link-local fe80::/10': ['fe80::1', 'febf::1', 'fe80::1%eth0'],
  'IPv6 site-local fec0::/10 (deprecated)': ['fec0::1'],
  'IPv6 multicast and documentation': ['ff02::1', '2001:db8::1'],
  'IPv4-mapped IPv6 of forbidden IPv4, dotted and hex': ['::ffff:127.0.0.1', '::ffff:7f00:1', '::FFFF:7F00:1', '0:0:0:0:0:ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:10.0.0.1', '::ffff:100.64.0.1'],
  'IPv4-compatible and IPv4-translated IPv6': ['::127.0.0.1', '::7f00:1', '::8.8.8.8', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1'],
  'NAT64 prefixes': ['64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::1'],
  '6to4 embedding a forbidden IPv4, however compressed': ['2002:7f00:1::', '2002:7f00::1', '2002::1', '2002:a9fe:a9fe::1', '2002:0a00:0001:1::1', '2002:c0a8:101::10.0.0.1'],
  'not an address at all': ['', 'localhost', 'example.com', '999.1.1.1', '1.2.3'],
};

const ALLOWED = ['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.1', '172.15.255.255', '172.32.0.1', '169.253.255.255', '192.169.0.1', '::ffff:8.8.8.8', '::ffff:808:808', '2606:4700:4700::1111', '2a00:1450:4001::200e', '2002:0808:0808::1', '2002:808:808::', '2002:808:808::127.0.0.1'];

describe('isForbiddenAddress', () => {
  for (const [what, addresses] of Object.entries(FORBIDDEN)) {
    it(`refuses ${what}`, () => {
      expect(addresses.filter((address) => !isForbiddenAddress(address))).toEqual([]);
    });
  }

  it('allows public addresses, next to the edges of the refused ranges too', () => {
    expect(ALLOWED.filter((address) => isForbiddenAddress(address))).toEqual([]);
  });
});

describe('urlRefusal', () => {
  const refusedAs = (url: string) => urlRefusal(url, false);

  it('takes an absolute https URL of a public name or address', () => {
    for (const url of ['https://hooks.example.com/in', 'https://hooks.example.com:8443/a?b=c', 'https://8.8.8.8/hook', 'https://[2606:4700::1111]/hook']) {
      expect([url, refusedAs(url)]).toEqual([url, undefined]);
    }
  });

  it('refuses what is no absolute https URL, or carries credentials', () => {
    expect(refusedAs('not a url')).toBe('url must be an absolute https URL, such as https://example.com/path');
    expect(refusedAs('/relative')).toBe('url must be an absolute https URL, such as https://example.com/path');
    expect(refusedAs('http://hooks.example.com/in')).toBe('url scheme must be https, not http');
    expect(refusedAs('ftp://hooks.example.com/in')).toBe('url scheme must be https, not ftp');
    expect(refusedAs('https://user:pass@hooks.example.com/in')).toBe('url must not carry credentials (user:password@)');
    expect(refusedAs(`https://hooks.example.com/${'a'.repeat(2048)}`)).toBe('url must be at most 2048 characters');
  });

  it('refuses forbidden addresses however the URL writes them (WHATWG parsing normalizes the host first)', () => {
    const urls = [
      'https://127.0.0.1/hook', 'https://127.1/hook', 'https://2130706433/hook', 'https://0x7f000001/hook', 'https://017700000001/hook',
      'https://10.1.2.3/hook', 'https://192.168.1.1/hook', 'https://169.254.169.254/latest/meta-data', 'https://169.254.169.254./latest',
      'https://100.64.0.1/hook', 'https://[::1]/hook', 'https://[fd00::1]/hook', 'https://[fe80::1]/hook', 'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:a9fe:a9fe]/hook', 'https://[::127.0.0.1]/hook',
    ];
    expect(urls.filter((url) => !/^url host \S+ is a loopback, private, link-local or metadata address$/.test(refusedAs(url) ?? ''))).toEqual([]);
  });

  it('refuses local names, with or without the trailing dot of a fully qualified name', () => {
    const urls = ['https://localhost/hook', 'https://localhost./hook', 'https://api.localhost/hook', 'https://metadata.google.internal/x', 'https://metadata.google.internal./x', 'https://intranet/hook', 'https://intranet./hook'];
    expect(urls.filter((url) => !/^url host \S+ is (a local name|not a public name \(it has no domain\))$/.test(refusedAs(url) ?? ''))).toEqual([]);
  });

  it('allows http and local receivers when private targets are allowed (development and tests), never credentials', () => {
    expect(urlRefusal('http://127.0.0.1:8080/hook', true)).toBeUndefined();
    expect(urlRefusal('http://localhost/hook', true)).toBeUndefined();
    expect(urlRefusal('ftp://127.0.0.1/hook', true)).toBe('url scheme must be http or https, not ftp');
    expect(urlRefusal('http://u:p@127.0.0.1/hook', true)).toBe('url must not carry credentials (user:password@)');
  });
});
