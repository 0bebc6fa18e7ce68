/**
 * Compiles parts of `src/` to plain JavaScript (type stripping only) for child processes of
 * the crash tests, so they run against the current sources whether or not a build exists.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const sourceRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/**
 * Transpiles every `.ts` file under the given folders of `src/` (e.g. `['storage', 'dao']`), and the
 * small modules at the top of `src/`,
 * into `outputDirectory`, keeping the layout, and links the project's `node_modules` there so
 * packages resolve. Returns the file URL of a compiled module, given its path under `src/`.
 */
export function transpileSources(folders: string[], outputDirectory: string): (modulePath: string) => string {
  const walk = (directory: string): string[] =>
    fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(path.join(directory, entry.name)) : entry.name.endsWith('.ts') ? [path.join(directory, entry.name)] : [],
    );
  // The small modules at the top of src/ (directory creation, ids…) are shared by every layer: always included.
  const shared = fs.readdirSync(sourceRoot).filter((name) => name.endsWith('.ts')).map((name) => path.join(sourceRoot, name));
  for (const sources of [shared, ...folders.map((folder) => walk(path.join(sourceRoot, folder)))]) {
    for (const source of sources) {
      const output = ts.transpileModule(fs.readFileSync(source, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        fileName: source,
      });
      const target = path.join(outputDirectory, path.relative(sourceRoot, source)).replace(/\.ts$/, '.js');
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, output.outputText);
    }
  }
  fs.writeFileSync(path.join(outputDirectory, 'package.json'), '{"type":"module"}\n');
  const modules = path.join(outputDirectory, 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(sourceRoot, '..', 'node_modules'), modules, 'dir');
  return (modulePath) => pathToFileURL(path.join(outputDirectory, modulePath)).href;
}
