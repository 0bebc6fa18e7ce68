/**
 * A platform-mode runtime server for tests (docs/platform.md): a fresh test environment whose
 * `server.yaml` turns the platform on and trusts 127.0.0.1 as a proxy (so each test browser can
 * pose as its own client address), started on a free loopback port with a web root.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger } from '../../src/logger.js';
import { startRuntimeServer, type RunningServer } from '../../src/server/runtime-server.js';
import { createTestEnvironment, type TestEnvironment } from '../helpers/environment.js';
import { writeWebFixture } from '../helpers/web-fixture.js';

/** A started platform server and its environment. */
export interface PlatformServer {
  environment: TestEnvironment;
  server: RunningServer;
  /** Stops the server and removes the environment. */
  stop(): Promise<void>;
}

/**
 * Starts a platform-mode server.
 * @param platformYaml extra lines of the `platform:` section, each indented by two spaces
 */
export async function startPlatformServer(platformYaml = ''): Promise<PlatformServer> {
  const environment = await createTestEnvironment('responses: []\n');
  writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), `platform:\n  enabled: true\n  trustedProxies: [127.0.0.1]\n${platformYaml}`);
  const server = await startRuntimeServer({ paths: environment.paths, port: 0, logger: createLogger('silent'), webRoot: writeWebFixture(path.join(environment.root, 'www')) });
  return {
    environment,
    server,
    stop: async () => {
      await server.stop();
      await environment.dispose();
    },
  };
}
