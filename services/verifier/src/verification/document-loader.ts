import { readFile } from "node:fs/promises";
import { join } from "node:path";

/** What @iden3/js-jsonld-merklization's DocumentLoader resolves to. */
export interface RemoteDocument {
  document: unknown;
  documentUrl: string;
  contextUrl?: string | null;
}

export type DocumentLoader = (url: string) => Promise<RemoteDocument>;

/** Fetches a document that is not available locally (IPFS gateway, https). Returns the parsed JSON. */
export type RemoteDocumentFetcher = (url: string) => Promise<unknown>;

/**
 * Names a context may have in a local directory: the last segment of its URL (for `ipfs://<cid>` the CID),
 * as is or with a `.json` / `.jsonld` / `.json-ld` extension.
 */
export function localFileNames(url: string): string[] {
  const withoutQuery = url.split(/[?#]/)[0];
  const last = withoutQuery.replace(/\/+$/, "").split("/").pop() ?? "";
  if (!last || last === "." || last === ".." || last.includes("\\")) return [];
  return [last, `${last}.json`, `${last}.jsonld`, `${last}.json-ld`];
}

async function readLocal(dirs: readonly string[], url: string): Promise<unknown | undefined> {
  for (const dir of dirs) {
    for (const name of localFileNames(url)) {
      try {
        return JSON.parse(await readFile(join(dir, name), "utf8"));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw new Error(
          `local JSON-LD context ${name} for ${url} is unreadable: ${(error as Error).message}`,
        );
      }
    }
  }
  return undefined;
}

export interface DocumentLoaderOptions {
  /** Directories searched in order before anything is fetched. */
  localDirs: readonly string[];
  /** Fetches what no local directory holds; its answers are kept for the life of the loader. */
  fetchRemote?: RemoteDocumentFetcher;
}

/**
 * Local contexts first, then one remote fetch per URL whose result is kept in memory, so a gateway outage after
 * the first successful load does not stop verification. A failed fetch is not cached.
 */
export function createDocumentLoader(options: DocumentLoaderOptions): DocumentLoader {
  const cache = new Map<string, Promise<unknown>>();
  return (url: string) => {
    let document = cache.get(url);
    if (!document) {
      document = (async () => {
        const local = await readLocal(options.localDirs, url);
        if (local !== undefined) return local;
        if (!options.fetchRemote) throw new Error(`JSON-LD context ${url} is not available locally`);
        return options.fetchRemote(url);
      })();
      cache.set(url, document);
      document.catch(() => cache.delete(url));
    }
    return document.then((doc) => ({ document: doc, documentUrl: url, contextUrl: null }));
  };
}

export const DEFAULT_IPFS_GATEWAY = "https://ipfs.io";

export interface HttpFetcherOptions {
  ipfsGateway: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** `ipfs://<cid>/path` through the configured gateway, http(s) URLs as they are. */
export function createHttpDocumentFetcher(options: HttpFetcherOptions): RemoteDocumentFetcher {
  const doFetch = options.fetch ?? fetch;
  const gateway = options.ipfsGateway.replace(/\/+$/, "");
  return async (url: string) => {
    let target: string;
    if (url.startsWith("ipfs://")) target = `${gateway}/ipfs/${url.slice("ipfs://".length)}`;
    else if (/^https?:\/\//.test(url)) target = url;
    else throw new Error(`unsupported JSON-LD context URL ${url}`);
    const response = await doFetch(target, {
      headers: { accept: "application/ld+json, application/json" },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    if (!response.ok) throw new Error(`loading JSON-LD context ${url} failed with HTTP ${response.status}`);
    return response.json();
  };
}
