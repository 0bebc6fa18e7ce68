/**
 * Project secrets (SPEC §9): stored encrypted in the platform database (namespace
 * `project_secrets`, AES-256-GCM, see `secret-cipher.ts`), decrypted into memory at start so
 * commands can receive them and every output can be redacted without a database read.
 */
import type { RecordStorage } from '../../storage/record-storage.js';
import { listAll } from '../projects/project-store.js';
import type { SecretCipher } from './secret-cipher.js';
import type { SecretRedactor } from './secret-redactor.js';

const SECRETS = 'project_secrets';

interface StoredSecret {
  projectId: string;
  name: string;
  /** `SecretCipher.encrypt` of the value, bound to `<projectId>/<name>`. */
  sealed: string;
  /** ms since the epoch. */
  updatedAt: number;
}

/** A secret as the store hands it out. */
export interface ProjectSecret {
  name: string;
  value: string;
  updatedAt: number;
}

/** Encrypted per-project secrets with a decrypted copy in memory. */
export class SecretStore {
  /** projectId → name → secret. */
  private readonly secrets = new Map<string, Map<string, ProjectSecret>>();

  private constructor(
    private readonly records: RecordStorage,
    private readonly cipher: SecretCipher,
    private readonly redactor: SecretRedactor,
  ) {}

  /**
   * Declares the namespace and decrypts every stored secret.
   * @throws SecretDecryptionError naming the secret when one cannot be decrypted (a lost or replaced `secrets.key`)
   */
  static async open(records: RecordStorage, cipher: SecretCipher, redactor: SecretRedactor): Promise<SecretStore> {
    records.defineNamespace({ name: SECRETS, filterFields: ['projectId'] });
    const store = new SecretStore(records, cipher, redactor);
    for (const stored of await listAll<StoredSecret>(records, SECRETS)) {
      const value = cipher.decrypt(stored.sealed, secretKey(stored.projectId, stored.name));
      store.projectMap(stored.projectId).set(stored.name, { name: stored.name, value, updatedAt: stored.updatedAt });
    }
    store.refreshRedactor();
    return store;
  }

  /** A project's secrets, by name. */
  list(projectId: string): ProjectSecret[] {
    return [...(this.secrets.get(projectId)?.values() ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A project's secrets as environment variables (name → value). */
  environment(projectId: string): Map<string, string> {
    return new Map(this.list(projectId).map((secret) => [secret.name, secret.value]));
  }

  /** Stores (encrypted) and remembers a secret; redaction covers it from now on. */
  async set(projectId: string, name: string, value: string): Promise<void> {
    const updatedAt = Date.now();
    // The redactor learns the value before anything could echo it.
    const previous = this.secrets.get(projectId)?.get(name);
    this.projectMap(projectId).set(name, { name, value, updatedAt });
    this.refreshRedactor();
    try {
      await this.records.set<StoredSecret>(SECRETS, secretKey(projectId, name), { projectId, name, sealed: this.cipher.encrypt(value, secretKey(projectId, name)), updatedAt }, updatedAt);
    } catch (error) {
      if (previous) this.projectMap(projectId).set(name, previous);
      else this.secrets.get(projectId)?.delete(name);
      this.refreshRedactor();
      throw error;
    }
  }

  /** Removes a secret; returns whether it existed. */
  async remove(projectId: string, name: string): Promise<boolean> {
    const existing = this.secrets.get(projectId)?.get(name);
    if (!existing) return false;
    await this.records.delete(SECRETS, secretKey(projectId, name));
    this.secrets.get(projectId)?.delete(name);
    // The removed value stays redacted: transcripts written while it was set may quote it.
    this.retired.add(existing.value);
    this.refreshRedactor();
    return true;
  }

  /** Removes every secret of a project (project deletion). */
  async removeProject(projectId: string): Promise<void> {
    for (const secret of this.list(projectId)) await this.remove(projectId, secret.name);
    this.secrets.delete(projectId);
  }

  /** Values of removed secrets, still redacted until the server stops. */
  private readonly retired = new Set<string>();

  private refreshRedactor(): void {
    const values = [...this.secrets.values()].flatMap((secrets) => [...secrets.values()].map((secret) => secret.value));
    this.redactor.setValues([...values, ...this.retired]);
  }

  private projectMap(projectId: string): Map<string, ProjectSecret> {
    let secrets = this.secrets.get(projectId);
    if (!secrets) this.secrets.set(projectId, (secrets = new Map()));
    return secrets;
  }
}

function secretKey(projectId: string, name: string): string {
  return `${projectId}/${name}`;
}
