import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse, print } from 'graphql';
import { LRUCache } from 'lru-cache';
import { DomainError } from '../errors/domain-error';
import { parseOptions } from './limits';

/**
 * Trusted documents (TRUSTED_DOCUMENTS): in production, /graphql runs only the operations of the manifests it was
 * given, sent by id or as one of their texts: docs/frontend.md, "Persisted operations". A manifest is GraphQL Code
 * Generator's `persisted-documents.json`, `{ "<sha256 of the document>": "<document>" }`.
 */

/** What a GraphQL request names its operation by, on any transport. */
export interface OperationSource {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

/** Texts already judged (short ones: a cache of bounded size), so a client sending one again costs a lookup. */
const MAX_JUDGED_TEXTS = 1000;
const MAX_JUDGED_TEXT_LENGTH = 8 * 1024;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function printedHashOf(text: string): string | undefined {
  try {
    return sha256(print(parse(text, parseOptions)));
  } catch {
    // Not a document: it cannot be one of the manifests'.
    return undefined;
  }
}

/** The id a request names, if any: `documentId` (`sha256:<hex>` or `<hex>`), else an APQ hash. */
function idOf(source: OperationSource): string | undefined {
  if (typeof source.documentId === 'string') return source.documentId.replace(/^sha256:/, '');
  const extensions = source.extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined;
  const hash = extensions?.persistedQuery?.sha256Hash;
  return typeof hash === 'string' ? hash : undefined;
}

export class TrustedDocuments {
  private readonly byId = new Map<string, string>();
  private readonly printedHashes = new Set<string>();
  private readonly judged = new LRUCache<string, boolean>({ max: MAX_JUDGED_TEXTS });

  constructor(manifests: Record<string, string>[]) {
    for (const manifest of manifests) {
      for (const [id, document] of Object.entries(manifest)) {
        this.byId.set(id.replace(/^sha256:/, ''), document);
        const hash = printedHashOf(document);
        if (hash) this.printedHashes.add(hash);
      }
    }
  }

  /** Reads the manifests; a file that is not a JSON object of strings stops the start, naming it. */
  static load(files: readonly string[]): TrustedDocuments {
    return new TrustedDocuments(
      files.map((file) => {
        let manifest: unknown;
        try {
          manifest = JSON.parse(readFileSync(file, 'utf8'));
        } catch (error) {
          throw new Error(`TRUSTED_DOCUMENTS: ${file} could not be read as JSON: ${error instanceof Error ? error.message : String(error)}`);
        }
        if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest) || Object.values(manifest).some((value) => typeof value !== 'string')) {
          throw new Error(`TRUSTED_DOCUMENTS: ${file} is not a manifest ({"<hash>": "<document>", …})`);
        }
        return manifest as Record<string, string>;
      }),
    );
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * The text to run for a request, or a refusal: an id must be a manifest's (PERSISTED_QUERY_NOT_FOUND), a text
   * must be one of theirs (PERSISTED_QUERY_NOT_IN_LIST).
   */
  resolve(source: OperationSource): string {
    const text = typeof source.query === 'string' && source.query.length > 0 ? source.query : undefined;
    if (text !== undefined) {
      if (this.allowsText(text)) return text;
      throw new DomainError('PERSISTED_QUERY_NOT_IN_LIST', 'This server runs trusted documents only: send the operation by its documentId');
    }
    const id = idOf(source);
    const document = id === undefined ? undefined : this.byId.get(id);
    if (document === undefined) throw new DomainError('PERSISTED_QUERY_NOT_FOUND', 'Persisted query not found: this server knows no operation of that id');
    return document;
  }

  private allowsText(text: string): boolean {
    const known = this.judged.get(text);
    if (known !== undefined) return known;
    const hash = printedHashOf(text);
    const allowed = hash !== undefined && this.printedHashes.has(hash);
    if (text.length > MAX_JUDGED_TEXT_LENGTH) return allowed;
    this.judged.set(text, allowed);
    return allowed;
  }
}

/**
 * The request's operation as Apollo will read it, replaced by the trusted text it names; throws the refusal. A GET
 * carries `extensions` as JSON text.
 */
export function trustRequest(trusted: TrustedDocuments, source: Record<string, unknown>): void {
  let extensions = source.extensions;
  if (typeof extensions === 'string') {
    try {
      extensions = JSON.parse(extensions);
    } catch {
      // Apollo refuses it with its own 400: nothing is trusted from it.
      extensions = undefined;
    }
  }
  source.query = trusted.resolve({ query: source.query, documentId: source.documentId, extensions });
  delete source.documentId;
}
