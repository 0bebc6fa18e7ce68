/**
 * FileLogStorage's in-memory states of its stream files (see `stream-state.ts` for what one
 * holds): loaded from a file's tail on first use, shared by the operations that ask at the
 * same time, and dropped when the file is replaced or deleted. Also where damage found in a
 * stream file is reported, once per problem and file (SPEC §4: damaged data is skipped and
 * reported, never thrown).
 */
import { notifyLogProblem } from '../log-problems.js';
import type { LogProblem, LogProblemListener } from '../log-storage.js';
import type { FileHandlePool, FileLease } from './file-handle-pool.js';
import { descriptorSize } from './file-io.js';
import { countLinesBefore, inspectStreamFile, type StreamState } from './stream-state.js';

/** Where a problem was found, and the problems of that file reported already (`kind@offset`). */
export interface ProblemLocation {
  path: string;
  stream: string;
  filePath: string;
  reported: Set<string>;
}

/** A state being read from a stream file, through descriptor `fd`. */
interface LoadInProgress {
  fd: number;
  state: Promise<StreamState>;
}

/** The cached states of the stream files of one FileLogStorage, keyed by absolute file path. */
export class StreamStateCache {
  private readonly states = new Map<string, StreamState>();
  /** Problems reported for damaged files whose state was released (see {@link release}). */
  private readonly reportedBefore = new Map<string, Set<string>>();
  /** Loads in progress: a caller joins only a load through its own descriptor (another may be the replaced file's). */
  private readonly loading = new Map<string, LoadInProgress>();

  /**
   * @param handles the pool the leases come from (a state is cached only while its lease's
   *   descriptor is still the pool's current one for the file)
   * @param onProblem receives torn tails and corrupt lines
   */
  constructor(
    private readonly handles: Pick<FileHandlePool, 'isCurrent'>,
    private readonly onProblem: LogProblemListener,
  ) {}

  /**
   * The cached state of a stream, loaded from the file's tail on first use. A state read
   * through a descriptor whose file was deleted meanwhile is used once but not cached, so
   * a recreated file never inherits it.
   * @param lease an open lease on `filePath`, held by the caller until the state is used
   * @throws (as a rejection) the read error of the file; nothing is cached then
   */
  stateFor(path: string, stream: string, filePath: string, lease: FileLease): Promise<StreamState> {
    const cached = this.states.get(filePath);
    if (cached !== undefined) return Promise.resolve(cached);
    const fd = lease.fd;
    const inProgress = this.loading.get(filePath);
    if (inProgress !== undefined && inProgress.fd === fd) return inProgress.state;
    const loading: LoadInProgress = { fd, state: this.load(path, stream, filePath, lease, () => this.loading.get(filePath) === loading) };
    this.loading.set(filePath, loading);
    loading.state.catch(() => {
      if (this.loading.get(filePath) === loading) this.loading.delete(filePath);
    });
    return loading.state;
  }

  /** Reads a stream's state through the lease; caches it if the load is still the file's latest (`isLatest`) and the lease's descriptor still the pool's. */
  private async load(path: string, stream: string, filePath: string, lease: FileLease, isLatest: () => boolean): Promise<StreamState> {
    const fd = lease.fd;
    const size = await descriptorSize(fd);
    const reported = this.reportedBefore.get(filePath) ?? new Set<string>();
    const state = await inspectStreamFile(fd, size, { path, stream, filePath }, (kind, offset, message) =>
      this.report({ path, stream, filePath, reported }, fd, kind, offset, message),
    );
    for (const id of reported) state.reported.add(id);
    if (isLatest()) {
      this.loading.delete(filePath);
      if (this.handles.isCurrent(lease)) {
        this.states.set(filePath, state);
        this.reportedBefore.delete(filePath);
      }
    }
    return state;
  }

  /**
   * Tells `onProblem` about a problem at byte `offset` of a stream file, unless it was told
   * already. A corrupt line's location gives its line number (1-based, counted by reading
   * the file up to it) as well as the offset.
   */
  async report(where: ProblemLocation, fd: number, kind: LogProblem['kind'], offset: number, message: string): Promise<void> {
    const id = `${kind}@${offset}`;
    if (where.reported.has(id)) return;
    where.reported.add(id);
    let location = `${where.filePath}, byte offset ${offset}`;
    if (kind === 'corrupt_line') {
      const line = await countLinesBefore(fd, offset).then((count) => String(count + 1), () => 'unknown');
      location = `${where.filePath}, line ${line} (byte offset ${offset})`;
    }
    notifyLogProblem(this.onProblem, { path: where.path, stream: where.stream, kind, location, message });
  }

  /**
   * Drops the cached state of a file that was not changed behind it (its descriptor left the
   * pool); the next use reads its tail again. The problems already reported for it are kept
   * (only for a damaged file, so what is kept stays small), so reading it again does not report
   * them a second time.
   */
  release(filePath: string): void {
    const state = this.states.get(filePath);
    if (state === undefined) return;
    this.states.delete(filePath);
    if (state.reported.size > 0) this.reportedBefore.set(filePath, state.reported);
  }

  /** Drops the state of a file (cached or loading), so the next use reads the file again. */
  forget(filePath: string): void {
    this.states.delete(filePath);
    this.loading.delete(filePath);
    this.reportedBefore.delete(filePath);
  }

  /** The files whose state is cached. */
  cachedFiles(): string[] {
    return [...this.states.keys()];
  }

  /** Drops every cached state. */
  clear(): void {
    this.states.clear();
    this.reportedBefore.clear();
  }
}
