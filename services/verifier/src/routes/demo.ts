import { type HttpApp, HttpError, Type } from "@humanpass/http";
import QRCode from "qrcode";
import { demoPage } from "../demo/page.ts";
import type { RouteDeps } from "./deps.ts";

/** A universal link with the request inline is about 1–2 kB; anything far larger is not ours. */
const MAX_QR_DATA = 4096;

export function demoRoutes(app: HttpApp, deps: RouteDeps): void {
  const page = demoPage(deps.settings.walletUrl);
  app.get("/", { schema: { hide: true } }, async (_request, reply) =>
    reply.type("text/html; charset=utf-8").send(page),
  );
  app.get(
    "/demo/qr.svg",
    {
      schema: {
        hide: true,
        querystring: Type.Object({ data: Type.String({ minLength: 1, maxLength: MAX_QR_DATA }) }),
      },
    },
    async (request, reply) => {
      const { data } = request.query as { data: string };
      let svg: string;
      try {
        svg = await QRCode.toString(data, { type: "svg", errorCorrectionLevel: "L", margin: 2 });
      } catch {
        throw new HttpError(400, "invalid_request", "data does not fit in a QR code");
      }
      return reply.type("image/svg+xml").header("cache-control", "no-store").send(svg);
    },
  );
}
