// The prod overlay's NATS hardening, exercised on nats-servers of the test's own: TLS for clients (NATS_TLS_CA) and
// routes with the overlay's own tls.conf and cluster-tls.conf, a configuration reload that lets a new user in
// without dropping a connection, and lame-duck mode (what the StatefulSet's preStop sends) warning clients first.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually, freePort, REPO_ROOT } from "@humanpass/testing";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { connectNats } from "../src/index.ts";

const logger = pino({ level: "silent" });
let dir: string;
const running: ChildProcess[] = [];
const open: NatsConnection[] = [];

/** A nats-server on `conf` (written to a file of its own); resolves once it accepts connections on `port`. */
async function startServer(name: string, conf: string, port: number): Promise<ChildProcess> {
  const file = path.join(dir, `${name}.conf`);
  writeFileSync(file, conf);
  const server = spawn("nats-server", ["-c", file], { stdio: "ignore" });
  running.push(server);
  await eventually(async () => {
    if (server.exitCode !== null) throw new Error(`nats-server exited with ${server.exitCode} on ${file}`);
    return new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: "127.0.0.1", port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  });
  return server;
}

/** Every status event of a connection, as the services' status watch sees them. */
function statusesOf(nc: NatsConnection): string[] {
  const seen: string[] = [];
  (async () => {
    for await (const status of nc.status()) seen.push(status.type);
  })().catch(() => {});
  return seen;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "nats-hardening-"));
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((nc) => nc.close().catch(() => {})));
  await Promise.all(
    running.splice(0).map(async (server) => {
      if (server.exitCode !== null) return;
      server.kill("SIGKILL");
      await once(server, "exit");
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("TLS as the prod overlay configures it", () => {
  const caFile = () => path.join(dir, "ca.crt");

  /** The overlay's tls.conf and cluster-tls.conf, reading the certificate files from the test's folder. */
  function overlayTls(): { client: string; routes: string } {
    const patch = parseAllDocuments(
      readFileSync(path.join(REPO_ROOT, "deploy/k8s/overlays/prod/nats-tls/nats.yaml"), "utf8"),
    )
      .map((d) => d.toJS())
      .find((d) => d.kind === "ConfigMap");
    const here = (text: string) => text.replaceAll("/etc/nats-tls/", `${dir}/`);
    return { client: here(patch.data["tls.conf"]), routes: here(patch.data["cluster-tls.conf"]) };
  }

  beforeAll(() => {
    // What cert-manager makes (certificates.yaml): a CA, and a node certificate for serving and for the routes.
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "1",
      "-subj",
      "/CN=test-nats-ca",
    );
    openssl("req", ...ec, "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=nats");
    writeFileSync(
      path.join(dir, "ext.cnf"),
      "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n",
    );
    openssl(
      "x509",
      "-req",
      "-in",
      "tls.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "1",
      "-extfile",
      "ext.cnf",
    );
  });

  it("lets a client holding the CA (NATS_TLS_CA) in, encrypted, and refuses one that does not", async () => {
    const port = await freePort();
    await startServer("tls", `port: ${port}\nhost: 127.0.0.1\n${overlayTls().client}`, port);
    const url = `nats://127.0.0.1:${port}`;

    const nc = await connectNats(url, logger, "tls-test", { tlsCaFile: caFile() });
    open.push(nc);
    await nc.rtt();
    expect(nc.info?.tls_required).toBe(true);

    await expect(connect({ servers: url, reconnect: false, tls: {} })).rejects.toThrow(/certificate/i);
  });

  it("routes the nodes to each other over TLS, each verifying the other's certificate", async () => {
    const { routes } = overlayTls();
    const [c1, c2, r1, r2, m1] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const node = (client: number, route: number, other: number, monitor?: number) =>
      `port: ${client}\nhost: 127.0.0.1\n${monitor ? `http_port: ${monitor}\n` : ""}cluster {\n  name: tls-test\n  host: 127.0.0.1\n  port: ${route}\n  routes: [nats://127.0.0.1:${other}]\n${routes}\n}\n`;
    await startServer("route-1", node(c1, r1, r2, m1), c1);
    await startServer("route-2", node(c2, r2, r1), c2);
    await eventually(async () => {
      const routez = (await (await fetch(`http://127.0.0.1:${m1}/routez`)).json()) as { num_routes: number };
      return routez.num_routes === 1;
    });
  });
});

describe("configuration reload", () => {
  const usersConf = (users: string[]) =>
    `authorization {\n  users: [\n${users.map((u) => `    { user: "${u}", password: "pw-${u}" }`).join("\n")}\n  ]\n}\n`;

  it("applies a changed configuration file on `nats-server --signal reload`: a new user gets in, an open connection stays", async () => {
    const port = await freePort();
    const pidFile = path.join(dir, "reload.pid");
    const base = `port: ${port}\nhost: 127.0.0.1\npid_file: "${pidFile}"\n`;
    const server = await startServer("reload", base + usersConf(["verifier"]), port);
    const url = `nats://127.0.0.1:${port}`;
    const existing = await connectNats(url, logger, "existing", { user: "verifier", pass: "pw-verifier" });
    open.push(existing);
    const statuses = statusesOf(existing);
    const serverId = existing.info?.server_id;
    const newcomer = () => connect({ servers: url, user: "webhooks", pass: "pw-webhooks", reconnect: false });
    await expect(newcomer()).rejects.toThrow(/authorization/i);

    // What an operator does after editing the ConfigMap (the kubelet updates the mounted file).
    writeFileSync(path.join(dir, "reload.conf"), base + usersConf(["verifier", "webhooks"]));
    execFileSync("nats-server", ["--signal", `reload=${pidFile}`]);

    const nc = await eventually(async () => newcomer().catch(() => undefined));
    open.push(nc);
    await nc.rtt();
    await existing.rtt();
    expect(existing.info?.server_id).toBe(serverId);
    expect(statuses).not.toContain("disconnect");
    expect(server.exitCode).toBeNull();
  });
});

describe("lame-duck mode (the StatefulSet's preStop)", () => {
  it("tells connected clients to move and takes no new one, while the open connections still work", async () => {
    const port = await freePort();
    const pidFile = path.join(dir, "ldm.pid");
    // The base's lame_duck_duration (30 s, nats-server's minimum); a grace period longer than this test.
    await startServer(
      "ldm",
      `port: ${port}\nhost: 127.0.0.1\npid_file: "${pidFile}"\nlame_duck_duration: 30s\nlame_duck_grace_period: 25s\n`,
      port,
    );
    const url = `nats://127.0.0.1:${port}`;
    const existing = await connect({ servers: url, reconnect: false });
    open.push(existing);
    const statuses = statusesOf(existing);

    execFileSync("nats-server", ["--signal", `ldm=${pidFile}`]);

    await eventually(async () => statuses.includes("ldm"));
    await expect(connect({ servers: url, reconnect: false })).rejects.toThrow();
    await existing.rtt();
  });
});
