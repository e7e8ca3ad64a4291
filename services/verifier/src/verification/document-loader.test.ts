import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createDocumentLoader, createHttpDocumentFetcher, localFileNames } from "./document-loader.ts";

const CID = "QmcUEDa42Er4nfNFmGQVjiNYFaik6kvNQjfTeBrdSx83At";

describe("JSON-LD document loader", () => {
  it("names local files after the URL's last segment or the CID", () => {
    expect(localFileNames(`ipfs://${CID}`)[0]).toBe(CID);
    expect(localFileNames("https://example.org/schemas/kyc-v101.json-ld")).toContain("kyc-v101.json-ld");
    expect(localFileNames("https://example.org/")).toEqual([
      "example.org",
      "example.org.json",
      "example.org.jsonld",
      "example.org.json-ld",
    ]);
  });

  it("serves a local context without fetching", async () => {
    const dir = await mkdtemp(join(tmpdir(), "contexts-"));
    await writeFile(join(dir, `${CID}.json`), JSON.stringify({ "@context": { a: "b" } }));
    const loader = createDocumentLoader({
      localDirs: [dir],
      fetchRemote: () => Promise.reject(new Error("must not fetch")),
    });
    expect(await loader(`ipfs://${CID}`)).toEqual({
      document: { "@context": { a: "b" } },
      documentUrl: `ipfs://${CID}`,
      contextUrl: null,
    });
  });

  it("fetches a missing context once and keeps serving it when the gateway goes down", async () => {
    let up = true;
    const requested: string[] = [];
    const fetchImpl = (async (url: string) => {
      requested.push(url);
      if (!up) return new Response("gateway down", { status: 502 });
      return Response.json({ "@context": { served: true } });
    }) as typeof fetch;
    const loader = createDocumentLoader({
      localDirs: [],
      fetchRemote: createHttpDocumentFetcher({ ipfsGateway: "http://gateway.test/", fetch: fetchImpl }),
    });
    expect((await loader(`ipfs://${CID}`)).document).toEqual({ "@context": { served: true } });
    up = false;
    expect((await loader(`ipfs://${CID}`)).document).toEqual({ "@context": { served: true } });
    expect(requested).toEqual([`http://gateway.test/ipfs/${CID}`]);
  });

  it("does not cache a failed fetch", async () => {
    let calls = 0;
    const loader = createDocumentLoader({
      localDirs: [],
      fetchRemote: async () => {
        calls += 1;
        if (calls === 1) throw new Error("gateway timeout");
        return { ok: true };
      },
    });
    await expect(loader("ipfs://x")).rejects.toThrow("gateway timeout");
    expect((await loader("ipfs://x")).document).toEqual({ ok: true });
  });

  it("refuses URLs it cannot fetch", async () => {
    const fetcher = createHttpDocumentFetcher({
      ipfsGateway: "http://gateway.test",
      fetch: (() => {
        throw new Error("must not fetch");
      }) as typeof fetch,
    });
    await expect(fetcher("file:///etc/passwd")).rejects.toThrow(/unsupported/);
  });
});
