import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server (Redis, say) whose link a test can cut and mend: `cut()` drops every connection
 * through it and refuses new ones, as a network partition would, while the server itself keeps its data; `mend()` lets
 * connections through again. With `delayMs`, every byte takes that long each way (a far link), in order.
 */
export interface CuttableProxy {
  url: string;
  cut(): void;
  mend(): void;
  close(): Promise<void>;
}

export async function startCuttableProxy(
  target: { host: string; port: number },
  scheme: string,
  delayMs = 0,
): Promise<CuttableProxy> {
  const sockets = new Set<Socket>();
  let open = true;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    track(upstream);
    const relay = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (delayMs === 0) to.write(chunk);
        else setTimeout(() => to.destroyed || to.write(chunk), delayMs);
      });
    relay(client, upstream);
    relay(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    mend: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
