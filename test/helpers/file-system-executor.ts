import type { Executor, ExecutorFileSystem } from '../../src/executors/executor.js';

/**
 * An executor that offers only a file system, for testing file tools. Running a command
 * rejects with "not supported", so a test notices when a file tool tries to use the shell.
 * @param fileSystem the file system the tools will use
 * @param name executor name reported to tools
 */
export function createFileSystemExecutor(fileSystem: ExecutorFileSystem, name = 'test-files'): Executor {
  return {
    name,
    kind: 'virtual',
    fs: fileSystem,
    async run() {
      throw new Error(`running commands is not supported by the ${name} test executor`);
    },
    async close() {},
  };
}
