import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';

/** Resolves with the bound address (port 0 picks a free one); rejects on EADDRINUSE and the like. */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
