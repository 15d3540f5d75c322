import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import ts from 'typescript';
import { signatureHeader, verifySignature } from '../../src/webhook/webhook-signature';

/**
 * The signature of a delivery (docs/webhooks.md, "The signature"): what the sender writes must verify with the
 * service's own verifier and with the verifier the docs give clients: the docs' code block itself, compiled and run
 * here, so an edit to either side that breaks the other fails this test.
 */

/** The verifySignature of docs/webhooks.md: its first ```ts block, compiled to CommonJS and evaluated. */
function documentedVerifier(): typeof verifySignature {
  const doc = readFileSync(path.join(__dirname, '../../docs/webhooks.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/webhooks.md has no ```ts block');
  const { outputText } = ts.transpileModule(block, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
  const exported: { verifySignature?: typeof verifySignature } = {};
  // Only node:crypto, which the example imports: anything else it needed would be missing from a client's copy too.
  const require = (name: string) => {
    if (name !== 'node:crypto') throw new Error(`the example imports ${name}`);
    return jest.requireActual<typeof import('node:crypto')>('node:crypto');
  };
  runInNewContext(outputText, { require, exports: exported, module: { exports: exported }, Buffer, Date, Number, Math });
  if (typeof exported.verifySignature !== 'function') throw new Error('the example exports no verifySignature');
  return exported.verifySignature;
}

const documented = documentedVerifier();
const verifiers = { 'the service’s verifier': verifySignature, 'the docs’ verifier': documented };

const secret = 'whsec_' + 'k'.repeat(43);
const oldSecret = 'whsec_' + 'o'.repeat(43);
const body = JSON.stringify({ id: '01a21af3-0305-7586-b3df-2c5267907cf7', type: 'ping', created_at: '2026-11-27T03:05:38.767Z', note: 'ünïcode ✓' });
const t = 1_795_748_837;

describe('signatureHeader', () => {
  it('writes t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> for each secret, in the given order', () => {
    const header = signatureHeader([secret, oldSecret], t, body);
    expect(header).toMatch(/^t=1795748837,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    const { createHmac } = jest.requireActual<typeof import('node:crypto')>('node:crypto');
    const [, first, second] = header.split(',');
    expect(first).toBe(`v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`);
    expect(second).toBe(`v1=${createHmac('sha256', oldSecret).update(`${t}.${body}`).digest('hex')}`);
  });
});

describe.each(Object.entries(verifiers))('%s', (_name, verify) => {
  const header = signatureHeader([secret], t, body);

  it('accepts what the sender signs, within the tolerance on either side', () => {
    expect(verify(header, body, secret, t)).toBe(true);
    expect(verify(header, body, secret, t + 300)).toBe(true);
    expect(verify(header, body, secret, t - 300)).toBe(true);
    // Spaces after the commas, as some proxies write lists.
    expect(verify(header.replace(/,/g, ', '), body, secret, t)).toBe(true);
  });

  it('accepts either secret during a rotation’s grace period (one v1 per secret)', () => {
    const both = signatureHeader([secret, oldSecret], t, body);
    expect(verify(both, body, secret, t)).toBe(true);
    expect(verify(both, body, oldSecret, t)).toBe(true);
    expect(verify(both, body, 'whsec_neither', t)).toBe(false);
  });

  it('refuses another body, another secret, another time in the header, and an old or future request', () => {
    expect(verify(header, `${body} `, secret, t)).toBe(false);
    expect(verify(header, body.replace('ping', 'pong'), secret, t)).toBe(false);
    expect(verify(header, body, oldSecret, t)).toBe(false);
    expect(verify(header.replace(`t=${t}`, `t=${t + 1}`), body, secret, t)).toBe(false);
    expect(verify(header, body, secret, t + 301)).toBe(false);
    expect(verify(header, body, secret, t - 301)).toBe(false);
  });

  it('refuses malformed headers without throwing', () => {
    const v1 = header.split(',')[1]!;
    for (const bad of ['', 't=', v1, `t=abc,${v1}`, `t=${t}`, `t=${t},v1=`, `t=${t},v1=zz`, `t=${t},v1=${'0'.repeat(64)}`, `t=${t},v1=${v1.slice(3, 40)}`, `t=${t}.5,${v1}`, `t=${t},v0=${v1.slice(3)}`]) {
      expect([bad, verify(bad, body, secret, t)]).toEqual([bad, false]);
    }
  });
});

describe('the two verifiers', () => {
  it('agree on every header of a mixed set (same algorithm, not only the same happy path)', () => {
    const headers = [
      signatureHeader([secret], t, body),
      signatureHeader([oldSecret], t, body),
      signatureHeader([oldSecret, secret], t - 200, body),
      signatureHeader([secret], t + 400, body),
      `t=${t},v1=${'a'.repeat(64)}`,
      'garbage',
    ];
    for (const header of headers) {
      for (const now of [t - 500, t, t + 250]) expect(documented(header, body, secret, now)).toBe(verifySignature(header, body, secret, now));
    }
  });
});
