import net from "node:net";

/**
 * A TCP proxy the test controls, to cut a service off from Postgres or NATS without touching the real server.
 */
export class TcpProxy {
  private server?: net.Server;
  private sockets = new Set<net.Socket>();
  private pairs = new Set<[net.Socket, net.Socket]>();
  private accepting = true;
  port = 0;

  private targetHost: string;
  private targetPort: number;

  constructor(targetHost: string, targetPort: number) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
  }

  static forUrl(url: string): TcpProxy {
    const u = new URL(url);
    return new TcpProxy(u.hostname, Number(u.port));
  }

  async start(port = 0): Promise<this> {
    this.server = net.createServer((client) => {
      if (!this.accepting) {
        client.destroy();
        return;
      }
      const upstream = net.connect({ host: this.targetHost, port: this.targetPort });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      const pair: [net.Socket, net.Socket] = [client, upstream];
      this.pairs.add(pair);
      client.on("close", () => this.pairs.delete(pair));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
    return this;
  }

  /** Replaces the host:port of a URL with the proxy's. */
  url(original: string): string {
    const u = new URL(original);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  /** Drops every open connection and refuses new ones. */
  cut(): void {
    this.accepting = false;
    for (const s of this.sockets) s.destroy();
  }

  /**
   * Keeps the open connections open but stops forwarding on them, like a peer gone without a FIN or RST (a dropped
   * NAT entry, a frozen host); new connections are served as usual.
   */
  stall(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  restore(): void {
    this.accepting = true;
  }

  /**
   * Points the address clients use at another server, as a failover moves a service's DNS name or virtual IP to the
   * promoted standby: open connections are dropped, new ones reach the new target.
   */
  retarget(host: string, port: number): void {
    this.cut();
    this.targetHost = host;
    this.targetPort = port;
    this.restore();
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
